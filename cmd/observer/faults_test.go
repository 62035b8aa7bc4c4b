package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/fedisim"
)

// mountTmpfs mounts a small tmpfs at dir: a real file system that fills up
// or turns read-only, which root's permission bypass would otherwise hide.
// Mounting needs root, which CI has.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs (CI runs as root)")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
}

func TestDiskFullFailsClearlyAndKeepsWhatWasFlushed(t *testing.T) {
	s := newSimSite(t, fedisim.Config{Instances: 2000})
	data := filepath.Join(s.dir, "data")
	os.MkdirAll(data, 0o755)
	mountTmpfs(t, data, "160k")

	if code, out, errs := s.crawl(t, "2026-01-01T00:00:00Z"); code != exitOK {
		t.Fatalf("seed pass: %d\n%s\n%s", code, out, errs)
	}
	code, _, errs := s.crawl(t, "2026-01-01T01:00:00Z", "--flush-checks", "5", "--isolation", "none")
	if code != exitFailure || !strings.Contains(strings.ToLower(errs), "no space left on device") {
		t.Fatalf("exit %d, stderr %q; want a failure saying the disk is full", code, errs)
	}
	if n := strings.Count(strings.TrimSpace(errs), "\n"); n > 3 {
		t.Errorf("want a short error, got %d lines:\n%s", n+1, errs)
	}
	// Everything flushed before the disk filled reads back.
	if n := s.countChecks(t); n < 3 {
		t.Fatalf("flushed checks lost: %d on disk", n)
	}
}

func TestReadOnlyDataDirFailsClearlyAndChangesNothing(t *testing.T) {
	s := newSimSite(t, fedisim.Config{})
	data := filepath.Join(s.dir, "data")
	os.MkdirAll(data, 0o755)
	mountTmpfs(t, data, "8m")
	if code, out, errs := s.crawl(t, "2026-01-01T00:00:00Z"); code != exitOK {
		t.Fatalf("seed pass: %d\n%s\n%s", code, out, errs)
	}
	before := s.countChecks(t)
	if out, err := exec.Command("mount", "-o", "remount,ro", data).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v: %s", err, out)
	}
	code, _, errs := s.crawl(t, "2026-01-01T01:00:00Z")
	if code != exitFailure || !strings.Contains(errs, "read-only file system") || !strings.Contains(errs, data) {
		t.Fatalf("exit %d, stderr %q; want a failure naming the read-only data directory", code, errs)
	}
	if after := s.countChecks(t); after != before {
		t.Fatalf("checks went from %d to %d", before, after)
	}
}

// data/derived is a cache the next derivation rebuilds when a file in it is
// damaged, or was written by an older observer with other columns. crawl
// and add read the known hosts before they derive (add never derives), so
// they must not define views over that cache first: a truncated state file
// (or, after an upgrade, an old transitions file) failed them with DuckDB's
// binder error until a build or sql rebuilt it.
func TestCrawlAndAddDoNotNeedAReadableDerivedState(t *testing.T) {
	s := newSimSite(t, fedisim.Config{})
	if code, out, errs := s.crawl(t, "2026-01-01T00:00:00Z", "--isolation", "none"); code != exitOK {
		t.Fatalf("first pass: %d\n%s\n%s", code, out, errs)
	}
	// A first pass from the seeds leaves the derivation to the next
	// writer; observer sql is one.
	if code, _, errs := s.sql(t, "SELECT 1"); code != exitOK {
		t.Fatalf("derive: exit %d\n%s", code, errs)
	}
	derived := filepath.Join(s.dir, "data", "derived")
	damage := func() string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(derived, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ State string }
		if err := json.Unmarshal(b, &m); err != nil || m.State == "" {
			t.Fatalf("manifest %s: %v", b, err)
		}
		state := filepath.Join(derived, m.State)
		real, err := os.ReadFile(state)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(state, real[:len(real)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		return m.State
	}

	damaged := damage()
	code, out, errs := runObserver(t, "add", "--quiet", "--config", s.config, "--data", filepath.Join(s.dir, "data"), "--now", "2026-01-01T00:30:00Z", "added-by-hand.social")
	if code != exitOK || out != "added-by-hand.social: added\n" {
		t.Fatalf("add with %s damaged: exit %d\n%s\n%s", damaged, code, out, errs)
	}
	// The crawl derives (rebuilding the cache) and checks what is due.
	code, out, errs = s.crawl(t, "2026-01-02T06:00:00Z", "--isolation", "none")
	if code != exitOK || strings.Contains(out, " 0 checks") {
		t.Fatalf("crawl with %s damaged: exit %d\n%s\n%s", damaged, code, out, errs)
	}
	if got := s.query(t, "SELECT count(*) FROM checks WHERE host = 'added-by-hand.social'"); got[0] != "1" {
		t.Fatalf("the host added by hand was checked %s times, want 1", got[0])
	}
}

// The crawl derives in a child process (__derive). When that fails, the
// operator who ran observer crawl gets one message from it naming the
// cause, not the child's line under an internal command's name followed by
// a bare "exit code 1".
func TestCrawlSaysWhyItsDerivationFailed(t *testing.T) {
	s := newSimSite(t, fedisim.Config{})
	if code, out, errs := s.crawl(t, "2026-01-01T00:00:00Z", "--isolation", "none"); code != exitOK {
		t.Fatalf("first pass: %d\n%s\n%s", code, out, errs)
	}
	// A checks file whose http_status is text, as a hand-made one might be.
	day := filepath.Join(s.dir, "data", "checks", "date=2026-01-01")
	bad := filepath.Join(day, "handmade.parquet")
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf("COPY (SELECT * REPLACE (http_status::VARCHAR AS http_status) FROM read_parquet('%s/*.parquet')) TO '%s' (FORMAT parquet)", day, bad)); err != nil {
		t.Fatal(err)
	}

	code, _, errs := s.crawl(t, "2026-01-01T06:00:00Z", "--isolation", "none")
	want := "observer crawl: derive the state before the pass: snapshot file " + bad + ": column http_status is VARCHAR, want INTEGER"
	if code != exitFailure || !strings.HasPrefix(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and one line starting %q", code, errs, exitFailure, want)
	}
}
