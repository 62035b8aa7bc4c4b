package duck_test

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/build"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
)

// listHistory: the observer starts at d0 (warmup until d7); the lists are
// computed at d40 (live window d33-d40, new window d10-d40).
func listHistory() []ev {
	return concat(
		[]ev{discover("baseline.example", 0), alive("baseline.example", 35*day)},
		[]ev{discover("fresh.example", 20*day)}, series(alive, "fresh.example", 30*day, 2*day, 5),
		[]ev{discover("fresher.example", 25*day)}, series(alive, "fresher.example", 36*day, day, 3),
		[]ev{discover("old-news.example", 8*day), alive("old-news.example", 9*day), alive("old-news.example", 39*day)},
		[]ev{discover("stale.example", 8*day), alive("stale.example", 20*day)}, series(fail, "stale.example", 32*day, day, 8),
		[]ev{discover("dying.example", 8*day), alive("dying.example", 35*day), fail("dying.example", 36*day)},
		[]ev{discover("moved.example", 8*day), alive("moved.example", 38*day), moved("moved.example", 39*day, "new.example")},
		[]ev{discover("opted.example", 10*day), alive("opted.example", 38*day), optedOut("opted.example", 39*day)},
		[]ev{discover("moving.example", 8*day), alive("moving.example", 34*day), moving("moving.example", 39*day, "tmp.example")},
	)
}

func collect(t *testing.T, seq func(func(observer.Instance, error) bool)) []observer.Instance {
	t.Helper()
	var out []observer.Instance
	for in, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, in)
	}
	return out
}

func hostsOf(ins []observer.Instance) []string {
	var out []string
	for _, in := range ins {
		out = append(out, in.Host)
	}
	return out
}

func TestLists(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	evs := listHistory()
	write(t, s, "p0", evs)
	derive(t, s, config.Default().State, false)
	now := t0.Add(40 * day)
	views(t, s, now)

	live := collect(t, s.Reader.LiveInstances(ctx))
	newList := collect(t, s.Reader.NewInstances(ctx))
	t.Run("live_within_window_sorted_by_host", func(t *testing.T) {
		// stale: last alive 20 days ago; moved and opted out: excluded at
		// once; dying and moving for less than the window: still listed.
		want := []string{"baseline.example", "dying.example", "fresh.example", "fresher.example", "moving.example", "old-news.example"}
		if got := hostsOf(live); !slices.Equal(got, want) {
			t.Fatalf("live = %v, want %v", got, want)
		}
		in := live[slices.IndexFunc(live, func(i observer.Instance) bool { return i.Host == "fresh.example" })]
		if in.State != observer.StateLive || in.Software != "mastodon" || in.Name != "Name of fresh.example" ||
			in.Users == nil || *in.Users != int64(len("fresh.example")) || !in.FirstAliveAt.Equal(t0.Add(30*day)) ||
			!in.LastAliveAt.Equal(t0.Add(38*day)) || !in.DiscoveredAt.Equal(t0.Add(20*day)) {
			t.Fatalf("fresh.example = %+v", in)
		}
	})
	t.Run("new_within_window_newest_first_without_baseline_or_opted_out", func(t *testing.T) {
		// baseline: discovered during warmup; old-news: first alive before
		// the window; opted: opted out. stale's first alive is in the
		// window, and moved's too: new lists births, whatever came after.
		want := []string{"moved.example", "fresher.example", "dying.example", "moving.example", "fresh.example", "stale.example"}
		if got := hostsOf(newList); !slices.Equal(got, want) {
			t.Fatalf("new = %v, want %v", got, want)
		}
	})
	t.Run("moved_listed_nowhere_but_new_window_moves_on", func(t *testing.T) {
		views(t, s, t0.Add(80*day))
		if got := hostsOf(collect(t, s.Reader.LiveInstances(ctx))); len(got) != 0 {
			t.Fatalf("live 40 days later = %v", got)
		}
		if got := hostsOf(collect(t, s.Reader.NewInstances(ctx))); len(got) != 0 {
			t.Fatalf("new 40 days later = %v", got)
		}
		views(t, s, now)
	})
	t.Run("stats", func(t *testing.T) {
		st, err := s.Reader.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Live != int64(len(live)) || st.New != int64(len(newList)) {
			t.Fatalf("stats live %d new %d, lists %d %d", st.Live, st.New, len(live), len(newList))
		}
		if len(st.BySoftware) != 1 || st.BySoftware[0] != (observer.SoftwareCount{Software: "mastodon", Live: int64(len(live))}) {
			t.Fatalf("by software = %+v", st.BySoftware)
		}
		// An independent count from the events: hosts with an alive check
		// in the 7 days ending each day that had not moved or opted out
		// since their last alive check by that day (in this history, no
		// host checks in again after either); hosts first alive that day,
		// not discovered in warmup and not opted out.
		firstDay := t0.Truncate(day)
		if len(st.Days) != 41 || !st.Days[0].Day.Equal(firstDay) {
			t.Fatalf("days: %d from %v", len(st.Days), st.Days[0].Day)
		}
		discovered, firstAlive := map[string]time.Time{}, map[string]time.Time{}
		aliveDays := map[string][]time.Time{}
		gone := map[string]time.Time{} // the day a host moved or opted out
		for _, e := range evs {
			at := t0.Add(e.at)
			if e.outcome == "" {
				discovered[e.host] = at
			}
			if e.outcome == observer.OutcomeMoved || e.outcome == observer.OutcomeOptedOut {
				gone[e.host] = at.Truncate(day)
			}
			if e.outcome == observer.OutcomeAlive {
				aliveDays[e.host] = append(aliveDays[e.host], at.Truncate(day))
				if _, ok := firstAlive[e.host]; !ok {
					firstAlive[e.host] = at
				}
			}
		}
		for _, d := range st.Days {
			var live, fresh int64
			for h, days := range aliveDays {
				g, isGone := gone[h]
				if slices.ContainsFunc(days, func(a time.Time) bool { return !a.After(d.Day) && d.Day.Sub(a) < 7*day }) &&
					(!isGone || d.Day.Before(g)) {
					live++
				}
				if firstAlive[h].Truncate(day).Equal(d.Day) && !discovered[h].Before(t0.Add(7*day)) && h != "opted.example" {
					fresh++
				}
			}
			if d.Live != live || d.New != fresh {
				t.Errorf("%s: live %d new %d, want %d %d", d.Day.Format(time.DateOnly), d.Live, d.New, live, fresh)
			}
		}
	})
	t.Run("recent_transitions_newest_first", func(t *testing.T) {
		tr, err := s.Reader.RecentTransitions(ctx, now, 3)
		if err != nil {
			t.Fatal(err)
		}
		want := []observer.Transition{
			{Host: "stale.example", From: observer.StateDying, To: observer.StateDead, At: t0.Add(39 * day)},
			{Host: "moved.example", From: observer.StateLive, To: observer.StateMoved, At: t0.Add(39 * day), MovedTo: "new.example"},
			{Host: "moving.example", From: observer.StateLive, To: observer.StateMoving, At: t0.Add(39 * day), MovedTo: "tmp.example"},
		}
		slices.SortFunc(tr, func(a, b observer.Transition) int { return compareStrings(a.Host, b.Host) })
		slices.SortFunc(want, func(a, b observer.Transition) int { return compareStrings(a.Host, b.Host) })
		if !slices.Equal(tr, want) {
			t.Fatalf("recent = %+v\nwant %+v", tr, want)
		}
	})
	// A site built for a moment in the past shows the changes up to it, as
	// its live and new lists do, not the later ones.
	t.Run("recent_transitions_stop_at_now", func(t *testing.T) {
		past := t0.Add(38*day + 12*time.Hour)
		var site build.Data = duck.SiteData{Reader: s.Reader, Now: past}
		tr, err := site.RecentTransitions(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr) == 0 || !tr[0].At.Equal(t0.Add(38*day)) {
			t.Fatalf("recent at %s = %+v, want the changes of day 38 first", past, tr)
		}
		for _, x := range tr {
			if x.At.After(past) {
				t.Errorf("recent at %s shows %+v", past, x)
			}
		}
	})
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestEmptyDataDirDerivesEmptyState(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	for _, full := range []bool{false, true} {
		rep := derive(t, s, config.State{}, full)
		if rep.Hosts != 0 || rep.Transitions != 0 {
			t.Fatalf("empty derivation: %+v", rep)
		}
	}
	views(t, s, t0)
	if got := collect(t, s.Reader.LiveInstances(ctx)); len(got) != 0 {
		t.Fatalf("live = %v", got)
	}
	st, err := s.Reader.Stats(ctx)
	if err != nil || st.Live != 0 || len(st.Days) != 0 {
		t.Fatalf("stats = %+v, %v", st, err)
	}
	for _, v := range []string{"state", "transitions", "live", "new", "stats_daily", "stats_software", "stats WHERE value <> 0"} {
		if got := texts(t, s, "SELECT count(*) FROM "+v); got[0] != "0" {
			t.Errorf("%s has %s rows", v, got[0])
		}
	}
}

func TestViewsWithoutDerivationAreEmpty(t *testing.T) {
	s := openStore(t, t.TempDir())
	write(t, s, "p0", []ev{alive("a.example", 0)})
	views(t, s, t0)
	for _, v := range []string{"state", "transitions", "live", "new", "stats WHERE value <> 0"} {
		if got := texts(t, s, "SELECT count(*) FROM "+v); got[0] != "0" {
			t.Errorf("%s has %s rows before any derivation", v, got[0])
		}
	}
}

// The recent changes are published: they show only hosts a list may show.
// An opted-out host leaves them at once, a blocklisted one never enters, a
// blocklisted redirect target is not named, and a name that was never alive
// (only ever seen in a peers list) is not published for dying.
func TestRecentTransitionsShowOnlyPublishableHosts(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	write(t, s, "p0", concat(
		[]ev{discover("first.example", 0), discover("ok.example", 20*day), alive("ok.example", 30*day)},
		[]ev{discover("spam.example", 20*day), alive("spam.example", 30*day)},
		[]ev{discover("optout.example", 20*day), alive("optout.example", 29*day), optedOut("optout.example", 30*day)},
		[]ev{discover("mover.example", 20*day), alive("mover.example", 29*day), moved("mover.example", 30*day, "a.farm.example")},
		append([]ev{discover("never.example", 20*day)}, series(fail, "never.example", 20*day, 29*time.Hour, 8)...),
	))
	derive(t, s, config.Default().State, false)
	if err := s.Reader.CreateViews(ctx, duck.ViewParams{Now: t0.Add(31 * day), Rules: defaultRules, Blocklist: []string{"spam.example", "*.farm.example"}}); err != nil {
		t.Fatal(err)
	}
	tr, err := s.Reader.RecentTransitions(ctx, t0.Add(31*day), 100)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]observer.Transition{}
	for _, x := range tr { // newest first: keep each host's latest
		if _, ok := got[x.Host]; !ok {
			got[x.Host] = x
		}
	}
	for _, h := range []string{"spam.example", "optout.example", "never.example"} {
		if x, ok := got[h]; ok {
			t.Errorf("published %+v", x)
		}
	}
	if x := got["mover.example"]; x.To != observer.StateMoved || x.MovedTo != "" {
		t.Errorf("mover.example: %+v, want moved without its blocklisted target", x)
	}
	if x := got["ok.example"]; x.To != observer.StateLive {
		t.Errorf("ok.example: %+v, want its change to live", x)
	}
}

// live at a --now in the past leaves out a host first alive after it, as new
// does: both lists describe that moment.
func TestLiveAtPastNowLeavesOutHostsFirstAliveLater(t *testing.T) {
	s := openStore(t, t.TempDir())
	write(t, s, "p0", []ev{
		discover("old.example", 0), alive("old.example", 8*day), alive("old.example", 16*day),
		discover("late.example", 10*day), alive("late.example", 20*day),
	})
	derive(t, s, config.Default().State, false)
	views(t, s, t0.Add(15*day))
	if got := texts(t, s, "SELECT host FROM live"); !slices.Equal(got, []string{"old.example"}) {
		t.Errorf("live at day 15 = %v, want [old.example]", got)
	}
	views(t, s, t0.Add(21*day))
	if got := texts(t, s, "SELECT host FROM live ORDER BY host"); !slices.Equal(got, []string{"late.example", "old.example"}) {
		t.Errorf("live at day 21 = %v, want both", got)
	}
}

// The daily live count follows the live list's definition day by day: a
// host that moves or opts out leaves it on that day, though its last alive
// check's window still runs, and one that opts back in returns; a failing
// host stays in it for the window, as the list keeps it; a blocklisted host
// is on no day.
func TestDailyLiveLeavesMovedAndOptedOutHosts(t *testing.T) {
	ctx := context.Background()
	first := []ev{
		discover("a.example", 0), discover("b.example", 0), discover("c.example", 0), discover("d.example", 0),
		alive("a.example", 10*day), alive("b.example", 10*day), alive("c.example", 10*day), alive("d.example", 10*day),
	}
	later := []ev{
		moved("a.example", 11*day, "new.example"),
		optedOut("c.example", 11*day), alive("c.example", 13*day),
		fail("d.example", 11*day),
	}
	// Derived in one step, and in two (the changes folded onto a state
	// that has the alive checks).
	for _, steps := range [][][]ev{{append(slices.Clone(first), later...)}, {first, later}} {
		s := openStore(t, t.TempDir())
		for i, evs := range steps {
			write(t, s, fmt.Sprintf("p%d", i), evs)
			derive(t, s, config.Default().State, false)
		}
		full := len(steps) == 1
		views(t, s, t0.Add(20*day))
		st, err := s.Reader.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int]int64{10: 4, 11: 2, 12: 2, 13: 3, 16: 3, 17: 1, 19: 1, 20: 0}
		for _, d := range st.Days {
			n := int(d.Day.Sub(t0.Truncate(day)) / day)
			if w, ok := want[n]; ok && d.Live != w {
				t.Errorf("full %v, day %d: live %d, want %d", full, n, d.Live, w)
			}
			if d.Live < 0 {
				t.Errorf("full %v, day %d: live %d", full, n, d.Live)
			}
		}
		// A blocklisted host counts on no day, as in the daily new counts.
		if err := s.Reader.CreateViews(ctx, duck.ViewParams{Now: t0.Add(20 * day), Rules: defaultRules, Blocklist: []string{"b.example"}}); err != nil {
			t.Fatal(err)
		}
		blocked, err := s.Reader.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range blocked.Days {
			n := int(d.Day.Sub(t0.Truncate(day)) / day)
			covered := int64(0)
			if n >= 10 && n <= 16 {
				covered = 1 // b.example's alive check on day 10 and its window
			}
			if d.Live != st.Days[i].Live-covered {
				t.Errorf("full %v, day %d, b.example blocklisted: live %d, want %d", full, n, d.Live, st.Days[i].Live-covered)
			}
		}
	}
}

// Two checks at one instant (snapshot files can hold them) are taken in the
// fold's order: an alive check and an opt-out of a dead host leave it
// reviving, then opted out, so the daily count leaves it out as the list
// does.
func TestDailyLiveOrdersChecksAtOneInstantAsTheFold(t *testing.T) {
	ctx := context.Background()
	st := config.Default().State
	st.FailuresToDead, st.DeadAfter = 2, config.Duration(36*time.Hour)
	s := openStore(t, t.TempDir())
	h := "twin.example"
	write(t, s, "p", []ev{discover(h, 0), alive(h, 0), fail(h, day), fail(h, 2*day), fail(h, 3*day),
		alive(h, 10*day), optedOut(h, 10*day)})
	derive(t, s, st, false)
	if err := s.Reader.CreateViews(ctx, duck.ViewParams{Now: t0.Add(10*day + time.Hour), Rules: rules(st)}); err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, s, h); !strings.HasPrefix(got, "opted_out") {
		t.Fatalf("state %s, want opted_out", got)
	}
	stats, err := s.Reader.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if last := stats.Days[len(stats.Days)-1]; last.Live != 0 {
		t.Errorf("%s: live %d, want 0 (the host opted out)", last.Day.Format(time.DateOnly), last.Live)
	}
}

// An opted-out host leaves every published list at once, and a check that
// fails does not bring it back: robots.txt answering 503 (recorded as
// http_error, the pass disallowed) or unreachable is no allowed check. Only
// one that succeeds is.
func TestOptedOutHostStaysOffTheListsThroughFailedChecks(t *testing.T) {
	s := openStore(t, t.TempDir())
	robots503 := func(host string, at time.Duration) ev { return ev{host, at, observer.OutcomeHTTPError, "", "", false} }
	write(t, s, "p0", concat(
		[]ev{discover("origin.example", 0)},
		[]ev{discover("a.example", 8*day), alive("a.example", 20*day), optedOut("a.example", 21*day), robots503("a.example", 22*day)},
		// Opted out in the middle of dying, then unreachable.
		[]ev{discover("b.example", 8*day), alive("b.example", 20*day), fail("b.example", 21*day),
			optedOut("b.example", 21*day+12*time.Hour), fail("b.example", 22*day)},
		// The same as a, then allowed and alive again: listed.
		[]ev{discover("c.example", 8*day), alive("c.example", 20*day), optedOut("c.example", 21*day), robots503("c.example", 22*day),
			alive("c.example", 22*day+time.Hour)},
	))
	derive(t, s, config.Default().State, true)
	views(t, s, t0.Add(23*day))
	for _, list := range []string{"live", "new"} {
		if got := texts(t, s, "SELECT host FROM "+list+" WHERE host <> 'origin.example' ORDER BY host"); !slices.Equal(got, []string{"c.example"}) {
			t.Errorf("%s = %v, want only c.example", list, got)
		}
	}
	tr, err := s.Reader.RecentTransitions(context.Background(), t0.Add(23*day), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range tr {
		if x.Host == "a.example" || x.Host == "b.example" {
			t.Errorf("recent transitions publish %+v", x)
		}
	}
	if got := texts(t, s, "SELECT live FROM stats_daily ORDER BY day DESC LIMIT 1"); !slices.Equal(got, []string{"1"}) {
		t.Errorf("stats_daily live on the last day = %v, want 1 (c.example)", got)
	}
}

// The warmup is the observer's first warmup [7 days] after its earliest
// record: a host discovered before its end is baseline, one discovered at
// it is not (docs/data.md, new and the schedule). The new list, the daily
// new counts and the schedule draw the line at the same instant.
func TestWarmupEndsAtItsBoundary(t *testing.T) {
	ctx := context.Background()
	st := config.Default().State
	end := st.Warmup.D()
	s := openStore(t, t.TempDir())
	write(t, s, "p0", []ev{
		discover("origin.example", 0),
		discover("baseline.example", end-time.Second), alive("baseline.example", 10*day),
		discover("edge.example", end), alive("edge.example", 10*day),
		discover("unchecked-baseline.example", end-time.Second),
		discover("unchecked-edge.example", end),
	})
	derive(t, s, st, false)
	views(t, s, t0.Add(20*day))
	if got := hostsOf(collect(t, s.Reader.NewInstances(ctx))); !slices.Equal(got, []string{"edge.example"}) {
		t.Errorf("new = %v, want [edge.example]", got)
	}
	if got := texts(t, s, "SELECT new FROM stats_daily WHERE day = DATE '2026-01-15'"); !slices.Equal(got, []string{"1"}) {
		t.Errorf("new on day 10 = %v, want [1] (edge.example)", got)
	}
	next := nextChecks(t, s, t0)
	if got := next["unchecked-baseline.example"]; got != end-time.Second {
		t.Errorf("unchecked-baseline.example due at +%s, want at its discovery", got)
	}
	sum := md5.Sum([]byte("unchecked-edge.example:0"))
	delay := time.Duration(binary.LittleEndian.Uint64(sum[8:])%uint64(st.DiscoveryDelay.D().Microseconds())) * time.Microsecond
	if got := next["unchecked-edge.example"]; got != end+delay {
		t.Errorf("unchecked-edge.example due at +%s, want +%s (its discovery and its delay)", got, end+delay)
	}
}

// The live list takes hosts alive at least once within live_window before
// now, the new list hosts first alive within new_window before it
// (docs/data.md): both windows include their first instant. The views
// themselves are sorted as documented (live by host, new newest first), as
// observer sql shows them.
func TestListWindowsIncludeTheirStart(t *testing.T) {
	st := config.Default().State
	now := t0.Add(40 * day)
	liveStart := 40*day - st.LiveWindow.D()
	newStart := 40*day - st.NewWindow.D()
	s := openStore(t, t.TempDir())
	write(t, s, "p0", []ev{
		discover("origin.example", 0),
		discover("live-edge.example", 8*day), alive("live-edge.example", liveStart),
		discover("live-before.example", 8*day), alive("live-before.example", liveStart-time.Second),
		discover("new-edge.example", 8*day), alive("new-edge.example", newStart), alive("new-edge.example", 39*day),
		discover("new-before.example", 8*day), alive("new-before.example", newStart-time.Second), alive("new-before.example", 39*day),
	})
	derive(t, s, st, false)
	views(t, s, now)
	if got := texts(t, s, "SELECT host FROM live"); !slices.Equal(got, []string{"live-edge.example", "new-before.example", "new-edge.example"}) {
		t.Errorf("live = %v, want live-edge, new-before and new-edge, by host", got)
	}
	if got := texts(t, s, "SELECT host FROM new"); !slices.Equal(got, []string{"live-edge.example", "live-before.example", "new-edge.example"}) {
		t.Errorf("new = %v, want live-edge, live-before and new-edge, newest first", got)
	}
}
