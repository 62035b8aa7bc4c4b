package duck_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
)

// A host whose checks, one a day, all fail (or all redirect for now) and
// cross the threshold after the first new check of a step is folded from a
// few of its checks (sparse, fold_window_hosts). The crossing must be the
// check the fold of every check finds: whether the count or the time
// decides it, whether the check on the threshold's day comes before or
// after the threshold or there is none that day, and from a carried run
// (by time or by count).
// Every case is compared with the fold of every check and with the days as
// a bitstring, and the crossing is pinned by hand.
func TestSparseCrossing(t *testing.T) {
	const h = "a.example"
	redirect := func(host string, at time.Duration) ev { return moving(host, at, "b.example") }
	cases := []struct {
		name   string
		steps  [][]ev // one derivation each: full, then incremental
		want   []string
		sparse int64 // hosts the last step folded sparsely
	}{
		{"the count decides", [][]ev{series(fail, h, 0, 2*day, 12)},
			[]string{"discovered>dead d12"}, 1},
		{"the time decides, its day's check late enough", [][]ev{series(fail, h, 0, day, 12)},
			[]string{"discovered>dead d7"}, 1},
		{"the time decides, its day's check too early",
			[][]ev{concat([]ev{fail(h, 0)}, series(fail, h, day-2*time.Hour, day, 12))},
			[]string{"discovered>dead d7h22"}, 1},
		{"the time decides, no check on its day",
			[][]ev{concat(series(fail, h, 0, day, 7), series(fail, h, 8*day+time.Hour, day, 5))},
			[]string{"discovered>dead d8h1"}, 1},
		{"a redirect", [][]ev{series(redirect, h, 0, day, 12)},
			[]string{"discovered>moving b.example d0", "moving>moved b.example d7"}, 1},
		{"a carried run", [][]ev{series(fail, h, 0, day, 4), series(fail, h, 4*day, day, 8)},
			[]string{"discovered>dead d7"}, 1},
		{"a carried run, the count decides", [][]ev{series(fail, h, 0, 2*day, 3), series(fail, h, 6*day, 2*day, 8)},
			[]string{"discovered>dead d12"}, 1},
		{"two checks a day: every check", [][]ev{series(fail, h, 0, 12*time.Hour, 20)},
			[]string{"discovered>dead d7"}, 0},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			var rep duck.DeriveReport
			for i, evs := range tc.steps {
				write(t, s, "p"+string(rune('0'+i)), evs)
				rep = derive(t, s, config.State{}, false)
				if rep.Full != (i == 0) {
					t.Fatalf("step %d: full = %v", i, rep.Full)
				}
			}
			if rep.Sparse != tc.sparse {
				t.Fatalf("%d hosts folded sparsely, want %d", rep.Sparse, tc.sparse)
			}
			views(t, s, t0.Add(30*day))
			if got := transitionsOf(t, s, h); !slices.Equal(got, tc.want) {
				t.Fatalf("transitions %q, want %q", got, tc.want)
			}
			got := dump(t, s, dir)
			if _, err := s.Deriver.Derive(context.Background(), duck.WindowOnly(duck.DeriveOptions{Rules: defaultRules, Full: true})); err != nil {
				t.Fatal(err)
			}
			compareDumps(t, "every check folded", got, dump(t, s, dir))
			// The days as a bitstring (a step of more than 63 days) find the
			// same few checks.
			rep, err := s.Deriver.Derive(context.Background(), duck.AliveDaysAsBitstring(duck.DeriveOptions{Rules: defaultRules, Full: true}))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Sparse != tc.sparse {
				t.Fatalf("days as a bitstring: %d hosts folded sparsely, want %d", rep.Sparse, tc.sparse)
			}
			compareDumps(t, "days as a bitstring", got, dump(t, s, dir))
		})
	}
}
