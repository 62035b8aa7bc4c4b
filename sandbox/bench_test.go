package sandbox_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/sandbox"
)

// The benchmarks measure what isolation costs per check: the protocol and,
// for one process per check, starting, confining and killing a process. The
// fake checker does no network work, so these are upper bounds on the rate.

func benchKnown(n int) []observer.Host {
	known := make([]observer.Host, n)
	for i := range known {
		known[i] = observer.Host(fmt.Sprintf("host%07d.example", i))
	}
	return known
}

func benchChecks(b *testing.B, confine bool, perCheck int, known int) {
	p, _ := newPool(b, confine, func(o *sandbox.PoolOptions) {
		o.ChecksPerProcess = perCheck
		o.Known = knownTable(b, benchKnown(known)...)
	})
	ctx := context.Background()
	opts := crawl.CheckOptions{CheckedAt: at, PassID: "bench", FetchPeers: true}
	b.ResetTimer()
	for b.Loop() {
		r, _ := p.Check(ctx, "peers.social", opts)
		if r.Check.Outcome != observer.OutcomeAlive {
			b.Fatalf("check: %s %s", r.Check.Outcome, r.Check.Error)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
}

// BenchmarkCheckerPool: long-lived checkers, one check after another.
func BenchmarkCheckerPool(b *testing.B) {
	for _, confine := range []bool{false, true} {
		for _, known := range []int{1, 100_000} {
			b.Run(fmt.Sprintf("confined=%v/known=%d", confine, known), func(b *testing.B) {
				benchChecks(b, confine, 1_000_000, known)
			})
		}
	}
}

// BenchmarkCheckerPerProcess: a fresh process for every check.
func BenchmarkCheckerPerProcess(b *testing.B) {
	for _, confine := range []bool{false, true} {
		for _, known := range []int{1, 100_000} {
			b.Run(fmt.Sprintf("confined=%v/known=%d", confine, known), func(b *testing.B) {
				benchChecks(b, confine, 1, known)
			})
		}
	}
}

// BenchmarkCheckerInProcess is the --isolation none baseline.
func BenchmarkCheckerInProcess(b *testing.B) {
	known := crawl.NewKnownSet(1)
	known.Add("known.social")
	opts := crawl.CheckOptions{Known: known, CheckedAt: at, PassID: "bench", FetchPeers: true}
	for b.Loop() {
		fake{}.Check(context.Background(), "peers.social", opts)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
}
