package duck_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/internal/testsupport"
)

// t0 is the start of every hand-written history.
var t0 = time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

// ev is one event of a hand-written history: a check (outcome set) or a
// discovery (outcome empty), at t0 plus at.
type ev struct {
	host    string
	at      time.Duration
	outcome observer.Outcome
	movedTo string
	via     string // a discovery's, ViaSeed when empty
	// An alive check fetches the peers list (with an ETag of its time)
	// unless noPeers.
	noPeers bool
}

func alive(host string, at time.Duration) ev {
	return ev{host, at, observer.OutcomeAlive, "", "", false}
}
func fail(host string, at time.Duration) ev {
	return ev{host, at, observer.OutcomeUnreachable, "", "", false}
}
func moving(host string, at time.Duration, to string) ev {
	return ev{host, at, observer.OutcomeMoving, to, "", false}
}
func moved(host string, at time.Duration, to string) ev {
	return ev{host, at, observer.OutcomeMoved, to, "", false}
}
func optedOut(host string, at time.Duration) ev {
	return ev{host, at, observer.OutcomeOptedOut, "", "", false}
}
func discover(host string, at time.Duration) ev { return ev{host, at, "", "", "", false} }
func addManually(host string, at time.Duration) ev {
	return ev{host, at, "", "", observer.ViaManual, false}
}

// series repeats make(host, at) every step from start, count times.
func series(make func(string, time.Duration) ev, host string, start, step time.Duration, count int) []ev {
	var out []ev
	for i := range count {
		out = append(out, make(host, start+time.Duration(i)*step))
	}
	return out
}

func concat(parts ...[]ev) []ev { return slices.Concat(parts...) }

// write records a history as one pass's snapshot files.
func write(t testing.TB, s *duck.Store, pass string, evs []ev) {
	t.Helper()
	ctx := context.Background()
	w, err := s.Snapshots.NewWriter(pass, duck.WriterOptions{FlushChecks: 1 << 30, FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		at := t0.Add(e.at)
		if e.outcome == "" {
			via := cmp.Or(e.via, observer.ViaSeed)
			if err := w.Discover(ctx, observer.Discovery{Host: observer.Host(e.host), DiscoveredAt: at, Via: via}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		c := observer.Check{Host: observer.Host(e.host), CheckedAt: at, Outcome: e.outcome, MovedTo: observer.Host(e.movedTo), PassID: pass}
		if e.outcome == observer.OutcomeAlive {
			c.Software, c.Version, c.Name, c.Users = "mastodon", "4.3.0", "Name of "+e.host, users(int64(len(e.host)))
			c.PeersFetched = !e.noPeers
			if c.PeersFetched {
				c.PeersETag = fmt.Sprintf(`"%d"`, at.Unix())
			}
		}
		if err := w.Record(ctx, observer.Result{Check: c}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func derive(t testing.TB, s *duck.Store, st config.State, full bool) duck.DeriveReport {
	t.Helper()
	rep, err := s.Deriver.Derive(context.Background(), duck.DeriveOptions{Rules: rules(st), Full: full})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func views(t testing.TB, s *duck.Store, now time.Time) {
	t.Helper()
	if err := s.Reader.CreateViews(context.Background(), duck.ViewParams{Now: now, Rules: defaultRules}); err != nil {
		t.Fatal(err)
	}
}

// texts runs a query of one column and returns its values as text.
func texts(t testing.TB, s *duck.Store, q string) []string {
	t.Helper()
	var out []string
	for _, v := range testsupport.Rows(t, s.Reader, q) {
		out = append(out, fmt.Sprint(v[0]))
	}
	return out
}

// offset renders a time as days (and hours) after t0, so expectations read
// like the histories.
const offsetSQL = `(CASE WHEN %[1]s IS NULL THEN '-' ELSE
	'd' || (datediff('hour', TIMESTAMP '2026-01-05 12:00:00', %[1]s) // 24)::VARCHAR
	|| CASE WHEN datediff('hour', TIMESTAMP '2026-01-05 12:00:00', %[1]s) %% 24 <> 0
	        THEN 'h' || (datediff('hour', TIMESTAMP '2026-01-05 12:00:00', %[1]s) %% 24)::VARCHAR ELSE '' END END)`

func offset(col string) string { return fmt.Sprintf(offsetSQL, col) }

func stateOf(t testing.TB, s *duck.Store, host string) string {
	t.Helper()
	got := texts(t, s, fmt.Sprintf("SELECT state || coalesce(' ' || moved_to, '') || ' since ' || %s FROM state WHERE host = '%s'", offset("since"), host))
	if len(got) != 1 {
		t.Fatalf("state of %s: %d rows", host, len(got))
	}
	return got[0]
}

func transitionsOf(t testing.TB, s *duck.Store, host string) []string {
	t.Helper()
	return texts(t, s, fmt.Sprintf(`SELECT from_state || '>' || to_state || coalesce(' ' || moved_to, '') || ' ' || %s
		FROM transitions WHERE host = '%s' ORDER BY checked_at, to_state`, offset("checked_at"), host))
}

func TestState(t *testing.T) {
	const h = "a.example"
	cases := []struct {
		name        string
		history     []ev
		state       string
		transitions []string
	}{
		{"discovered_without_checks_stays_discovered",
			[]ev{discover(h, 0)},
			"discovered since d0", nil},
		{"first_alive_check_makes_discovered_live",
			[]ev{discover(h, 0), alive(h, day)},
			"live since d1", []string{"discovered>live d1"}},
		{"live_stays_live_while_alive",
			series(alive, h, 0, day, 5),
			"live since d0", []string{"discovered>live d0"}},
		{"dying_after_first_failure_of_live_host",
			[]ev{alive(h, 0), fail(h, day)},
			"dying since d1", []string{"discovered>live d0", "live>dying d1"}},
		{"dying_then_alive_is_live",
			[]ev{alive(h, 0), fail(h, day), fail(h, 2*day), alive(h, 3*day)},
			"live since d3", []string{"discovered>live d0", "live>dying d1", "dying>live d3"}},
		{"dead_after_more_than_6_failures_and_7_days",
			concat([]ev{alive(h, 0)}, series(fail, h, day, day, 8)),
			"dead since d8", []string{"discovered>live d0", "live>dying d1", "dying>dead d8"}},
		{"not_dead_after_many_failures_within_7_days",
			concat([]ev{alive(h, 0)}, series(fail, h, day, 6*time.Hour, 24)),
			"dying since d1", []string{"discovered>live d0", "live>dying d1"}},
		{"not_dead_after_7_days_with_only_6_failures",
			concat([]ev{alive(h, 0)}, series(fail, h, day, 2*day, 6)),
			"dying since d1", []string{"discovered>live d0", "live>dying d1"}},
		{"dead_on_the_check_that_meets_both_thresholds",
			concat([]ev{alive(h, 0)}, series(fail, h, day, 2*day, 7)),
			"dead since d13", []string{"discovered>live d0", "live>dying d1", "dying>dead d13"}},
		{"dead_stays_dead_on_more_failures",
			concat([]ev{alive(h, 0)}, series(fail, h, day, day, 20)),
			"dead since d8", []string{"discovered>live d0", "live>dying d1", "dying>dead d8"}},
		{"discovered_failing_stays_discovered",
			concat([]ev{discover(h, 0)}, series(fail, h, 0, day, 5)),
			"discovered since d0", nil},
		{"discovered_never_alive_becomes_dead",
			concat([]ev{discover(h, 0)}, series(fail, h, 0, day, 8)),
			"dead since d7", []string{"discovered>dead d7"}},
		// Derived whole, these runs of failures cross both thresholds
		// after their first check, one where the days decide and one where
		// the count does.
		{"never_alive_dead_on_the_first_failure_7_days_on",
			concat([]ev{discover(h, 0)}, series(fail, h, 0, day, 10)),
			"dead since d7", []string{"discovered>dead d7"}},
		{"never_alive_dead_on_the_7th_failure_when_7_days_come_first",
			concat([]ev{discover(h, 0)}, series(fail, h, 0, 2*day, 8)),
			"dead since d12", []string{"discovered>dead d12"}},
		{"dead_then_alive_is_reviving",
			concat([]ev{alive(h, 0)}, series(fail, h, day, day, 8), []ev{alive(h, 9*day)}),
			"reviving since d9", []string{"discovered>live d0", "live>dying d1", "dying>dead d8", "dead>reviving d9"}},
		{"reviving_becomes_live_after_7_days",
			concat([]ev{alive(h, 0)}, series(fail, h, day, day, 8), series(alive, h, 9*day, day, 8)),
			"live since d16", []string{"discovered>live d0", "live>dying d1", "dying>dead d8", "dead>reviving d9", "reviving>live d16"}},
		{"reviving_stays_reviving_before_7_days",
			concat([]ev{alive(h, 0)}, series(fail, h, day, day, 8), series(alive, h, 9*day, day, 7)),
			"reviving since d9", []string{"discovered>live d0", "live>dying d1", "dying>dead d8", "dead>reviving d9"}},
		{"reviving_failure_goes_back_to_dying",
			concat([]ev{alive(h, 0)}, series(fail, h, day, day, 8), []ev{alive(h, 9*day), fail(h, 10*day)}),
			"dying since d10", []string{"discovered>live d0", "live>dying d1", "dying>dead d8", "dead>reviving d9", "reviving>dying d10"}},
		{"dead_discovered_host_first_alive_is_reviving",
			concat([]ev{discover(h, 0)}, series(fail, h, 0, day, 8), []ev{alive(h, 8*day)}),
			"reviving since d8", []string{"discovered>dead d7", "dead>reviving d8"}},
		{"moving_on_temporary_redirect",
			[]ev{alive(h, 0), moving(h, day, "b.example")},
			"moving b.example since d1", []string{"discovered>live d0", "live>moving b.example d1"}},
		{"moving_persisting_becomes_moved",
			concat([]ev{alive(h, 0)}, series(func(h string, at time.Duration) ev { return moving(h, at, "b.example") }, h, day, day, 8)),
			"moved b.example since d8", []string{"discovered>live d0", "live>moving b.example d1", "moving>moved b.example d8"}},
		{"moving_then_alive_is_live",
			[]ev{alive(h, 0), moving(h, day, "b.example"), alive(h, 2*day)},
			"live since d2", []string{"discovered>live d0", "live>moving b.example d1", "moving>live d2"}},
		{"moving_then_failure_is_dying",
			[]ev{alive(h, 0), moving(h, day, "b.example"), fail(h, 2*day)},
			"dying since d2", []string{"discovered>live d0", "live>moving b.example d1", "moving>dying d2"}},
		{"moved_at_once_on_permanent_redirect",
			[]ev{alive(h, 0), moved(h, day, "b.example")},
			"moved b.example since d1", []string{"discovered>live d0", "live>moved b.example d1"}},
		{"moved_failing_stays_moved",
			concat([]ev{alive(h, 0), moved(h, day, "b.example")}, series(fail, h, 2*day, day, 10)),
			"moved b.example since d1", []string{"discovered>live d0", "live>moved b.example d1"}},
		{"moved_then_alive_is_live",
			[]ev{alive(h, 0), moved(h, day, "b.example"), alive(h, 2*day)},
			"live since d2", []string{"discovered>live d0", "live>moved b.example d1", "moved>live d2"}},
		{"moved_target_follows_the_latest_redirect",
			[]ev{alive(h, 0), moving(h, day, "b.example"), moved(h, 2*day, "c.example")},
			"moved c.example since d2", []string{"discovered>live d0", "live>moving b.example d1", "moving>moved c.example d2"}},
		{"opted_out_at_once",
			[]ev{alive(h, 0), optedOut(h, day)},
			"opted_out since d1", []string{"discovered>live d0", "live>opted_out d1"}},
		{"opted_out_then_allowed_follows_normal_rules",
			[]ev{alive(h, 0), optedOut(h, day), alive(h, 2*day)},
			"live since d2", []string{"discovered>live d0", "live>opted_out d1", "opted_out>live d2"}},
		// A failed check was not an allowed one (robots.txt unreachable or
		// answering 5xx disallows the pass): the host stays out of the
		// lists, however long it fails, until a check succeeds.
		{"opted_out_then_failure_stays_opted_out",
			concat([]ev{alive(h, 0), optedOut(h, day)}, series(fail, h, 2*day, day, 10)),
			"opted_out since d1", []string{"discovered>live d0", "live>opted_out d1"}},
		{"opted_out_while_dying_then_failure_stays_opted_out",
			[]ev{alive(h, 0), fail(h, day), optedOut(h, 2*day), fail(h, 3*day)},
			"opted_out since d2", []string{"discovered>live d0", "live>dying d1", "dying>opted_out d2"}},
		{"never_alive_opted_out_then_failing_stays_opted_out",
			[]ev{optedOut(h, 0), fail(h, day)},
			"opted_out since d0", []string{"discovered>opted_out d0"}},
		{"opted_out_failing_then_alive_is_live",
			concat([]ev{alive(h, 0), optedOut(h, day)}, series(fail, h, 2*day, day, 10), []ev{alive(h, 12*day)}),
			"live since d12", []string{"discovered>live d0", "live>opted_out d1", "opted_out>live d12"}},
	}
	// All histories live in one data directory, one host each, derived
	// three ways: all at once; folded in three steps; rebuilt in full after
	// the steps. Each rule is then checked on its host in every way.
	hostOf := func(name string) string { return strings.ReplaceAll(name, "_", "-") + ".example" }
	withHost := func(evs []ev, host string) []ev {
		out := slices.Clone(evs)
		for i := range out {
			out[i].host = host
		}
		return out
	}
	st := config.Default().State
	whole := openStore(t, t.TempDir())
	steps := openStore(t, t.TempDir())
	var all []ev
	var chunks [3][]ev
	for _, tc := range cases {
		evs := withHost(tc.history, hostOf(tc.name))
		all = append(all, evs...)
		n := len(evs)
		chunks[0] = append(chunks[0], evs[:n/3]...)
		chunks[1] = append(chunks[1], evs[n/3:2*n/3]...)
		chunks[2] = append(chunks[2], evs[2*n/3:]...)
	}
	write(t, whole, "p0", all)
	derive(t, whole, st, false)
	views(t, whole, t0.Add(30*day))
	for i, chunk := range chunks {
		write(t, steps, fmt.Sprintf("p%d", i), chunk)
		if rep := derive(t, steps, st, false); rep.Full != (i == 0) {
			t.Fatalf("step %d: full = %v", i, rep.Full)
		}
	}
	views(t, steps, t0.Add(30*day))
	rebuilt := openStore(t, steps.Dir())
	if rep := derive(t, rebuilt, st, true); !rep.Full {
		t.Fatal("full derivation was not full")
	}
	views(t, rebuilt, t0.Add(30*day))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, way := range []struct {
				name string
				s    *duck.Store
			}{{"whole", whole}, {"stepwise", steps}, {"rebuilt", rebuilt}} {
				if got := stateOf(t, way.s, hostOf(tc.name)); got != tc.state {
					t.Errorf("%s: state = %q, want %q", way.name, got, tc.state)
				}
				if got := transitionsOf(t, way.s, hostOf(tc.name)); !slices.Equal(got, tc.transitions) {
					t.Errorf("%s: transitions =\n  %s\nwant\n  %s", way.name, strings.Join(got, "\n  "), strings.Join(tc.transitions, "\n  "))
				}
			}
		})
	}
}

// failures is the length of the current run of failed checks, 0 when the
// last check did not fail (docs/data.md, state): a redirect or an opt-out
// ends the run, and the failures of an opted-out or moved host still count,
// though they leave its state as it is. Derived whole and one check a step
// (fold_step's first kind of input), as a daily crawl does.
func TestFailuresCountTheCurrentRunOfFailedChecks(t *testing.T) {
	histories := map[string][]ev{
		"failing.example":    {alive("failing.example", 0), fail("failing.example", day), fail("failing.example", 2*day), fail("failing.example", 3*day)},
		"redirected.example": {alive("redirected.example", 0), fail("redirected.example", day), moving("redirected.example", 2*day, "b.example"), moving("redirected.example", 3*day, "b.example")},
		"back.example":       {alive("back.example", 0), fail("back.example", day), fail("back.example", 2*day), alive("back.example", 3*day)},
		"optout.example":     {alive("optout.example", 0), optedOut("optout.example", day), fail("optout.example", 2*day), fail("optout.example", 3*day)},
		"moved.example":      {alive("moved.example", 0), moved("moved.example", day, "b.example"), fail("moved.example", 2*day), fail("moved.example", 3*day)},
	}
	want := []string{"back.example 0", "failing.example 3", "moved.example 2", "optout.example 2", "redirected.example 0"}
	st := config.Default().State
	whole := openStore(t, t.TempDir())
	daily := openStore(t, t.TempDir())
	var all []ev
	for i := range 4 {
		var step []ev
		for _, h := range histories {
			step = append(step, h[i])
		}
		all = append(all, step...)
		write(t, daily, fmt.Sprintf("p%d", i), step)
		derive(t, daily, st, false)
	}
	write(t, whole, "p", all)
	derive(t, whole, st, false)
	for name, s := range map[string]*duck.Store{"whole": whole, "daily": daily} {
		views(t, s, t0.Add(4*day))
		if got := texts(t, s, "SELECT host || ' ' || failures FROM state ORDER BY host"); !slices.Equal(got, want) {
			t.Errorf("%s: failures = %v, want %v", name, got, want)
		}
	}
}

// A host discovered twice at the same instant, in different steps, takes
// the smaller via (as new_disc's arg_min does within one step), so an
// incremental derivation gives what a full one gives (docs/data.md: the
// state keeps the earliest discovery, and incremental equals full).
func TestDiscoveryTiesGoToTheSmallerVia(t *testing.T) {
	st := config.Default().State
	for _, order := range [][2]string{{"b.example", "a.example"}, {"a.example", "b.example"}} {
		dir := t.TempDir()
		s := openStore(t, dir)
		for i, via := range order {
			write(t, s, fmt.Sprintf("p%d", i), []ev{{"x.example", day, "", "", via, false}})
			derive(t, s, st, false)
		}
		views(t, s, t0.Add(2*day))
		if got := texts(t, s, "SELECT via FROM state WHERE host = 'x.example'"); !slices.Equal(got, []string{"a.example"}) {
			t.Errorf("discovered via %v in two steps: via = %v, want [a.example]", order, got)
		}
		rebuilt := openStore(t, dir)
		derive(t, rebuilt, st, true)
		views(t, rebuilt, t0.Add(2*day))
		if got := texts(t, rebuilt, "SELECT via FROM state WHERE host = 'x.example'"); !slices.Equal(got, []string{"a.example"}) {
			t.Errorf("discovered via %v, rebuilt in full: via = %v, want [a.example]", order, got)
		}
	}
}
