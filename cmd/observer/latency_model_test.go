package main

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// modelTestRun is a small run of the model: a thousand instances, five
// simulated days, three passes a day; the observer's warmup a day, and
// the births after it measured. Two runs of it repeat each other to the
// check, which the benchmark's do not (32 checks at once, dated by the
// wall clock, the hosts they discover checked in the same pass, the build
// after the pass's wall time): one check at a time, in the due list's
// order, dated a millisecond apart, the hosts discovered left to the next
// pass, each build a minute after its pass.
func modelTestRun(t *testing.T, dir string) modelRun {
	config := strings.Replace(latencyConfig(), "concurrency = 32\n", "concurrency = 1\ndiscovered_checks = 0\n", 1) + "[state]\nwarmup = \"24h\"\n"
	if !strings.Contains(config, "concurrency = 1\n") {
		t.Fatalf("the test's config does not set one check at a time:\n%s", config)
	}
	return modelRun{instances: 1000, days: 5, every: 8 * time.Hour, config: config, dir: dir, buildDelay: time.Minute, stepped: true, warm: 24 * time.Hour}
}

// A model run stopped after a day's checkpoint, then killed in the middle
// of the next day, then resumed from its directory measures what a run
// without a stop measures: the same listings at the same times under the
// same ids, and the same figures (latency, checks by state, peers bytes
// and 304s, passes), said to be of two segments (the killed one's work
// was lost and done again). The files of the
// checkpoint the resumed segments started from are as they were when it
// was written, though the run has gone on over their links.
func TestModelRunResumes(t *testing.T) {
	whole := runModelWorld(t, modelTestRun(t, ""))
	if !whole.finished || len(whole.listedAt) < 10 || whole.figures.checksPerDay == 0 || whole.figures.peersPerDay == 0 || whole.figures.passes != 15 || whole.figures.listed == 0 {
		t.Fatalf("the run without a stop measured too little to compare: %d listed, %+v", len(whole.listedAt), whole.figures)
	}

	dir := t.TempDir()
	m := modelTestRun(t, dir)
	m.stopAfterDay = 2
	if got := runModelWorld(t, m); got.finished {
		t.Fatal("a run stopped after day 2 says it finished")
	}
	newest, _, err := checkpoints(dir)
	if err != nil || filepath.Base(newest) != checkpointPrefix+"0002" {
		t.Fatalf("after day 2 the newest checkpoint is %q (%v)", newest, err)
	}
	held := filepath.Join(t.TempDir(), "held")
	before := holdFiles(t, newest, held)

	m.stopAfterDay, m.stopAfterPasses = 0, 2
	runModelWorld(t, m)
	m.stopAfterPasses = 0
	resumed := runModelWorld(t, m)

	if !resumed.finished {
		t.Fatal("the resumed run did not finish")
	}
	if len(resumed.listedAt) != len(whole.listedAt) {
		t.Errorf("resumed: %d hosts listed, without a stop %d", len(resumed.listedAt), len(whole.listedAt))
	}
	for host, at := range whole.listedAt {
		if got, ok := resumed.listedAt[host]; !ok || !got.Equal(at) {
			t.Errorf("%s first listed at %s without a stop, resumed at %s (listed: %v)", host, at, got, ok)
		}
	}
	if !reflect.DeepEqual(resumed.ids, whole.ids) {
		t.Errorf("ids differ:\nresumed %v\nwhole   %v", resumed.ids, whole.ids)
	}
	// The killed segment's work was done again: it is not one of them.
	if g := resumed.figures.segments; g != 2 {
		t.Errorf("the resumed run counts %d segments, want 2", g)
	}
	if s := resumed.figures.String(); !strings.Contains(s, "resumed: 2 segments") {
		t.Errorf("the resumed run's figures do not say it was resumed:\n%s", s)
	}
	a, b := whole.figures, resumed.figures
	a.wall, b.wall, a.segments, b.segments = 0, 0, 0, 0
	a.earlier, b.earlier = simCounts{}, simCounts{}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("figures differ:\nresumed:\n%s\nwithout a stop:\n%s\n(%+v\n%+v)", b.String(), a.String(), b, a)
	}

	if after := fileSums(t, held); !reflect.DeepEqual(after, before) {
		t.Errorf("the checkpoint's files changed while the run went on:\nbefore %v\nafter  %v", before, after)
	}
}

// A run killed after a checkpoint leaves its later passes' files in the
// site; restoring the checkpoint leaves exactly the checkpoint's files
// (the same files, linked), and its progress.
func TestModelRestoreDropsWhatAKilledRunLeft(t *testing.T) {
	dir := t.TempDir()
	m := modelTestRun(t, dir)
	m.stopAfterDay = 1
	runModelWorld(t, m)
	newest, _, err := checkpoints(dir)
	if err != nil || newest == "" {
		t.Fatalf("no checkpoint after day 1 (%v)", err)
	}
	m.stopAfterDay, m.stopAfterPasses = 0, 2
	killed := runModelWorld(t, m)
	if killed.finished {
		t.Fatal("a run stopped after two passes says it finished")
	}
	site := filepath.Join(dir, "site")
	ckpt := filepath.Join(newest, "site")
	if extra := beyond(t, site, ckpt); len(extra) == 0 {
		t.Fatal("the killed run left no file beyond the checkpoint: nothing to restore")
	}

	p := modelProgress{Instances: m.instances, Seed: modelSeed, Every: m.every.String(), Config: m.config}
	resumed, err := restoreModel(dir, &p)
	if err != nil || !resumed {
		t.Fatalf("restore: %v, %v", resumed, err)
	}
	if extra := beyond(t, site, ckpt); len(extra) > 0 {
		t.Errorf("restored, the site still holds %v", extra)
	}
	if missing := beyond(t, ckpt, site); len(missing) > 0 {
		t.Errorf("restored, the site lacks %v", missing)
	}
	filepath.WalkDir(ckpt, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(ckpt, path)
		a, err1 := os.Stat(path)
		b, err2 := os.Stat(filepath.Join(site, rel))
		if err1 != nil || err2 != nil {
			t.Errorf("%s: %v %v", rel, err1, err2)
			return nil
		}
		if linked := os.SameFile(a, b); linked == inPlace(d.Name()) {
			t.Errorf("%s: restored as a link: %v, want %v", rel, linked, !inPlace(d.Name()))
		}
		return nil
	})
	if day0 := time.Date(p.Next.Year(), p.Next.Month(), p.Next.Day(), 0, 0, 0, 0, time.UTC); p.Day != 1 || p.Passes != 3 || !p.Next.Equal(day0) {
		t.Errorf("restored progress: day %d, %d passes, next %s; want day 1, 3 passes, the next at midnight", p.Day, p.Passes, p.Next)
	}
}

// A checkpoint of a run with other settings is refused with one message
// naming the directory and each difference, and left as it is.
func TestModelCheckpointOfAnotherRunIsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "site", "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "site", "data", "seeds.txt"), []byte("a.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	theirs := modelProgress{Instances: 300, Seed: modelSeed, Every: "6h0m0s", Config: "[crawl]\n", Day: 3, Segments: 1}
	if err := checkpointModel(dir, theirs); err != nil {
		t.Fatal(err)
	}
	ours := modelProgress{Instances: 1000, Seed: modelSeed, Every: "2h0m0s", Config: "[crawl]\n"}
	resumed, err := restoreModel(dir, &ours)
	if err == nil || resumed {
		t.Fatalf("a checkpoint of 300 instances restored for a run of 1000 (resumed %v)", resumed)
	}
	for _, want := range []string{dir, checkpointPrefix + "0003", "300 instances, not 1000", "a pass every 6h0m0s, not 2h0m0s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "observer.toml") {
		t.Errorf("the refusal %q names the config, which is the same", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, checkpointPrefix+"0003", "site", "data", "seeds.txt")); err != nil || string(b) != "a.example\n" {
		t.Errorf("the refused checkpoint's file: %q, %v", b, err)
	}
}

// holdFiles links every file under from into to, so that they outlive
// from, and returns their sums.
func holdFiles(t *testing.T, from, to string) map[string][32]byte {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		return os.Link(path, filepath.Join(to, rel))
	})
	if err != nil {
		t.Fatal(err)
	}
	return fileSums(t, to)
}

// fileSums is the SHA-256 of each file under dir, by its path there.
func fileSums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	sums := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		sums[rel] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) == 0 {
		t.Fatalf("no files under %s", dir)
	}
	return sums
}

// beyond lists the files under dir that are not under ref, data/tmp's
// apart.
func beyond(t *testing.T, dir, ref string) []string {
	t.Helper()
	var extra []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if strings.HasPrefix(rel, filepath.Join("data", "tmp")+string(filepath.Separator)) {
			return nil
		}
		if _, err := os.Stat(filepath.Join(ref, rel)); err != nil {
			extra = append(extra, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return extra
}
