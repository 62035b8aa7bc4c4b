package duck_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
)

// tieCheck is a check written by pass, at offset at from t0.
type tieCheck struct {
	pass    string
	host    string
	at      time.Duration
	outcome observer.Outcome
	name    string // the instance's name, for alive checks
}

func writeTieChecks(t *testing.T, s *duck.Store, checks []tieCheck) {
	t.Helper()
	ctx := context.Background()
	byPass := map[string][]tieCheck{}
	var passes []string
	for _, c := range checks {
		if _, ok := byPass[c.pass]; !ok {
			passes = append(passes, c.pass)
		}
		byPass[c.pass] = append(byPass[c.pass], c)
	}
	for _, pass := range passes {
		w, err := s.Snapshots.NewWriter(pass, duck.WriterOptions{FlushChecks: 1 << 30, FlushEvery: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range byPass[pass] {
			check := observer.Check{Host: observer.Host(c.host), CheckedAt: t0.Add(c.at), Outcome: c.outcome, PassID: pass}
			if c.outcome == observer.OutcomeAlive {
				check.Software, check.Version, check.Name = "mastodon", "4.3.0", c.name
			}
			if err := w.Record(ctx, observer.Result{Check: check}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// Checks of one host at the same instant are ordered by pass_id, then
// class, outcome and moved_to (docs/data.md), and the facts of alive ones
// by pass_id, then software, version and name; the greatest is the later.
// The result does not depend on the order the files were written in, nor
// on whether the instant was folded in a full or an incremental step, nor
// on whether the host's checks are folded with windows (a.example ends
// failing, d.example moving) or without (b.example stays alive, c.example
// failing). d.example pins that the class comes before the outcome: its
// moving check (class T) is later than its unreachable one (class F),
// though "moving" sorts before "unreachable".
//
// The mNN and xNN hosts, a dozen of each, tie the other way round from
// each other: a snapshot file's rows are sorted by outcome, which puts an
// mNN host's two tied checks in the wrong order and an xNN host's in the
// right one, so a fold that kept the order it read them in, or any order
// but the whole one, gets some of them wrong. (Ordered by time alone, the
// windowed fold passed the test's first four hosts in most runs.)
func TestChecksAtTheSameInstant(t *testing.T) {
	const at = day + time.Hour
	first := []tieCheck{
		{"p0", "a.example", time.Hour, observer.OutcomeAlive, "earlier"},
		{"p0", "b.example", time.Hour, observer.OutcomeAlive, "earlier"},
		{"p0", "c.example", time.Hour, observer.OutcomeHTTPError, ""},
		{"p0", "d.example", time.Hour, observer.OutcomeAlive, "earlier"},
	}
	tied := []tieCheck{
		{"p1", "a.example", at, observer.OutcomeAlive, "p1's"},
		{"p2", "a.example", at, observer.OutcomeAlive, "p2's alpha"},
		{"p2", "a.example", at, observer.OutcomeHTTPError, ""},
		{"p2", "a.example", at, observer.OutcomeAlive, "p2's beta"},
		{"p1", "b.example", at, observer.OutcomeAlive, "p1's"},
		{"p2", "b.example", at, observer.OutcomeAlive, "p2's beta"},
		{"p2", "b.example", at, observer.OutcomeAlive, "p2's alpha"},
		{"p1", "c.example", at, observer.OutcomeHTTPError, ""},
		{"p2", "c.example", at, observer.OutcomeUnreachable, ""},
		{"p2", "c.example", at, observer.OutcomeHTTPError, ""},
		{"p2", "d.example", at, observer.OutcomeUnreachable, ""},
		{"p2", "d.example", at, observer.OutcomeMoving, ""},
	}
	states := []string{
		"a.example dying http_error p2's beta",
		"b.example live alive p2's beta",
		"c.example discovered unreachable -",
		"d.example moving moving earlier",
	}
	transitions := []string{
		"a.example discovered>live p0",
		"a.example live>dying p2",
		"b.example discovered>live p0",
		"d.example discovered>live p0",
		"d.example live>dying p2",
		"d.example dying>moving p2",
	}
	for _, kind := range []string{"m", "x"} {
		for i := range 12 {
			host := fmt.Sprintf("%s%02d.example", kind, i)
			first = append(first, tieCheck{"p0", host, time.Hour, observer.OutcomeAlive, "earlier"})
			transitions = append(transitions, host+" discovered>live p0", host+" live>dying p2")
			if kind == "m" {
				tied = append(tied, tieCheck{"p2", host, at, observer.OutcomeMoving, ""},
					tieCheck{"p2", host, at, observer.OutcomeUnreachable, ""})
				states = append(states, host+" moving moving earlier")
				transitions = append(transitions, host+" dying>moving p2")
			} else {
				tied = append(tied, tieCheck{"p2", host, at, observer.OutcomeAlive, "tied"},
					tieCheck{"p2", host, at, observer.OutcomeHTTPError, ""})
				states = append(states, host+" dying http_error tied")
			}
		}
	}
	want := append(states, transitions...)
	reversed := slices.Clone(tied)
	slices.Reverse(reversed)
	for _, tc := range []struct {
		name        string
		tied        []tieCheck
		incremental bool
		byHostName  bool // as when two hosts' hashes collide
		// every host through the windowed fold, in buckets of about this
		// many checks (0: one bucket)
		windowOnly   bool
		bucketChecks int64
	}{
		{"full", tied, false, false, false, 0},
		{"full, files written in the other order", reversed, false, false, false, 0},
		{"incremental", tied, true, false, false, 0},
		{"incremental, files written in the other order", reversed, true, false, false, 0},
		{"full, hosts keyed by name", tied, false, true, false, 0},
		{"incremental, hosts keyed by name", reversed, true, true, false, 0},
		{"full, every host with windows", tied, false, false, true, 0},
		{"full, every host with windows, files written in the other order", reversed, false, false, true, 0},
		{"incremental, every host with windows", tied, true, false, true, 0},
		{"incremental, every host with windows, files written in the other order", reversed, true, false, true, 0},
		{"full, every host with windows, in buckets", reversed, false, false, true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, t.TempDir())
			writeTieChecks(t, s, first)
			if tc.incremental {
				derive(t, s, config.State{}, false)
			}
			writeTieChecks(t, s, tc.tied)
			opts := duck.DeriveOptions{Rules: defaultRules}
			if tc.byHostName {
				opts = duck.KeyByHostName(opts)
			}
			if tc.windowOnly {
				opts = duck.WindowOnly(opts)
			}
			if tc.bucketChecks > 0 {
				opts = duck.WithFoldBuckets(opts, tc.bucketChecks)
			}
			rep, err := s.Deriver.Derive(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Full == tc.incremental {
				t.Fatalf("derivation = %+v, want full %v", rep, !tc.incremental)
			}
			views(t, s, t0.Add(2*day))
			got := append(texts(t, s, `SELECT host || ' ' || state || ' ' || last_outcome || ' ' || coalesce(name, '-')
				FROM state ORDER BY host`),
				texts(t, s, `SELECT host || ' ' || from_state || '>' || to_state || ' ' || pass_id
				FROM transitions ORDER BY host, checked_at, to_state`)...)
			if !slices.Equal(got, want) {
				t.Fatalf("state and transitions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
