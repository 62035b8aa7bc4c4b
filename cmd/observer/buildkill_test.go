package main

import (
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/build/buildtest"
	"github.com/fediverse-observer/observer/fedisim"
)

// TestKilledBuildLeavesTheOldSiteOrTheNew kills `observer build` with
// SIGKILL at random moments, from before the derivation to after the swap,
// and checks that the output directory is then exactly the old site or
// exactly the new one, that nothing beside it looks like a site, and that
// the next build succeeds and gives the new site. Between the two sites the
// data (a pass that checked many more hosts, so the derivation has new
// snapshots to fold) and the content (a changed page, a removed and an
// added file) differ. OBSERVER_KILL_ITERATIONS sets how many builds are
// killed (24 by default), as for the crawl.
func TestKilledBuildLeavesTheOldSiteOrTheNew(t *testing.T) {
	s := newSimSite(t, fedisim.Config{})
	buildtest.WriteArchive(t, s.dir, `
-- observer.toml --
[site]
title = "Kill Test"
[crawl]
seeds = "seeds.txt"
concurrency = 8
discovered_checks = 0
[state]
warmup = "1h"
-- content/about.md --
---
title: About
---
The old about page.
-- static/gone.txt --
only in the old site
`)
	const buildAt = asOf
	data := s.data()
	for _, pass := range []struct {
		now   string
		extra []string
	}{
		{crawl1, nil},
		{crawl2, []string{"--max-checks", "60"}}, // the rest is left for the third pass
	} {
		if code, out, errs := s.crawl(t, pass.now, append([]string{"--isolation", "none"}, pass.extra...)...); code != exitOK && code != exitCutShort {
			t.Fatalf("crawl at %s: exit %d\n%s\n%s", pass.now, code, out, errs)
		}
	}
	refOld := filepath.Join(t.TempDir(), "public")
	if code, out, errs := runObserver(t, "build", "--quiet", "--config", s.config, "--data", data, "--out", refOld, "--now", buildAt); code != exitOK {
		t.Fatalf("old build: exit %d\n%s\n%s", code, out, errs)
	}
	oldSite := readTree(t, refOld)

	// The new site: a third pass and changed content. pristine is the data
	// directory as a build finds it, the third pass not yet derived.
	if code, out, errs := s.crawl(t, "2026-01-01T14:00:00Z", "--isolation", "none"); code != exitOK && code != exitCutShort {
		t.Fatalf("third crawl: exit %d\n%s\n%s", code, out, errs)
	}
	buildtest.WriteArchive(t, s.dir, `
-- content/about.md --
---
title: About
---
The new about page.
-- static/added.txt --
only in the new site
`)
	os.Remove(filepath.Join(s.dir, "static", "gone.txt"))
	pristine := filepath.Join(t.TempDir(), "data")
	copyTree(t, data, pristine)

	// work/ is where builds are killed: work/data a fresh copy of pristine
	// and work/public a copy of the old site, every iteration.
	work := filepath.Join(t.TempDir(), "work")
	reset := func() {
		t.Helper()
		if err := os.RemoveAll(work); err != nil {
			t.Fatal(err)
		}
		copyTree(t, pristine, filepath.Join(work, "data"))
		copyTree(t, refOld, filepath.Join(work, "public"))
	}
	public := filepath.Join(work, "public")
	args := []string{"build", "--quiet", "--config", s.config, "--data", filepath.Join(work, "data"), "--out", public, "--now", buildAt}

	// The new site, built twice by an unkilled process: the reference, and
	// how long a build takes, which bounds the moments of the kills.
	var took time.Duration
	var newSite map[string]string
	for range 2 {
		reset()
		cmd := observerProcess(t, args...)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("new build: %v\n%s", err, out)
		}
		took = max(took, time.Since(start))
		got := readTree(t, public)
		if newSite != nil && !maps.Equal(got, newSite) {
			t.Fatalf("two builds of the same data and content differ: %s", diffTree(newSite, got))
		}
		newSite = got
	}
	if maps.Equal(oldSite, newSite) {
		t.Fatal("the old and the new site are the same: the test would prove nothing")
	}
	for _, f := range []string{"live.txt", "about/index.html", "gone.txt", "added.txt"} {
		if oldSite[f] == newSite[f] {
			t.Fatalf("%s is the same in the old and the new site", f)
		}
	}
	t.Logf("an unkilled build takes up to %s; old site %d files, new %d", took.Round(time.Millisecond), len(oldSite), len(newSite))

	// Three kills in four come at moments spread evenly from the start to
	// 1.1 times an unkilled build's time, each at a random point in its
	// slot: the process start, the derivation, the rendering. The fourth
	// comes as soon as the output directory is seen swapped, while the
	// build removes the old site (a window too short for random moments to
	// hit often).
	rng := rand.New(rand.NewPCG(2, uint64(time.Now().UnixNano())))
	n := killIterations()
	atSwap := func(i int) bool { return i%4 == 3 }
	timed := 0
	for i := range n {
		if !atSwap(i) {
			timed++
		}
	}
	span := took * 11 / 10
	var sawOld, sawNew, finished, swapKills, stale, slot int
	for i := range n {
		reset()
		oldInode := inode(t, public)
		cmd := observerProcess(t, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		var when string
		swapped := false
		if atSwap(i) {
			// Poll until the swap (the output's inode changes) or a deadline.
			// Where the file system cannot exchange two names in one call,
			// the output is missing for an instant mid-swap: that counts.
			deadline := start.Add(2*took + 10*time.Second)
			var st syscall.Stat_t
			for syscall.Lstat(public, &st) == nil && st.Ino == oldInode && time.Now().Before(deadline) {
				runtime.Gosched()
			}
			cmd.Process.Signal(syscall.SIGKILL)
			swapped = time.Now().Before(deadline)
			when = "as the swap was seen, after " + time.Since(start).Round(time.Millisecond).String()
		} else {
			at := time.Duration((float64(slot) + rng.Float64()) / float64(timed) * float64(span))
			slot++
			time.Sleep(at)
			cmd.Process.Signal(syscall.SIGKILL)
			when = "after " + at.Round(time.Millisecond).String()
		}
		if err := cmd.Wait(); err == nil {
			finished++
		} else if atSwap(i) {
			swapKills++
		}

		if _, err := os.Lstat(public); err != nil {
			t.Fatalf("iteration %d, killed %s: the output is neither the old site nor the new one: %v", i, when, err)
		}
		got := readTree(t, public)
		switch {
		case maps.Equal(got, oldSite) && swapped:
			t.Fatalf("iteration %d, killed %s: the old site came back", i, when)
		case maps.Equal(got, oldSite):
			sawOld++
		case maps.Equal(got, newSite):
			sawNew++
		default:
			t.Fatalf("iteration %d, killed %s: %s is neither the old site (%s) nor the new one (%s)",
				i, when, public, diffTree(oldSite, got), diffTree(newSite, got))
		}
		leftovers := besideOutput(t, work)
		if len(leftovers) > 1 {
			t.Fatalf("iteration %d: more than one staging directory after one killed build: %v", i, leftovers)
		}
		stale += len(leftovers)

		// The next build runs, whatever the killed one left behind, and
		// its result is the new site.
		if code, out, errs := runObserver(t, args...); code != exitOK {
			t.Fatalf("iteration %d, killed %s: the next build: exit %d\n%s\n%s", i, when, code, out, errs)
		}
		if got := readTree(t, public); !maps.Equal(got, newSite) {
			t.Fatalf("iteration %d: the build after the kill is not the new site: %s", i, diffTree(newSite, got))
		}
		// It holds the output's lock, so whatever staging directory it
		// finds is the killed build's, and it removes it.
		if after := besideOutput(t, work); len(after) > 0 {
			t.Fatalf("iteration %d: the build after the kill left %v beside the output (before it: %v)", i, after, leftovers)
		}
	}
	t.Logf("%d builds killed: %d left the old site, %d the new one (%d of them had finished before the kill, %d were killed right after the swap); %d left a staging directory",
		n, sawOld, sawNew, finished, swapKills, stale)
	if n >= 10 && (sawOld == 0 || sawNew == 0) {
		t.Errorf("the kill moments missed part of the build: %d old sites, %d new ones", sawOld, sawNew)
	}
}

// inode is the inode number of path, which a swap changes.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return st.Ino
}

// besideOutput checks what is in the parent of a build's output and
// returns the staging directories left there, sorted. Only the data, the
// output, its lock file and staging directories (hidden, named
// .public.build-*) may be there.
func besideOutput(t *testing.T, parent string) []string {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var staging []string
	for _, e := range entries {
		switch name := e.Name(); {
		case name == "data" || name == ".public.lock":
		case name == "public":
			if !e.IsDir() {
				t.Fatalf("%s is a %s, not a directory", filepath.Join(parent, name), e.Type())
			}
		case strings.HasPrefix(name, ".public.build-") && e.IsDir():
			staging = append(staging, name)
		default:
			t.Fatalf("unexpected %s beside the output", filepath.Join(parent, name))
		}
	}
	sort.Strings(staging)
	return staging
}

// readTree reads every file under dir: slash path -> content. Anything but
// directories and regular files is an error.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			t.Errorf("%s is not a regular file (%s)", p, d.Type())
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		m[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	return m
}

// diffTree names the files that differ between want and got, a few at most.
func diffTree(want, got map[string]string) string {
	var d []string
	for k, v := range want {
		if w, ok := got[k]; !ok {
			d = append(d, k+" missing")
		} else if w != v {
			d = append(d, k+" differs")
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			d = append(d, k+" extra")
		}
	}
	sort.Strings(d)
	if len(d) > 8 {
		d = append(d[:8], "…")
	}
	return strings.Join(d, ", ")
}

// copyTree copies the directories and regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}
