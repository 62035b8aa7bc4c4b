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
