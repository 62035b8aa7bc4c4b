package duck_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
)

// nextCheck is host's next_check_at as an offset from t0, less its jitter's
// lower bound: the interval it was given is then within [0, 2*jitter].
func nextCheck(t *testing.T, s *duck.Store, host string) time.Duration {
	t.Helper()
	got := nextChecks(t, s, t0)
	d, ok := got[host]
	if !ok {
		t.Fatalf("%s has no next check", host)
	}
	return d
}

// Dead and never-alive hosts back off: each failed check doubles the
// interval up to backoff_max, and a host that answers again is back on the
// active interval at once.
func TestBackoff(t *testing.T) {
	st := config.Default().State
	active, jA := st.ActiveInterval.D(), st.ActiveJitter.D()
	inactive, jI := st.InactiveInterval.D(), st.InactiveJitter.D()
	within := func(t *testing.T, host string, got, want, jitter time.Duration) {
		t.Helper()
		if got < want-jitter || got > want+jitter {
			t.Errorf("%s due at +%s, want +%s ± %s", host, got, want, jitter)
		}
	}

	s := openStore(t, t.TempDir())
	// Never alive, checked k times, the last at day 40.
	var evs []ev
	for k := 1; k <= 12; k++ {
		h := fmt.Sprintf("never%02d.example", k)
		evs = append(evs, discover(h, 0))
		evs = append(evs, series(fail, h, 40*day-time.Duration(k-1)*time.Hour, time.Hour, k)...)
	}
	// Alive on days 0 to 9, then failing daily from day 10: dead once more
	// than failures_to_dead failures span dead_after.
	evs = append(evs, discover("gone.example", 0))
	evs = append(evs, series(alive, "gone.example", 0, day, 10)...)
	evs = append(evs, series(fail, "gone.example", 10*day, day, 20)...)
	write(t, s, "p0", evs)
	derive(t, s, st, false)
	views(t, s, t0.Add(40*day))

	for k := 1; k <= 12; k++ {
		h := fmt.Sprintf("never%02d.example", k)
		want := min(active*time.Duration(1<<(k-1)), st.BackoffMax.D())
		within(t, h, nextCheck(t, s, h)-40*day, want, jA)
	}
	// 20 failures, the state's failures count; dead from the 8th (day 17,
	// past dead_after of 7 days) on: 20 - failures_to_dead - 1 doublings
	// of the inactive interval, capped.
	if got := stateOf(t, s, "gone.example"); got != "dead since d17" {
		t.Fatalf("gone.example: %s", got)
	}
	last := 29 * day
	wantGone := min(inactive*time.Duration(1<<(20-st.FailuresToDead-1)), st.BackoffMax.D())
	within(t, "gone.example", nextCheck(t, s, "gone.example")-last, wantGone, jI)

	// Fewer failures past dead: the interval is shorter, doubling.
	s2 := openStore(t, t.TempDir())
	var evs2 []ev
	for extra := 0; extra < 4; extra++ {
		h := fmt.Sprintf("dead%d.example", extra)
		evs2 = append(evs2, discover(h, 0))
		evs2 = append(evs2, series(alive, h, 0, day, 3)...)
		// failures_to_dead+1 failures over 8 days make it dead; then extra more.
		n := st.FailuresToDead + 1 + extra
		evs2 = append(evs2, series(fail, h, 3*day, 8*day/time.Duration(st.FailuresToDead), n)...)
	}
	write(t, s2, "p0", evs2)
	derive(t, s2, st, false)
	views(t, s2, t0.Add(60*day))
	for extra := 0; extra < 4; extra++ {
		h := fmt.Sprintf("dead%d.example", extra)
		if got := stateOf(t, s2, h); len(got) < 4 || got[:4] != "dead" {
			t.Fatalf("%s: %s", h, got)
		}
		n := st.FailuresToDead + 1 + extra
		lastAt := 3*day + time.Duration(n-1)*(8*day/time.Duration(st.FailuresToDead))
		within(t, h, nextCheck(t, s2, h)-lastAt, inactive*time.Duration(1<<extra), jI)
	}

	// gone.example answers again on day 200: reviving, and back on the
	// active interval.
	write(t, s, "p1", []ev{alive("gone.example", 200*day)})
	derive(t, s, st, false)
	views(t, s, t0.Add(200*day))
	if got := stateOf(t, s, "gone.example"); got != "reviving since d200" {
		t.Fatalf("gone.example after answering: %s", got)
	}
	within(t, "gone.example", nextCheck(t, s, "gone.example")-200*day, active, jA)
}

// peersDue is the known hosts whose peers lists are due at now by sched.
func peersDue(t *testing.T, s *duck.Store, now time.Time, sched duck.PeersSchedule) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	if err := s.Reader.DueHosts(context.Background(), now, sched, func(d duck.DueHost) {
		if d.FetchPeers && !d.New {
			out[string(d.Host)] = true
		}
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// A peers list earns its rate: one with validators that named hosts first
// discovered through it lately is due after peers_min_interval, one that
// named none waits peers_interval,
// and a live host whose list is due is on the due list though its check
// is not.
func TestPeersEarnedRate(t *testing.T) {
	st := config.Default().State
	s := openStore(t, t.TempDir())
	evs := []ev{
		discover("hub.example", 0), alive("hub.example", 20*day),
		discover("quiet.example", 0), alive("quiet.example", 20*day),
	}
	// hub.example named 60 hosts on day 18 (within the last
	// peers_interval); quiet.example named one on day 10 (before).
	for i := range 60 {
		evs = append(evs, ev{host: fmt.Sprintf("h%02d.example", i), at: 18 * day, via: "hub.example"})
	}
	evs = append(evs, ev{host: "old.example", at: 10 * day, via: "quiet.example"})
	write(t, s, "p0", evs)
	derive(t, s, st, false)
	views(t, s, t0)
	sched := duck.PeersSchedule{Interval: 7 * day, MinInterval: 4 * time.Hour}
	dueAt := func(now time.Time) map[string]bool { return peersDue(t, s, now, sched) }
	at := func(d time.Duration) time.Time { return t0.Add(20*day + d) }
	// The hub's list, which has validators, is due after
	// peers_min_interval, on the due list though its next check is a day
	// away.
	if got := dueAt(at(4*time.Hour - time.Second)); got["hub.example"] {
		t.Error("hub.example's list due before peers_min_interval")
	}
	if got := dueAt(at(4 * time.Hour)); !got["hub.example"] || got["quiet.example"] {
		t.Errorf("after 4h: peers due for %v, want hub.example's and not quiet.example's", got)
	}
	if got := dueAt(at(7*day - time.Second)); got["quiet.example"] {
		t.Error("quiet.example's list due before peers_interval")
	}
	if got := dueAt(at(7 * day)); !got["quiet.example"] {
		t.Error("quiet.example's list not due after peers_interval")
	}
}

// A quiet peers list whose server gives validators is asked for again after
// peers_conditional_interval (an unchanged one costs a 304), one without
// them still waits peers_interval, and one that keeps naming new hosts is
// still due after peers_min_interval.
func TestQuietListWithValidatorsIsAskedConditionally(t *testing.T) {
	st := config.Default().State
	s := openStore(t, t.TempDir())
	at := func(d time.Duration) time.Time { return t0.Add(20*day + d) }
	check := func(host, etag string) observer.Check {
		c := observer.Check{Host: observer.Host(host), CheckedAt: at(0), Outcome: observer.OutcomeAlive, Software: "pleroma", PeersFetched: true}
		c.PeersETag = etag
		return c
	}
	recordChecks(t, s, "p0", check("quiet.example", `"v1"`), check("plain.example", ""), check("hub.example", `"h1"`))
	var evs []ev
	for i := range 5 {
		evs = append(evs, ev{host: fmt.Sprintf("h%d.example", i), at: 20 * day, via: "hub.example"})
	}
	write(t, s, "p1", evs)
	derive(t, s, st, false)
	views(t, s, t0)
	sched := duck.PeersSchedule{Interval: 7 * day, MinInterval: time.Hour, Conditional: 12 * time.Hour}
	dueAt := func(now time.Time) map[string]bool { return peersDue(t, s, now, sched) }
	if got := dueAt(at(time.Hour)); !got["hub.example"] || got["quiet.example"] || got["plain.example"] {
		t.Errorf("after 1h: peers due for %v, want hub.example's alone", got)
	}
	if got := dueAt(at(12*time.Hour - time.Second)); got["quiet.example"] {
		t.Error("quiet.example's list due before peers_conditional_interval")
	}
	if got := dueAt(at(12 * time.Hour)); !got["quiet.example"] || got["plain.example"] {
		t.Errorf("after 12h: peers due for %v, want quiet.example's and not plain.example's", got)
	}
	if got := dueAt(at(7*day - time.Second)); got["plain.example"] {
		t.Error("plain.example's list, without validators, due before peers_interval")
	}
	if got := dueAt(at(7 * day)); !got["plain.example"] {
		t.Error("plain.example's list not due after peers_interval")
	}
	// Without a conditional interval the quiet list waits peers_interval,
	// as one without validators.
	sched.Conditional = 0
	if got := dueAt(at(7*day - time.Second)); got["quiet.example"] {
		t.Error("without peers_conditional_interval, quiet.example's list due before peers_interval")
	}
}
