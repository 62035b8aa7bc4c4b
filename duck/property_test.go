package duck_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/internal/testsupport"
)

// randomHistory generates days of checks for hosts: each host is discovered
// on a random day and then follows a random mode (alive, failing, moving,
// moved, opted out, flapping) that changes now and then, checked zero to
// perDay times a day at random moments, with gaps, and now and then two
// checks at the same instant. Day d's events come first in the result's d-th
// slice.
func randomHistory(rng *rand.Rand, hosts, days, perDay int) [][]ev {
	out := make([][]ev, days)
	modes := []observer.Outcome{observer.OutcomeAlive, observer.OutcomeUnreachable, observer.OutcomeMoving,
		observer.OutcomeMoved, observer.OutcomeOptedOut, ""}
	for i := range hosts {
		h := fmt.Sprintf("h%04d.example", i)
		born := rng.IntN(days)
		out[born] = append(out[born], discover(h, time.Duration(born)*day+time.Duration(rng.IntN(3600))*time.Second))
		mode := modes[rng.IntN(len(modes))]
		for d := born; d < days; d++ {
			if rng.IntN(5) == 0 {
				mode = modes[rng.IntN(len(modes))]
			}
			n := rng.IntN(perDay + 1)
			if rng.IntN(6) == 0 {
				n = 0 // a gap
			}
			var at []time.Duration
			for range n {
				at = append(at, time.Duration(d)*day+time.Hour+time.Duration(rng.Int64N(int64(22*time.Hour))))
			}
			slices.Sort(at)
			for _, a := range at {
				o := mode
				if o == "" { // flapping
					o = []observer.Outcome{observer.OutcomeAlive, observer.OutcomeHTTPError, observer.OutcomeTooLarge}[rng.IntN(3)]
				}
				target := ""
				if o == observer.OutcomeMoving || o == observer.OutcomeMoved {
					target = fmt.Sprintf("t%d.example", rng.IntN(3))
				}
				out[d] = append(out[d], ev{h, a, o, target, "", rng.IntN(3) == 0})
				if rng.IntN(25) == 0 {
					// A twin: another check of the host at the same instant
					// (a pass never writes one, but files could hold one),
					// which every fold must order the same way.
					twin := []observer.Outcome{observer.OutcomeAlive, observer.OutcomeHTTPError, observer.OutcomeUnreachable}[rng.IntN(3)]
					out[d] = append(out[d], ev{h, a, twin, "", "", false})
				}
			}
		}
	}
	return out
}

// dump renders every derived relation, including the fold's carry columns,
// as sorted lines.
func dump(t *testing.T, s *duck.Store, dir string) map[string][]string {
	t.Helper()
	state, _, err := duck.DerivedState(s)
	if err != nil {
		t.Fatal(err)
	}
	views(t, s, t0.Add(20*day))
	out := map[string][]string{}
	for name, q := range map[string]string{
		"state":       "SELECT * FROM " + state + " ORDER BY host",
		"transitions": "SELECT * FROM transitions ORDER BY ALL",
		"stats_daily": "SELECT * FROM stats_daily ORDER BY ALL",
		"live":        "SELECT * FROM live ORDER BY ALL",
		"new":         "SELECT * FROM new ORDER BY ALL",
	} {
		for _, v := range testsupport.Rows(t, s.Reader, q) {
			out[name] = append(out[name], fmt.Sprint(v))
		}
	}
	return out
}

func compareDumps(t *testing.T, when string, inc, full map[string][]string) {
	t.Helper()
	if len(inc["state"]) == 0 || len(inc["transitions"]) == 0 {
		t.Fatalf("%s: nothing derived", when)
	}
	for name, a := range full {
		b := inc[name]
		if slices.Equal(a, b) {
			continue
		}
		var diff []string
		for _, l := range b {
			if !slices.Contains(a, l) && len(diff) < 6 {
				diff = append(diff, "incremental only: "+l)
			}
		}
		for _, l := range a {
			if !slices.Contains(b, l) && len(diff) < 12 {
				diff = append(diff, "full only:        "+l)
			}
		}
		t.Errorf("%s: %s differs (%d rows incremental, %d full):\n%s", when, name, len(b), len(a), strings.Join(diff, "\n"))
	}
}

// TestIncrementalEqualsFull folds random histories a day or two at a time
// (some days in two files) and checks that the result is the same as a full
// derivation over all files, for several seeds and thresholds. Each full
// derivation is also done with every host through the windowed fold:
// fold_step's fold without windows must agree with it.
func TestIncrementalEqualsFull(t *testing.T) {
	short := config.Default().State
	short.FailuresToDead, short.DeadAfter, short.ReviveAfter = 2, config.Duration(36*time.Hour), config.Duration(2*day)
	// Gaps in the live list are more than live_window apart: two days
	// make them common in twelve.
	short.LiveWindow = config.Duration(2 * day)
	for _, tc := range []struct {
		seed    uint64
		st      config.State
		buckets bool // the windowed fold in many small buckets of hosts
		// At most one check a host a day, derived every day, as a crawl
		// does: most hosts have one new check a step.
		daily bool
	}{{1, short, false, false}, {2, short, false, false}, {3, config.Default().State, false, false},
		{4, short, true, false}, {5, config.Default().State, true, false}, {6, short, false, true}, {7, short, true, true}} {
		t.Run(fmt.Sprintf("seed_%d", tc.seed), func(t *testing.T) {
			// A step touches most of these few hosts: with the default
			// fraction every step would fold and write the whole state.
			// The steps take turns with one under which it does (0.01),
			// one under which it folds the hosts it touches alone and
			// writes a delta or a new base (2), and one under which it
			// writes a delta (100).
			var steps int
			opts := func(full bool) duck.DeriveOptions {
				o := duck.DeriveOptions{Rules: rules(tc.st), Full: full}
				o = duck.WithDeltaFraction(o, []float64{0.01, 2, 100}[steps%3])
				steps++
				if tc.buckets {
					// Buckets of about 500 checks: the windowed fold of
					// 300 hosts splits in a few, and steps in different
					// numbers. And at most two transitions and live events
					// files: most steps merge them.
					o = duck.WithFoldBuckets(o, 500)
					o = duck.WithDerivedParts(o, 2)
					o = duck.WithSeveralInMemory(o, -1)
				}
				return o
			}
			deriveWith := func(s *duck.Store, o duck.DeriveOptions) duck.DeriveReport {
				t.Helper()
				rep, err := s.Deriver.Derive(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			rng := rand.New(rand.NewPCG(tc.seed, 42))
			const days = 12
			perDay := 3
			if tc.daily {
				perDay = 1
			}
			history := randomHistory(rng, 300, days, perDay)
			dir := t.TempDir()
			s := openStore(t, dir)
			var windowed, windowless, oneCheck, deltas int64
			for d := 0; d < days; {
				step := 1 + rng.IntN(2)
				if tc.daily {
					step = 1
				}
				for ; step > 0 && d < days; step-- {
					evs := history[d]
					cut := rng.IntN(len(evs) + 1)
					write(t, s, fmt.Sprintf("d%02d-a", d), evs[:cut])
					write(t, s, fmt.Sprintf("d%02d-b", d), evs[cut:])
					d++
				}
				rep := deriveWith(s, opts(false))
				windowless += rep.Windowless
				windowed += rep.Windowed
				oneCheck += rep.OneCheck
				if rep.Full && rep.FullReason != "no previous derivation" {
					t.Fatalf("day %d: unexpected full derivation: %s", d, rep.FullReason)
				}
				if _, delta, err := duck.DerivedState(s); err != nil {
					t.Fatal(err)
				} else if delta {
					deltas++
				}
				if d == days/2 || d == days {
					inc := dump(t, s, dir)
					fullRep := deriveWith(s, opts(true))
					if !fullRep.Full {
						t.Fatal("not full")
					}
					full := dump(t, s, dir)
					compareDumps(t, fmt.Sprintf("after day %d", d), inc, full)
					if rep := deriveWith(s, duck.WindowOnly(duck.DeriveOptions{Rules: rules(tc.st), Full: true})); rep.Windowless != 0 || rep.Windowed == 0 {
						t.Fatalf("window only: %d hosts windowless, %d windowed", rep.Windowless, rep.Windowed)
					}
					compareDumps(t, fmt.Sprintf("after day %d, every host windowed in one bucket", d), full, dump(t, s, dir))
					// The edge picks and the windowed fold key hosts by a hash
					// unless two hosts' hashes collide; by host name they must
					// fold the same.
					deriveWith(s, duck.KeyByHostName(duck.WindowOnly(duck.DeriveOptions{Rules: rules(tc.st), Full: true})))
					compareDumps(t, fmt.Sprintf("after day %d, every host windowed and keyed by host name", d), full, dump(t, s, dir))
					// The alive days as a bitstring, as for a step of more
					// than 63 days, must fold the same as a BIGINT's bits.
					deriveWith(s, duck.AliveDaysAsBitstring(duck.DeriveOptions{Rules: rules(tc.st), Full: true}))
					compareDumps(t, fmt.Sprintf("after day %d, alive days as a bitstring", d), full, dump(t, s, dir))
				}
			}
			// Both folds must have had hosts to agree on, and steps that
			// wrote a delta.
			if deltas == 0 {
				t.Fatal("no step wrote a delta")
			}
			if windowed == 0 || windowless == 0 || oneCheck == 0 {
				t.Fatalf("incremental steps folded %d hosts with windows, %d without and %d by their one new check", windowed, windowless, oneCheck)
			}
			if tc.daily && oneCheck < windowed+windowless {
				t.Fatalf("daily steps folded only %d hosts by their one new check, %d otherwise", oneCheck, windowed+windowless)
			}
			t.Logf("incremental steps folded %d hosts with windows, %d without and %d by their one new check; %d wrote a delta",
				windowed, windowless, oneCheck, deltas)
		})
	}
}

// TestChecksSpanningYears: when a step's checks span more days than the
// alive-days bitstring covers, alive hosts with long runs are folded with
// windows instead, with the same result.
func TestChecksSpanningYears(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	evs := []ev{discover("a.example", 0), alive("a.example", 0), alive("a.example", 3000*day), alive("a.example", 3001*day),
		discover("b.example", 2990*day), discover("c.example", 0), fail("c.example", 0)}
	evs = append(evs, series(alive, "b.example", 2990*day, day, 12)...)
	write(t, s, "p0", evs)
	rep := derive(t, s, config.Default().State, true)
	// a and b are alive in runs longer than the live window: windowed; c,
	// failing once, needs no bitstring.
	if rep.Windowed != 2 || rep.Windowless != 1 {
		t.Fatalf("windowed %d, windowless %d; want 2 and 1", rep.Windowed, rep.Windowless)
	}
	got := dump(t, s, dir)
	if _, err := s.Deriver.Derive(context.Background(), duck.WindowOnly(duck.DeriveOptions{Rules: defaultRules, Full: true})); err != nil {
		t.Fatal(err)
	}
	compareDumps(t, "spanning years", got, dump(t, s, dir))
}

// TestAliveDaysOverSpans: the alive days are a BIGINT's bits up to 63 days
// and a bitstring beyond (or when a test asks for one); both must find the
// gap in the live list that sends a host to the windowed fold, and must
// fold as the windowed fold does. A 63-day span sets bit 62, the highest
// the BIGINT has.
func TestAliveDaysOverSpans(t *testing.T) {
	st := config.Default().State
	for _, tc := range []struct {
		days      int
		bitstring bool
	}{{63, false}, {63, true}, {64, false}, {400, false}} {
		t.Run(fmt.Sprintf("%d_days_bitstring_%v", tc.days, tc.bitstring), func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			// gapped is alive on days 0-2, then not until day 11: eight
			// days after day 2, past the seven-day live window.
			gapAfter := 3
			write(t, s, "p0", concat(
				[]ev{discover("steady.example", 0), discover("gapped.example", 0)},
				series(alive, "steady.example", 12*time.Hour, day, tc.days),
				series(alive, "gapped.example", 12*time.Hour, day, gapAfter),
				series(alive, "gapped.example", time.Duration(gapAfter+8-1)*day+12*time.Hour, day, tc.days-(gapAfter+8-1)),
			))
			o := duck.DeriveOptions{Rules: rules(st), Full: true}
			if tc.bitstring {
				o = duck.AliveDaysAsBitstring(o)
			}
			rep, err := s.Deriver.Derive(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Windowless != 1 || rep.Windowed != 1 {
				t.Fatalf("windowless %d, windowed %d; want steady.example without windows and gapped.example with", rep.Windowless, rep.Windowed)
			}
			got := dump(t, s, dir)
			if _, err := s.Deriver.Derive(context.Background(), duck.WindowOnly(duck.DeriveOptions{Rules: rules(st), Full: true})); err != nil {
				t.Fatal(err)
			}
			compareDumps(t, "every host windowed", got, dump(t, s, dir))
		})
	}
}
