package crawlpass

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/duck"
)

// seedsFirstOptions are a first pass's options into data, a directory that
// does not exist yet, from two seeds, one of which names a third host.
func seedsFirstOptions(data string, checker crawl.Checker) Options {
	return Options{
		Data: data, Now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), NowGiven: true,
		Seeds: []observer.Host{"seed.social", "other.social"}, SeedList: "seeds.txt",
		Views:        duck.ViewParams{Rules: testRules},
		Peers:        duck.PeersSchedule{Interval: 14 * day, MinInterval: time.Hour},
		DomainBudget: 10, DiscoveredChecks: 100,
		Pass: crawl.Pass{Concurrency: 2}, Checker: checker,
		Derive:   func(context.Context) error { return errors.New("a first pass from the seeds derives nothing") },
		Progress: io.Discard, Quiet: true, Summary: io.Discard,
	}
}

// A first pass into a data directory that does not exist yet checks its
// seeds while the directory is opened, and records them as any first pass
// does: the seeds as discoveries, every check, the hosts the checks found,
// the pass.
func TestFirstPassIntoANewDirectoryRecordsItsSeedsAndChecks(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	o := seedsFirstOptions(data, crawl.CheckFunc(func(_ context.Context, host observer.Host, opts crawl.CheckOptions) (observer.Result, crawl.Trace) {
		r := observer.Result{Check: observer.Check{Host: host, CheckedAt: opts.CheckedAt, PassID: opts.PassID, Outcome: observer.OutcomeAlive}}
		if host == "seed.social" {
			r.Discoveries = []observer.Discovery{{Host: "found.social", DiscoveredAt: opts.CheckedAt, Via: string(host)}}
		}
		return r, crawl.Trace{}
	}))
	if !o.seedsFirst() {
		t.Fatal("a first pass into a directory that does not exist does not check its seeds first")
	}
	if err := Run(ctx, o); err != nil {
		t.Fatal(err)
	}
	row := snapshotRow(t, data, "SELECT "+
		"(SELECT string_agg(host || ' ' || via, ', ' ORDER BY host) FROM discoveries) AS discovered, "+
		"(SELECT string_agg(host, ', ' ORDER BY host) FROM checks) AS checked, "+
		"(SELECT count(*) FROM passes) AS passes")
	got := fmt.Sprint(row["discovered"], "; ", row["checked"], "; ", row["passes"])
	if want := "found.social seed.social, other.social seed, seed.social seed; found.social, other.social, seed.social; 1"; got != want {
		t.Errorf("recorded %q, want %q", got, want)
	}
}

// A first pass into a directory that then fails to open stops the checks
// it started, records none of them, and says why.
func TestFirstPassIntoADirectoryThatFailsToOpenStopsItsChecks(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	var mu sync.Mutex
	var causes []error
	o := seedsFirstOptions(data, crawl.CheckFunc(func(ctx context.Context, host observer.Host, opts crawl.CheckOptions) (observer.Result, crawl.Trace) {
		// Checks under way when the directory fails end with it.
		<-ctx.Done()
		mu.Lock()
		causes = append(causes, context.Cause(ctx))
		mu.Unlock()
		return observer.Result{Check: observer.Check{Host: host, CheckedAt: opts.CheckedAt, PassID: opts.PassID, Outcome: observer.OutcomeUnreachable}}, crawl.Trace{}
	}))
	o.MemoryLimit = "no such size"
	err := Run(ctx, o)
	if err == nil || !strings.Contains(err.Error(), "duckdb memory limit") {
		t.Fatalf("Run = %v, want DuckDB's refusal of the memory limit", err)
	}
	for _, c := range causes {
		if c == nil || c.Error() != err.Error() {
			t.Errorf("a check under way ended by %v, want the directory's error", c)
		}
	}
	row := snapshotRow(t, data, "SELECT (SELECT count(*) FROM checks) AS checks, (SELECT count(*) FROM passes) AS passes")
	if got := fmt.Sprint(row["checks"], " ", row["passes"]); got != "0 0" {
		t.Errorf("checks and passes recorded: %s, want 0 0", got)
	}
}

// snapshotRow is the first row query returns over the snapshots of data.
func snapshotRow(t *testing.T, data, query string) map[string]any {
	t.Helper()
	ctx := context.Background()
	s, err := duck.Open(ctx, data, duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Reader.CreateSnapshotViews(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Reader.QueryMaps(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no row", query)
	}
	return rows[0]
}
