package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/build/buildtest"
)

// build and serve replace --out as a whole: pointed at the data, the site's
// content or the site itself, they must refuse before touching anything,
// lock files included.
func TestOutputOverInputsIsRefused(t *testing.T) {
	s := bareSite(t)
	buildtest.WriteArchive(t, s.dir, `
-- content/about.md --
---
title: About
---
Text
-- data/checks/date=2026-11-21/a.parquet --
snapshot
`)
	// And a directory the build did not write: a mistyped --out (/etc, the
	// simulated fediverse's folder of seeds and CA) would be deleted.
	notes := filepath.Join(t.TempDir(), "notes")
	buildtest.WriteArchive(t, notes, `
-- seeds.txt --
a.example
`)
	for _, out := range []string{s.data(), filepath.Join(s.dir, "content"), s.dir, filepath.Dir(s.dir), s.config, notes} {
		for _, cmd := range []string{"build", "serve"} {
			code, _, errs := runObserver(t, cmd, "--config", s.config, "--data", s.data(), "--out", out, "--now", asOf)
			if code != exitUsage || !strings.Contains(errs, "-out") || !strings.Contains(errs, out) {
				t.Errorf("%s --out %s: exit %d, stderr %q; want a usage error naming it", cmd, out, code, errs)
			}
		}
	}
	// Inside the data directory too: the site would be mixed into the data.
	inData := filepath.Join(s.data(), "site")
	code, _, errs := runObserver(t, "build", "--config", s.config, "--data", s.data(), "--out", inData, "--now", asOf)
	if code != exitUsage || !strings.Contains(errs, "-out") || !strings.Contains(errs, inData) {
		t.Errorf("build --out %s: exit %d, stderr %q; want a usage error naming it", inData, code, errs)
	}
	if _, err := os.Stat(inData); err == nil {
		t.Errorf("a refused build wrote %s", inData)
	}
	if _, err := os.Stat(filepath.Join(notes, "seeds.txt")); err != nil {
		t.Errorf("the notes: %v", err)
	}
	for _, f := range []string{"observer.toml", "content/about.md", "data/checks/date=2026-11-21/a.parquet"} {
		if _, err := os.Stat(filepath.Join(s.dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(s.dir, ".*"))
	more, _ := filepath.Glob(filepath.Join(filepath.Dir(s.dir), ".*.lock"))
	if len(leftovers)+len(more) > 0 {
		t.Errorf("refused builds left %v %v", leftovers, more)
	}
}
