package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/fedisim"
	"github.com/fediverse-observer/observer/sandbox"
)

// A crawl creates a missing data directory (the first pass of a new
// observer) and says so, since a --data or working directory other than the
// usual one would otherwise start a second observer from nothing unseen.
func TestCrawlSaysItCreatedTheDataDirectory(t *testing.T) {
	s := newSimSite(t, fedisim.Config{})
	data := filepath.Join(s.dir, "new", "data")
	run := func() string {
		t.Helper()
		// --quiet, as from cron: the line is a warning.
		args := append([]string{"crawl", "--quiet", "--config", s.config, "--data", data, "--now", "2026-01-01T00:00:00Z", "--max-checks", "1"}, s.net...)
		code, out, errs := runObserver(t, args...)
		if code != exitOK && code != exitCutShort {
			t.Fatalf("exit %d\n%s\n%s", code, out, errs)
		}
		return errs
	}
	if errs := run(); !strings.Contains(errs, "created the data directory") || !strings.Contains(errs, data) {
		t.Errorf("first crawl into a new directory does not say it created it:\n%s", errs)
	}
	if errs := run(); strings.Contains(errs, "created the data directory") {
		t.Errorf("second crawl says it created the directory:\n%s", errs)
	}
}

// A --data that crawl cannot create is refused saying why, as sql and add
// say it: crawl, which creates a missing data directory, said only "mkdir
// ...: file exists" of a symbolic link in a loop or to nothing.
func TestCrawlSaysWhyItCannotCreateTheDataDirectory(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "observer.toml")
	if err := os.WriteFile(config, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	loop := filepath.Join(dir, "loop")
	dangling := filepath.Join(dir, "dangling")
	for link, target := range map[string]string{loop: "loop", dangling: "missing"} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ data, want string }{
		{loop, "data directory " + loop + ": stat " + loop + ": too many levels of symbolic links"},
		{filepath.Join(loop, "data"), "too many levels of symbolic links"},
		{dangling, "data directory " + dangling + ": a symbolic link to missing, which does not exist"},
		{filepath.Join(dangling, "data"), dangling + " is a symbolic link to missing, which does not exist"},
	} {
		code, _, errs := runObserver(t, "crawl", "--data", c.data, "--config", config, "--isolation", "none")
		if code != exitFailure || !strings.Contains(errs, c.want) || strings.Contains(errs, "file exists") {
			t.Errorf("--data %s: exit %d, stderr %q; want exit %d saying %q", c.data, code, errs, exitFailure, c.want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "missing")); err == nil {
		t.Error("crawl created the dangling link's target")
	}
}

// The seed list is read and checked before the data directory is created:
// a first run with a bad one used to create it (and warn that this
// observer starts from nothing) and only then fail, and a seed list that
// is a directory was said to fail "after line 0".
func TestCrawlChecksTheSeedListBeforeCreatingAnything(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "observer.toml")
	if err := os.WriteFile(config, []byte("[crawl]\nseeds = \"seeds\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	seeds := filepath.Join(dir, "seeds")
	data := filepath.Join(dir, "data")
	for _, c := range []struct {
		make func() error
		want string
	}{
		{func() error { return os.Mkdir(seeds, 0o755) }, "seed list " + seeds + ": is a directory"},
		{func() error { return os.WriteFile(seeds, []byte("a.social\nnot a host\n"), 0o644) }, "seed list " + seeds + ": line 2: "},
	} {
		os.RemoveAll(seeds)
		if err := c.make(); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runObserver(t, "crawl", "--data", data, "--config", config, "--isolation", "none")
		if code != exitFailure || !strings.Contains(errs, c.want) || strings.Contains(errs, "after line") || strings.Contains(errs, "created the data directory") {
			t.Errorf("exit %d, stderr %q; want exit %d saying only %q", code, errs, exitFailure, c.want)
		}
		if _, err := os.Lstat(data); err == nil {
			t.Fatal("a crawl with a bad seed list created the data directory")
		}
	}
}

// The cap on new hosts per peers list is the most a sandboxed checker's
// result carries.
func TestMaxNewPerListLimitIsWhatACheckerCarries(t *testing.T) {
	if config.MaxNewPerListLimit != sandbox.MaxDiscoveries {
		t.Fatalf("config.MaxNewPerListLimit = %d, sandbox.MaxDiscoveries = %d", config.MaxNewPerListLimit, sandbox.MaxDiscoveries)
	}
}

// crawl.max_new_per_list and crawl.max_new_per_pass bound what a pass
// records in both isolation modes, and the passes view counts what they
// dropped.
func TestCrawlCapsNewHosts(t *testing.T) {
	for _, iso := range []string{"process", "none"} {
		t.Run(iso, func(t *testing.T) {
			s := newSimSite(t, fedisim.Config{})
			if err := os.WriteFile(s.config, []byte("[crawl]\nseeds = \"seeds.txt\"\nconcurrency = 4\nmax_new_per_list = 5\nmax_new_per_pass = 12\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, out, errs := s.crawl(t, "2026-01-01T00:00:00Z", "--isolation", iso); code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, out, errs)
			}
			got := s.query(t, "SELECT discovered, over_list_cap > 0, over_pass_cap >= 0 FROM passes")
			if len(got) != 1 || got[0] != "12 true true" {
				t.Errorf("passes discovered, over list cap, over pass cap: %q, want 12 new hosts and the list cap's drops counted", got)
			}
			if got := s.query(t, "SELECT count(*) FROM checks WHERE new_peers_count > 5"); got[0] != "0" {
				t.Errorf("%s checks kept more than 5 new peers", got[0])
			}
			if got := s.query(t, "SELECT count(*) FROM discoveries WHERE via <> 'seed'"); got[0] != "12" {
				t.Errorf("%s hosts discovered, want the pass cap's 12", got[0])
			}
		})
	}
}
