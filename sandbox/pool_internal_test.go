package sandbox

import (
	"testing"
	"time"
)

// Past one checker per CPU, another starts whenever checkers seldom wait
// for a CPU (checks of real servers), and at most one a fullStartEvery
// while they queue for one (checks of a simulator on the same machine, or
// on a machine others keep busy) or nothing is measured yet.
func TestStartMore(t *testing.T) {
	soon := fullStartEvery / 10
	for _, c := range []struct {
		live, cpus int
		runq, wall float64
		since      time.Duration
		want       bool
	}{
		{live: 0, cpus: 2, want: true},
		{live: 1, cpus: 2, runq: 5, wall: 10, want: true},                // fewer than the CPUs, however queued
		{live: 2, cpus: 2, runq: 0, wall: 0.1, since: soon, want: false}, // too little measured
		{live: 2, cpus: 2, runq: 0.01, wall: 5, since: soon, want: true}, // 0.2 % of their time queued
		{live: 63, cpus: 2, runq: 0.4, wall: 5, since: soon, want: true}, // 8 %
		{live: 2, cpus: 2, runq: 0.5, wall: 5, since: soon, want: false}, // 10 %
		{live: 3, cpus: 2, runq: 2, wall: 5, since: soon, want: false},   // 40 %
		{live: 3, cpus: 2, runq: 2, wall: 5, since: fullStartEvery, want: true},
		{live: 2, cpus: 2, runq: 0, wall: 0.1, since: fullStartEvery, want: true},
		{live: 7, cpus: 8, runq: 2, wall: 5, since: soon, want: true},
		{live: 8, cpus: 8, runq: 2, wall: 5, since: soon, want: false},
	} {
		if got := startMore(c.live, c.cpus, c.runq, c.wall, c.since); got != c.want {
			t.Errorf("startMore(%d live, %d CPUs, %.2f s queued in %.2f s, last start %s ago) = %v, want %v",
				c.live, c.cpus, c.runq, c.wall, c.since, got, c.want)
		}
	}
}

// A finished check tells one waiting check to look again, not all of them;
// the first place, and a wake not used, pass to the next in line.
func TestWaitingChecksAreToldInTurn(t *testing.T) {
	p := &Pool{}
	a, b, c := newWaiter(), newWaiter(), newWaiter()
	told := func() (got []bool) {
		for _, w := range []*waiter{a, b, c} {
			got = append(got, len(w.wake) == 1)
		}
		return got
	}
	want := func(step string, a, b, c bool) {
		t.Helper()
		if got := told(); got[0] != a || got[1] != b || got[2] != c {
			t.Errorf("%s: told %v, want [%v %v %v]", step, got, a, b, c)
		}
	}
	for i, w := range []*waiter{a, b, c} {
		if first := p.queueLocked(w); first != (i == 0) {
			t.Errorf("waiter %d queued first = %v", i, first)
		}
	}
	if !p.queueLocked(a) || len(p.waiters) != 3 {
		t.Fatalf("queueing a waiter again changed the line: %d waiting", len(p.waiters))
	}
	p.wakeLocked(1)
	want("one check's room", true, false, false)
	<-a.wake
	p.leaveLocked(a) // took a checker: b is first now
	want("the first left", false, true, false)
	p.leaveLocked(b) // gave up (its context ended) without using its wake
	want("a wake unused", false, false, true)
	<-c.wake
	p.wakeLocked(-1)
	want("a checker gone", false, false, true)
	if len(p.waiters) != 1 || p.waiters[0] != c {
		t.Errorf("waiting after two left: %d", len(p.waiters))
	}
}
