package duck

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Go lists the data directory's files by reading its directories, never
// by pattern, so even a path that Open would refuse (it matches its
// siblings as a glob, or not itself) lists only its own files, and the
// derived files of a sibling are never collected as garbage.
func TestListingTakesTheDataDirectoryLiterally(t *testing.T) {
	base := t.TempDir()
	own := []string{
		"checks/date=2026-01-05/p0-00000.parquet",
		"derived/state-00000001.parquet",
		"derived/transitions/00000001.parquet",
	}
	// site*x matches "site x" and siteAx; site[1] matches site1, not itself.
	for _, name := range []string{"site*x", "site x", "siteAx", "site[1]", "site1"} {
		for _, f := range own {
			p := filepath.Join(base, name, "data", filepath.FromSlash(f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, name := range []string{"site*x", "site[1]"} {
		s := newStore(&core{dir: filepath.Join(base, name, "data"), log: slog.New(slog.DiscardHandler)})
		files, err := s.listSnapshots(ChecksDir)
		if err != nil || !slices.Equal(files, own[:1]) {
			t.Fatalf("%s: checks = %q, %v", name, files, err)
		}
		if ok, err := s.hasFiles(ChecksDir); !ok || err != nil {
			t.Fatalf("%s: hasFiles = %v, %v", name, ok, err)
		}
		// A newer generation in force: this directory's older files go,
		// and nobody else's.
		s.Deriver.collectGarbage(&manifest{Generation: 2, State: "state-00000002.parquet"})
		for _, other := range []string{"site*x", "site x", "siteAx", "site[1]", "site1"} {
			for _, f := range own[1:] {
				_, err := os.Stat(filepath.Join(base, other, "data", filepath.FromSlash(f)))
				if gone := os.IsNotExist(err); gone != (other == name) {
					t.Fatalf("collecting the garbage of %s: %s of %s gone = %v", name, f, other, gone)
				}
			}
		}
		// Put them back for the next directory.
		for _, f := range own[1:] {
			if err := os.WriteFile(filepath.Join(s.dir, filepath.FromSlash(f)), []byte(name), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
