package main

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/fedisim"
)

// TestMain lets the test binary run as the observer command itself, so
// tests can start real processes and kill them, and so that crawls with
// --isolation process (the default) find their checker and every crawl its
// derivation: the pool re-executes this binary as `__checker`, the crawl as
// `__derive`.
func TestMain(m *testing.M) {
	if os.Getenv("OBSERVER_TEST_MAIN") == "1" || (len(os.Args) > 1 && (os.Args[1] == "__checker" || os.Args[1] == "__derive")) {
		main()
	}
	os.Exit(m.Run())
}

// observerProcess starts the test binary as `observer args...`.
func observerProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "OBSERVER_TEST_MAIN=1")
	return cmd
}

// killIterations is how many passes TestKilledCrawlKeepsDataReadable kills:
// a few dozen in make test, more with make kill-test.
func killIterations() int {
	if n, err := strconv.Atoi(os.Getenv("OBSERVER_KILL_ITERATIONS")); err == nil && n > 0 {
		return n
	}
	return 24
}

func TestKilledCrawlKeepsDataReadable(t *testing.T) {
	s := newSimSite(t, fedisim.Config{Instances: 3000})
	if code, out, errs := s.crawl(t, "2026-01-01T00:00:00Z"); code != exitOK {
		t.Fatalf("seed pass: %d\n%s\n%s", code, out, errs)
	}
	data := filepath.Join(s.dir, "data")
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	prevChecks := s.countChecks(t)
	for i := range killIterations() {
		now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC).Add(time.Duration(i) * 25 * time.Hour)
		args := append([]string{"crawl", "--quiet", "--config", s.config, "--data", data, "--now", now.Format(time.RFC3339),
			"--flush-checks", "7", "--concurrency", "4"}, s.net...)
		cmd := observerProcess(t, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// A random moment: anywhere from before the first check to mid-pass.
		time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		// Every file is readable, and recorded checks are never lost.
		n := s.countChecks(t)
		if n < prevChecks {
			t.Fatalf("iteration %d: checks went from %d to %d", i, prevChecks, n)
		}
		t.Logf("iteration %d: %d checks on disk", i, n)
		prevChecks = n
	}
	// Leftover temporary files are never read as data and are cleaned by
	// the next writer; the next pass runs normally.
	code, out, errs := s.crawl(t, "2026-03-01T00:00:00Z", "--max-checks", "50")
	if code != exitOK && code != exitCutShort {
		t.Fatalf("pass after kills: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "checks in") {
		t.Fatalf("pass after kills printed no summary:\n%s", out)
	}
	if tmp, _ := os.ReadDir(filepath.Join(data, "tmp")); len(tmp) != 0 {
		t.Fatalf("orphaned temporary files not cleaned: %v", tmp)
	}
	if s.countChecks(t) <= prevChecks {
		t.Fatal("the pass after the kills recorded nothing")
	}
}

// countChecks reads every checks file through DuckDB: a truncated or
// half-written file would make the query fail.
func (s *simSite) countChecks(t *testing.T) int {
	t.Helper()
	n, err := strconv.Atoi(s.query(t, "SELECT count(*) FROM checks")[0])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
