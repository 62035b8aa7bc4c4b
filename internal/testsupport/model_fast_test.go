package testsupport_test

import (
	"context"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/fedisim"
	"github.com/fediverse-observer/observer/internal/testsupport"
)

// FastModelChecker's checks are the crawler's: over a sample of a seeded
// spread world's hosts (hubs, every family, the dead, the revived, the
// unborn, names that never were servers), each checked in turn at times
// from before Day0 to day 75 (the same cache day twice, the next day, a
// month on), without the peers list, with it unconditionally and with the
// validators of the list last read, the same result (duration apart: wall
// time), the same trace and the same 304s counted as ModelChecker's, which
// runs the crawler every time. Every kind of reused reading (a kept
// result, a list read from a kept prelude) must have been reused often
// enough for that to mean something.
func TestFastModelCheckerIsTheCrawler(t *testing.T) {
	const n = 3000
	sim, err := fedisim.New(fedisim.Config{Seed: 26, Instances: n, Spread: &fedisim.Spread{}})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := testsupport.ModelChecker(sim, crawl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fast, err := testsupport.FastModelChecker(sim, crawl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	known := crawl.NewKnownSet(n)
	for i := 0; i < n; i += 10 {
		known.Add(observer.Host(sim.Host(i)))
	}
	day0, h := sim.Config().Day0, time.Hour
	times := []time.Time{day0.Add(-200 * 24 * h), day0.Add(3*h + 17*time.Minute), day0.Add(5*h + 2*time.Minute), day0.Add(29 * h),
		day0.Add(20*24*h + 9*h), day0.Add(20*24*h + 11*h), day0.Add(50 * 24 * h), day0.Add(75 * 24 * h)}
	ctx := context.Background()
	// reused counts the checks answered from a kept result, fromPrelude
	// those that read the list from a kept prelude.
	reused, fromPrelude := map[string]int{}, map[string]int{}
	validators := map[observer.Host]observer.PeersValidators{}
	check := func(host observer.Host, at time.Time, o crawl.CheckOptions, kind string) observer.Result {
		t.Helper()
		o.Known, o.CheckedAt, o.PassID = known, at, "p"
		before := sim.Stats()
		want, wantTrace := slow.Check(ctx, host, o)
		mid := sim.Stats()
		got, gotTrace := fast.Check(ctx, host, o)
		after := sim.Stats()
		switch fastReq, slowReq := after.Requests-mid.Requests, mid.Requests-before.Requests; {
		case fastReq == 0 && slowReq > 0:
			reused[kind]++
		case fastReq > 0 && fastReq < slowReq:
			fromPrelude[kind]++
		}
		if wantNM, gotNM := mid.NotModified-before.NotModified, after.NotModified-mid.NotModified; wantNM != gotNM {
			t.Errorf("%s at %s (%s): %d answered 304 by the fast checker, %d by the crawler", host, at, kind, gotNM, wantNM)
		}
		want.Check.DurationMS, got.Check.DurationMS = 0, 0
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s at %s (%s):\nfast    %+v\ncrawler %+v", host, at, kind, got, want)
		}
		if !reflect.DeepEqual(gotTrace, wantTrace) {
			t.Errorf("%s at %s (%s): traces differ:\nfast    %+v\ncrawler %+v", host, at, kind, gotTrace, wantTrace)
		}
		return want
	}
	var alive, dead, lists int
	for _, at := range times {
		for i := 0; i < n; i += 7 {
			host := observer.Host(sim.Host(i))
			res := check(host, at, crawl.CheckOptions{}, "without the list")
			switch res.Check.Outcome {
			case observer.OutcomeAlive:
				alive++
			case observer.OutcomeUnreachable:
				dead++
			}
			res = check(host, at, crawl.CheckOptions{FetchPeers: true, PeersValidators: validators[host]}, "with the last validators")
			if res.Check.PeersFetched {
				lists++
				validators[host] = res.Check.PeersValidators
			}
			if v := res.Check.PeersValidators; v != (observer.PeersValidators{}) {
				check(host, at, crawl.CheckOptions{FetchPeers: true, PeersValidators: v}, "with the validators just read")
			}
		}
	}
	if alive < 500 || dead < 200 || lists < 300 || reused["without the list"] < 1000 || reused["with the last validators"] < 100 ||
		reused["with the validators just read"] < 100 || fromPrelude["with the last validators"] < 100 {
		t.Errorf("sample too thin: %d alive, %d dead, %d lists read, reused: %v, lists read from a prelude: %v", alive, dead, lists, reused, fromPrelude)
	}
}

// BenchmarkFastModelCheckerLists measures the model's check of a host
// whose peers list it reads in full, the kind of check it cannot answer
// from a kept result: over the hosts of a seeded world that serve one on
// day 20, each read unconditionally in turn, a minute apart.
func BenchmarkFastModelCheckerLists(b *testing.B) {
	sim, err := fedisim.New(fedisim.Config{Seed: 26, Instances: 3000, Spread: &fedisim.Spread{}})
	if err != nil {
		b.Fatal(err)
	}
	fast, err := testsupport.FastModelChecker(sim, crawl.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	at := sim.Config().Day0.Add(20 * 24 * time.Hour)
	var hosts []observer.Host
	for i := range sim.Config().Instances {
		host := observer.Host(sim.Host(i))
		if res, _ := fast.Check(ctx, host, crawl.CheckOptions{FetchPeers: true, CheckedAt: at}); res.Check.PeersFetched {
			hosts = append(hosts, host)
		}
	}
	if len(hosts) < 100 {
		b.Fatalf("only %d hosts serve a list", len(hosts))
	}
	i := 0
	cpu := processCPU()
	for b.Loop() {
		i++
		fast.Check(ctx, hosts[i%len(hosts)], crawl.CheckOptions{FetchPeers: true, CheckedAt: at.Add(time.Duration(i) * time.Minute)})
	}
	// On a shared machine CPU time is the steadier measure.
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
