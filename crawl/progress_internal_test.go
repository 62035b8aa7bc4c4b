package crawl

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
)

type countSink struct{ n int }

func (c *countSink) Record(context.Context, observer.Result) error { c.n++; return nil }

func TestProgressCountsAndPassesOn(t *testing.T) {
	next := &countSink{}
	p := NewProgress(next, 10, 0)
	for _, o := range []observer.Outcome{observer.OutcomeAlive, observer.OutcomeAlive, observer.OutcomeUnreachable} {
		p.Record(context.Background(), observer.Result{Check: observer.Check{Outcome: o}})
	}
	s := p.snapshot()
	if next.n != 3 || s.Done != 3 || s.ByOutcome[observer.OutcomeAlive] != 2 || s.ByOutcome[observer.OutcomeUnreachable] != 1 {
		t.Fatalf("sink got %d, snapshot %+v", next.n, s)
	}
}

// Hosts discovered in the pass and admitted to it are hosts to check:
// they count in due, and the refused ones do not.
func TestProgressDueCountsAdmittedDiscoveries(t *testing.T) {
	p := NewProgress(&countSink{}, 2, 0)
	admit := p.Admitting(func(hosts []observer.Host) []observer.Host {
		return slices.DeleteFunc(hosts, func(h observer.Host) bool { return h == "refused.example" })
	})
	admit([]observer.Host{"a.example", "refused.example"})
	admit([]observer.Host{"b.example"})
	for range 4 {
		p.Record(context.Background(), observer.Result{Check: observer.Check{Outcome: observer.OutcomeAlive}})
	}
	s := p.snapshot()
	if s.Due != 4 || s.Discovered != 2 || s.Done != 4 {
		t.Fatalf("snapshot %+v, want due 4 (2 listed, 2 discovered), done 4", s)
	}
	if got, want := s.line(), "4/4 checks (2 discovered in this pass)"; !strings.HasPrefix(got, want) {
		t.Fatalf("line = %q, want it to start %q", got, want)
	}
}

func TestProgressLine(t *testing.T) {
	s := progressSnapshot{Done: 50, Due: 150, Elapsed: 10 * time.Second,
		ByOutcome: map[observer.Outcome]int64{observer.OutcomeAlive: 40, observer.OutcomeUnreachable: 10}}
	if got, want := s.line(), "50/150 checks, 5.0/s, alive 40, unreachable 10, 20s left"; got != want {
		t.Fatalf("line = %q, want %q", got, want)
	}
	// The budget caps the estimate.
	s.Budget = 15 * time.Second
	if got := s.line(); !strings.HasSuffix(got, ", 5s left") {
		t.Fatalf("budget not applied: %q", got)
	}
	// Nothing done yet and no budget: no estimate.
	if got := (progressSnapshot{Due: 3, Elapsed: time.Second}).line(); got != "0/3 checks, 0.0/s" {
		t.Fatalf("empty line = %q", got)
	}
}
