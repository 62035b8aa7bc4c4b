package duck_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/internal/testsupport"
)

var day0 = time.Date(2026, 3, 1, 23, 59, 0, 0, time.UTC)

func openStore(t *testing.T, dir string) *duck.Store {
	t.Helper()
	s, err := duck.Open(context.Background(), dir, duck.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func users(n int64) *int64 { return &n }

// query runs a query of one column of type T and returns its values.
func query[T any](t *testing.T, s *duck.Store, q string) []T {
	t.Helper()
	var out []T
	for _, v := range testsupport.Rows(t, s.Reader, q) {
		out = append(out, v[0].(T))
	}
	return out
}

func TestWriterRoundTripsChecksAndDiscoveriesByDate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	w, err := s.Snapshots.NewWriter("pass1", duck.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	open := true
	// Two checks either side of midnight: two date partitions.
	err = w.Record(ctx, observer.Result{
		Check: observer.Check{Host: "a.social", CheckedAt: day0, Outcome: observer.OutcomeAlive, Software: "mastodon",
			Users: users(42), OpenRegistrations: &open, Name: "A <b>", PeersFetched: true, PeersCount: 2, NewPeersCount: 1, DurationMS: 12},
		Discoveries: []observer.Discovery{{Host: "b.social", DiscoveredAt: day0, Via: "a.social"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Record(ctx, observer.Result{Check: observer.Check{Host: "b.social", CheckedAt: day0.Add(2 * time.Minute), Outcome: observer.OutcomeUnreachable, Error: "dial: refused"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"checks/date=2026-03-01/pass1-00000.parquet", "checks/date=2026-03-02/pass1-00000.parquet", "discoveries/date=2026-03-01/pass1-00000.parquet"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("missing snapshot %s: %v", p, err)
		}
	}
	if tmp, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(tmp) != 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}

	r := openStore(t, dir)
	if err := r.Reader.CreateViews(ctx, duck.ViewParams{Now: day0, Rules: defaultRules}); err != nil {
		t.Fatal(err)
	}
	got := query[string](t, r, "SELECT host || ' ' || outcome || ' ' || coalesce(CAST(users AS VARCHAR), '-') || ' ' || coalesce(name, '-') || ' ' || pass_id || ' ' || CAST(date AS VARCHAR) FROM checks ORDER BY checked_at")
	want := []string{"a.social alive 42 A <b> pass1 2026-03-01", "b.social unreachable - - pass1 2026-03-02"}
	if !slices.Equal(got, want) {
		t.Fatalf("checks = %q, want %q", got, want)
	}
	if got := query[string](t, r, "SELECT host || ' via ' || via FROM discoveries"); !slices.Equal(got, []string{"b.social via a.social"}) {
		t.Fatalf("discoveries = %q", got)
	}
}

func TestFlushesEveryNChecks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	w, _ := s.Snapshots.NewWriter("p", duck.WriterOptions{FlushChecks: 2, FlushEvery: time.Hour})
	for i := range 5 {
		w.Record(ctx, observer.Result{Check: observer.Check{Host: observer.Host("h" + string(rune('a'+i)) + ".social"), CheckedAt: day0.Add(-time.Hour), Outcome: observer.OutcomeAlive}})
	}
	// Two full batches are on disk before Close: a kill now loses one check.
	files, _ := filepath.Glob(filepath.Join(dir, "checks", "*", "*.parquet"))
	if len(files) != 2 {
		t.Fatalf("want 2 files before close, got %v", files)
	}
	w.Close(ctx)
	files, _ = filepath.Glob(filepath.Join(dir, "checks", "*", "*.parquet"))
	if len(files) != 3 {
		t.Fatalf("want 3 files after close, got %v", files)
	}
}

func TestEmptyDataDirGivesEmptyRelations(t *testing.T) {
	s := openStore(t, t.TempDir())
	if err := s.Reader.CreateViews(context.Background(), duck.ViewParams{Now: day0, Rules: defaultRules}); err != nil {
		t.Fatal(err)
	}
	if got := query[int64](t, s, "SELECT count(*) FROM checks"); got[0] != 0 {
		t.Fatalf("count = %d", got[0])
	}
}

func TestMissingDataDirIsAnErrorNamingIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	_, err := duck.Open(context.Background(), dir, duck.Options{})
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("want error naming %s, got %v", dir, err)
	}
}

func TestQueryRefusesWritesAndLockDownConfinesReads(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	w, _ := s.Snapshots.NewWriter("p", duck.WriterOptions{})
	w.Record(ctx, observer.Result{Check: observer.Check{Host: "a.social", CheckedAt: day0, Outcome: observer.OutcomeAlive}})
	w.Close(ctx)
	if err := s.Reader.CreateViews(ctx, duck.ViewParams{Now: day0, Rules: defaultRules}); err != nil {
		t.Fatal(err)
	}
	if err := s.Reader.LockDown(ctx); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "checks", "date=2026-03-01", "evil.parquet")
	for _, q := range []string{
		"COPY (SELECT 1) TO '" + target + "' (FORMAT parquet)",
		"CREATE TABLE x AS SELECT 1",
		"ATTACH '" + filepath.Join(dir, "x.db") + "'",
		"SET enable_external_access = true",
		"SELECT * FROM read_csv('/etc/passwd')",
	} {
		rows, err := s.Reader.Query(ctx, q)
		if err == nil {
			rows.Close()
			t.Errorf("%s: accepted", q)
		}
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("a query wrote into the snapshots")
	}
	if got := query[int64](t, s, "SELECT count(*) FROM checks"); got[0] != 1 {
		t.Fatalf("views stopped working after lock down: %d", got[0])
	}
	// The statement check refuses SET before DuckDB sees it; the lock
	// itself must hold too, for any statement that gets past it.
	if got := query[bool](t, s, "SELECT current_setting('lock_configuration')"); !got[0] {
		t.Error("lock_configuration is off after LockDown")
	}
	if got := query[bool](t, s, "SELECT current_setting('enable_external_access')"); got[0] {
		t.Error("enable_external_access is on after LockDown")
	}
}

// Live hosts by software come most common first, ties by name: the order
// the live page lists them in (buildtest's fake sorts on its own, so only
// this test sees duck's).
func TestStatsBySoftwareMostCommonFirst(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	w, err := s.Snapshots.NewWriter("p", duck.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, sw := range []string{"lemmy", "mastodon", "akkoma", "mastodon", "mastodon"} {
		c := observer.Check{Host: observer.Host(fmt.Sprintf("h%d.social", i)), CheckedAt: day0, Outcome: observer.OutcomeAlive, Software: sw, PassID: "p"}
		if err := w.Record(ctx, observer.Result{Check: c}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Deriver.Derive(ctx, duck.DeriveOptions{Rules: defaultRules}); err != nil {
		t.Fatal(err)
	}
	if err := s.Reader.CreateViews(ctx, duck.ViewParams{Now: day0.Add(time.Hour), Rules: defaultRules}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Reader.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []observer.SoftwareCount{{Software: "mastodon", Live: 3}, {Software: "akkoma", Live: 1}, {Software: "lemmy", Live: 1}}
	if !slices.Equal(st.BySoftware, want) {
		t.Errorf("Stats().BySoftware = %+v, want %+v", st.BySoftware, want)
	}
	if got := query[string](t, s, "SELECT software FROM stats_software"); !slices.Equal(got, []string{"mastodon", "akkoma", "lemmy"}) {
		t.Errorf("stats_software rows: %q", got)
	}
}

// A pass's row keeps every figure of observer.Pass in its own column, and
// one from before a column existed reads as NULL there.
func TestPassRowRoundTrips(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	p := observer.Pass{PassID: "p1", StartedAt: t0, EndedAt: t0.Add(time.Minute), Due: 20, NotStarted: 9, Abandoned: 6,
		Blocklisted: 1, OverDomainBudget: 2, SkippedAddressBudget: 3, Addresses: 4, BusiestAddressRequests: 7, AddressesOverBudget: 8,
		OverListCap: 10, OverPassCap: 11,
		Tally: observer.Tally{Checks: 5, ByOutcome: map[observer.Outcome]int64{observer.OutcomeAlive: 5}}, CutShort: "interrupted"}
	if err := s.Snapshots.WritePass(ctx, p); err != nil {
		t.Fatal(err)
	}
	views(t, s, t0)
	got := texts(t, s, `SELECT concat_ws(' ', due, checked, not_started, abandoned, blocklisted, over_domain_budget, skipped_address_budget,
		addresses, busiest_address_requests, addresses_over_budget, over_list_cap, over_pass_cap, alive, cut_short) FROM passes`)
	if want := "20 5 9 6 1 2 3 4 7 8 10 11 5 interrupted"; len(got) != 1 || got[0] != want {
		t.Fatalf("passes = %q, want %q", got, want)
	}
	// The row is written by name, outcome columns named as the outcomes:
	// each outcome must land in its own column.
	p.PassID, p.StartedAt, p.EndedAt = "p2", t0.Add(time.Hour), t0.Add(time.Hour+time.Minute)
	p.ByOutcome = map[observer.Outcome]int64{}
	for i, o := range observer.Outcomes() {
		p.ByOutcome[o] = int64(100 + i)
	}
	if err := s.Snapshots.WritePass(ctx, p); err != nil {
		t.Fatal(err)
	}
	views(t, s, t0.Add(2*time.Hour))
	for o, want := range p.ByOutcome {
		got := texts(t, s, fmt.Sprintf("SELECT %s FROM passes WHERE pass_id = 'p2'", o))
		if len(got) != 1 || got[0] != strconv.FormatInt(want, 10) {
			t.Errorf("passes.%s = %q, want %d", o, got, want)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, duck.PassesDir, "*", "*.parquet"))
	if len(files) != 2 {
		t.Fatalf("pass files %v", files)
	}
	rewriteSnapshot(t, files[0], "* EXCLUDE (abandoned)")
	views(t, s, t0)
	if got := texts(t, s, "SELECT count(*) || ' ' || count(abandoned) FROM passes"); got[0] != "2 1" {
		t.Fatalf("a pass from before abandoned: %q", got)
	}
}

// DuckDB checks the path a query names against the data directory, not the
// file it ends at: a symbolic link under data/ to a file outside it is
// refused before any query runs, and one to a file inside is fine.
func TestLockDownRefusesLinksOutTheDataDirectory(t *testing.T) {
	ctx := context.Background()
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.Reader.CreateViews(ctx, duck.ViewParams{Now: day0, Rules: defaultRules}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "inside.txt"), []byte("fine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "inside.txt"), filepath.Join(dir, "inside-link")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "checks", "date=2026-03-01"), 0o755)
	link := filepath.Join(dir, "checks", "date=2026-03-01", "hostname")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	err := s.Reader.LockDown(ctx)
	if err == nil || !strings.Contains(err.Error(), link+" is a symbolic link to "+outside+", outside it") {
		t.Fatalf("LockDown with a link out of the data directory: %v", err)
	}
	// The control: without the link, the store locks down and reads what
	// the link inside points to, and nothing outside.
	os.Remove(link)
	if err := s.Reader.LockDown(ctx); err != nil {
		t.Fatal(err)
	}
	if got := query[string](t, s, "SELECT content FROM read_text('"+filepath.Join(dir, "inside-link")+"')"); len(got) != 1 || got[0] != "fine" {
		t.Errorf("read through a link inside the data directory: %q", got)
	}
	if rows, err := s.Reader.Query(ctx, "SELECT content FROM read_text('"+outside+"')"); err == nil {
		rows.Close()
		t.Error("a file outside the data directory was read")
	}
}
