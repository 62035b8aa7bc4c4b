package duck_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/config"
)

// A run's threshold is crossed at the first check past both failures_to_dead
// and dead_after: whether the count or the time decides it, whether the
// check on the threshold's day comes before or after the threshold or there
// is none that day, and from a carried run (by time or by count).
func TestThresholdCrossing(t *testing.T) {
	const h = "a.example"
	redirect := func(host string, at time.Duration) ev { return moving(host, at, "b.example") }
	cases := []struct {
		name  string
		steps [][]ev // one derivation each: full, then incremental
		want  []string
	}{
		{"the count decides", [][]ev{series(fail, h, 0, 2*day, 12)},
			[]string{"discovered>dead d12"}},
		{"the time decides, its day's check late enough", [][]ev{series(fail, h, 0, day, 12)},
			[]string{"discovered>dead d7"}},
		{"the time decides, its day's check too early",
			[][]ev{concat([]ev{fail(h, 0)}, series(fail, h, day-2*time.Hour, day, 12))},
			[]string{"discovered>dead d7h22"}},
		{"the time decides, no check on its day",
			[][]ev{concat(series(fail, h, 0, day, 7), series(fail, h, 8*day+time.Hour, day, 5))},
			[]string{"discovered>dead d8h1"}},
		{"a redirect", [][]ev{series(redirect, h, 0, day, 12)},
			[]string{"discovered>moving b.example d0", "moving>moved b.example d7"}},
		{"a carried run", [][]ev{series(fail, h, 0, day, 4), series(fail, h, 4*day, day, 8)},
			[]string{"discovered>dead d7"}},
		{"a carried run, the count decides", [][]ev{series(fail, h, 0, 2*day, 3), series(fail, h, 6*day, 2*day, 8)},
			[]string{"discovered>dead d12"}},
		{"two checks a day", [][]ev{series(fail, h, 0, 12*time.Hour, 20)},
			[]string{"discovered>dead d7"}},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			for i, evs := range tc.steps {
				write(t, s, "p"+string(rune('0'+i)), evs)
				rep := derive(t, s, config.State{}, false)
				if rep.Full != (i == 0) {
					t.Fatalf("step %d: full = %v", i, rep.Full)
				}
			}
			views(t, s, t0.Add(30*day))
			if got := transitionsOf(t, s, h); !slices.Equal(got, tc.want) {
				t.Fatalf("transitions %q, want %q", got, tc.want)
			}
		})
	}
}
