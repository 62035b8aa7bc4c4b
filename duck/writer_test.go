package duck_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/duck"
)

// A flush that fails half-way (a full disk, say) must not leave a check
// that read a peers list without the hosts the list named: the next check
// would be told the list has not changed, and they would never be found.
func TestFailedFlushNeverKeepsAChecksFileWithoutItsDiscoveries(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	// The checks' date directory cannot be made: writing checks fails.
	if err := os.MkdirAll(filepath.Join(dir, duck.ChecksDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, duck.ChecksDir, "date=2026-03-01"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := s.Snapshots.NewWriter("pass1", duck.WriterOptions{FlushChecks: 1 << 30, FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Record(ctx, observer.Result{
		Check:       observer.Check{Host: "a.social", CheckedAt: day0, Outcome: observer.OutcomeAlive, PeersFetched: true, PeersValidators: observer.PeersValidators{PeersETag: `"v1"`}},
		Discoveries: []observer.Discovery{{Host: "b.social", DiscoveredAt: day0, Via: "a.social"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err == nil {
		t.Fatal("the flush succeeded where the checks could not be written")
	}
	checks, _ := filepath.Glob(filepath.Join(dir, duck.ChecksDir, "*", "*.parquet"))
	discoveries, _ := filepath.Glob(filepath.Join(dir, duck.DiscoveriesDir, "*", "*.parquet"))
	if len(checks) > 0 && len(discoveries) == 0 {
		t.Fatalf("checks %v written without their discoveries", checks)
	}
	if len(discoveries) != 1 {
		t.Errorf("discoveries files: %v, want the one the failed flush wrote first", discoveries)
	}
}

// Written counts the checks in files: those of flushes that succeeded, not
// those of a flush that failed or recorded after it, which a pass counts as
// lost in its passes row.
func TestWrittenCountsOnlyFlushedChecks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	// The second day's directory cannot be made: its flush fails.
	if err := os.MkdirAll(filepath.Join(dir, duck.ChecksDir), 0o755); err != nil {
		t.Fatal(err)
	}
	day1 := day0.AddDate(0, 0, 1)
	if err := os.WriteFile(filepath.Join(dir, duck.ChecksDir, "date="+day1.Format("2006-01-02")), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := s.Snapshots.NewWriter("pass1", duck.WriterOptions{FlushChecks: 2, FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	record := func(host string, at time.Time, outcome observer.Outcome, discoveries int) error {
		r := observer.Result{Check: observer.Check{Host: observer.Host(host), CheckedAt: at, Outcome: outcome}, Bytes: 100}
		for i := range discoveries {
			r.Discoveries = append(r.Discoveries, observer.Discovery{Host: observer.Host("d" + strconv.Itoa(i) + "." + host), DiscoveredAt: at, Via: host})
		}
		return w.Record(ctx, r)
	}
	if err := record("a.social", day0, observer.OutcomeAlive, 2); err != nil {
		t.Fatal(err)
	}
	if err := record("b.social", day0, observer.OutcomeUnreachable, 0); err != nil { // flushed with a.social
		t.Fatal(err)
	}
	if err := record("e.social", day0, observer.OutcomeAlive, 0); err != nil {
		t.Fatal(err)
	}
	if err := record("f.social", day0, observer.OutcomeAlive, 0); err != nil { // a second flush
		t.Fatal(err)
	}
	if err := record("c.social", day1, observer.OutcomeAlive, 1); err != nil {
		t.Fatal(err)
	}
	if err := record("d.social", day1, observer.OutcomeAlive, 0); err == nil { // this flush fails
		t.Fatal("the flush into a blocked directory succeeded")
	}
	w.Close(ctx)
	got := w.Written()
	if got.Checks != 4 || got.ByOutcome[observer.OutcomeAlive] != 3 || got.ByOutcome[observer.OutcomeUnreachable] != 1 ||
		got.Discovered != 2 || got.Bytes != 400 {
		t.Errorf("written %+v, want the two flushes' four checks, two discoveries and 400 bytes", got)
	}
}

// A pass that is interrupted still records the checks that finished: the
// pass's context is cancelled by then, and a flush those checks trigger
// must write them rather than fail, which would lose the whole buffer.
func TestFlushTriggeredAfterCancelStillWrites(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	w, err := s.Snapshots.NewWriter("pass1", duck.WriterOptions{FlushChecks: 2, FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i, host := range []string{"a.social", "b.social", "c.social"} {
		err := w.Record(ctx, observer.Result{Check: observer.Check{
			Host: observer.Host(host), CheckedAt: day0.Add(time.Duration(i) * time.Minute), Outcome: observer.OutcomeAlive}})
		if err != nil {
			t.Fatalf("record %s after the pass was cancelled: %v", host, err)
		}
	}
	if err := w.Close(context.WithoutCancel(ctx)); err != nil {
		t.Fatal(err)
	}
	files := filepath.ToSlash(filepath.Join(dir, duck.ChecksDir, "*", "*.parquet"))
	rows, err := s.Reader.QueryMaps(context.Background(), "SELECT count(*) AS n FROM read_parquet('"+files+"')")
	if err != nil {
		t.Fatal(err)
	}
	if n := rows[0]["n"]; n != int64(3) {
		t.Errorf("%v checks written, want all 3", n)
	}
}

// TestDiscoveriesFlushedByCount: buffered discoveries are written once
// there are a million of them, however few checks brought them. Flushing
// only by the number of checks and by time let peers lists full of new
// names (200 000 per check) pile up in the crawl's memory for 30 s.
func TestDiscoveriesFlushedByCount(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	w, err := s.Snapshots.NewWriter("pass1", duck.WriterOptions{FlushChecks: 1 << 30, FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	const perCheck, checks = 200_000, 5
	for i := range checks {
		via := "hub" + strconv.Itoa(i) + ".social"
		ds := make([]observer.Discovery, perCheck)
		for k := range ds {
			ds[k] = observer.Discovery{Host: observer.Host("n" + strconv.Itoa(i*perCheck+k) + ".spam.social"), DiscoveredAt: day0, Via: via}
		}
		if err := w.Record(ctx, observer.Result{Check: observer.Check{Host: observer.Host(via), CheckedAt: day0, Outcome: observer.OutcomeAlive}, Discoveries: ds}); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, duck.DiscoveriesDir, "*", "*.parquet"))
	if len(files) == 0 {
		t.Fatalf("%d discoveries from %d checks still buffered, none written", perCheck*checks, checks)
	}
}
