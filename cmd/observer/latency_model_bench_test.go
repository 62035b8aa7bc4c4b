package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/build"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/fedisim"
	"github.com/fediverse-observer/observer/internal/cliflag"
	"github.com/fediverse-observer/observer/internal/crawlpass"
	"github.com/fediverse-observer/observer/internal/testsupport"
)

// The discovery-latency benchmark without the network, for worlds a
// networked run does not fit (a million instances on 2 cores): the same
// scheduling code as observer crawl (its config, due list, budgets,
// per-address politeness at the simulator's addresses, snapshots, passes
// row: crawlpass.Run), with the observer's crawler answered in-process by
// the spread model (testsupport.ModelChecker, which a test holds to what
// the crawler reads over the network), its reading of a host's answers
// that do not move with the time (a dead host, robots.txt and NodeInfo, a
// list's 304) reused for the later checks that read them
// (testsupport.FastModelChecker, which a test holds equal to
// ModelChecker): every list body is still read by the crawler. After each
// pass, instead of building the whole site, it derives and reads the new
// list as observer build does and takes its newest build.FeedLimit
// entries: what new.atom would hold; that derivation is the one the next
// pass reads its schedule from (see modelPass). The figures are
// BenchmarkDiscoveryLatency's; each simulated day's line says where its
// wall time went.
//
// Settings (environment):
//
//	OBSERVER_MODEL_INSTANCES  instances of the model (default 1000000)
//	OBSERVER_MODEL_DAYS       simulated days (default 60)
//	OBSERVER_LATENCY_PASS     time between passes (default 2h)
//	OBSERVER_LATENCY_CONFIG   extra lines for observer.toml's [crawl] table
//	OBSERVER_MODEL_REPORT     print the figures so far every this many simulated days too
//	                          (default 0: at the end only), for a run that may not finish
//
// make bench-latency-model runs it (MODEL_INSTANCES, MODEL_DAYS).
func BenchmarkDiscoveryLatencyModel(b *testing.B) {
	n := benchEnvInt("OBSERVER_MODEL_INSTANCES", 1_000_000)
	days := benchEnvInt("OBSERVER_MODEL_DAYS", 60)
	every := latencyEvery(b)
	for i := 0; i < b.N; i++ {
		runModelWorld(b, n, days, every, benchEnvInt("OBSERVER_MODEL_REPORT", 0)).report(b)
	}
}

func runModelWorld(b *testing.B, n, days int, every time.Duration, reportEvery int) latencyFigures {
	ctx := context.Background()
	sim, err := fedisim.New(fedisim.Config{Seed: 26, Instances: n, Spread: &fedisim.Spread{}})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	site := filepath.Join(dir, "site")
	if code, _, stderr := runObserverB(b, "new", "site", site); code != 0 {
		b.Fatalf("observer new site: %s", stderr)
	}
	seeds := strings.Join(sim.Seeds(5), "\n") + "\n"
	if err := os.WriteFile(filepath.Join(site, "data", "seeds.txt"), []byte(seeds), 0o644); err != nil {
		b.Fatal(err)
	}
	conf := filepath.Join(site, "observer.toml")
	if err := os.WriteFile(conf, []byte(latencyConfig()), 0o644); err != nil {
		b.Fatal(err)
	}
	data := filepath.Join(site, "data")
	// The derivation runs in a child, this test binary as observer.
	b.Setenv("OBSERVER_TEST_MAIN", "1")
	e := env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: os.Stderr}
	start := time.Now()
	// The spread model's index of links is built on first use: not a cost
	// of the first pass.
	sim.FirstNamed(0, sim.Config().Day0)
	fmt.Fprintf(os.Stderr, "bench-latency-model: %d instances, model ready in %s\n", n, time.Since(start).Round(time.Second))

	day0 := sim.Config().Day0
	end := day0.Add(time.Duration(days) * 24 * time.Hour)
	listedAt := map[string]time.Time{}
	ids := map[string]string{}
	f := latencyFigures{instances: n, days: days, every: every, byState: map[string]float64{}}
	var passWall, listWall time.Duration
	var cost passCost
	// Made by the first pass and kept: it keeps the crawler's readings
	// from pass to pass.
	var checker crawl.Checker
	start = time.Now()
	cpu0 := processCPU()
	for t := day0; t.Before(end); t = t.Add(every) {
		now := t.Format(time.RFC3339)
		crawlStart := time.Now()
		modelPass(ctx, b, e, sim, []string{"--quiet", "--config", conf, "--data", data, "--now", now, "--isolation", "none"}, &checker, &cost)
		passWall += time.Since(crawlStart)
		// What observer build after the pass renders into new.atom.
		built := t.Add(time.Since(crawlStart).Truncate(time.Second) + time.Second)
		listStart := time.Now()
		for _, inst := range newFeed(ctx, b, e, conf, data, built) {
			first := inst.FirstAliveAt.UTC()
			host, id := string(inst.Host), first.Format("2006-01-02")+"/"+string(inst.Host)
			if _, ok := listedAt[host]; !ok {
				listedAt[host] = built
			}
			if was, ok := ids[host]; ok && was != id {
				f.idChanges++
			}
			ids[host] = id
		}
		listWall += time.Since(listStart)
		f.passes++
		if next := t.Add(every); next.Sub(day0)/(24*time.Hour) != t.Sub(day0)/(24*time.Hour) {
			day := int(next.Sub(day0) / (24 * time.Hour))
			fmt.Fprintf(os.Stderr, "bench-latency-model: day %d of %d done, %s since the start, %s of CPU (passes %s: %d checks in %s, due lists %s; new lists %s)\n",
				day, days, time.Since(start).Round(time.Second), (processCPU() - cpu0).Round(time.Second), passWall.Round(time.Second),
				cost.checks, cost.checking.Round(time.Second), cost.due.Round(time.Second), listWall.Round(time.Second))
			if reportEvery > 0 && day%reportEvery == 0 && day < days {
				sofar := f
				sofar.days, sofar.wall, sofar.byState = day, time.Since(start), map[string]float64{}
				sofar.fromTruth(b, sim, data, listedAt, day0, next)
				fmt.Fprintf(os.Stderr, "bench-latency-model: the figures after day %d:\n%s", day, sofar.String())
			}
		}
	}
	f.wall = time.Since(start)
	f.fromTruth(b, sim, data, listedAt, day0, end)
	return f
}

// runObserverB runs one command in-process, for a benchmark.
func runObserverB(b *testing.B, args ...string) (code int, stdout, stderr string) {
	b.Helper()
	var out, errb strings.Builder
	code = run(context.Background(), env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

// processCPU is the CPU time this process has used: under a shared
// machine's load, a steadier cost than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return cpuOf(&ru)
}

// passCost is where the passes' wall time went: the time to the due list
// (opening the data directory, loading the known hosts, reading the
// schedule) and the checks, with how many were made.
type passCost struct {
	due, checking time.Duration
	checks        int64
}

// modelPass runs one crawl pass as observer crawl with args would, but for
// its checks, which the spread model answers in-process (by *checker,
// made with the pass's crawler options when nil), and its addresses,
// which are the simulator's (Sim.AddrOf). It adds its costs to cost.
func modelPass(ctx context.Context, b *testing.B, e env, sim *fedisim.Sim, args []string, checker *crawl.Checker, cost *passCost) {
	f, err := parseCrawlFlags(e, args)
	if err != nil {
		b.Fatal(err)
	}
	o, err := f.passOptions(e)
	if err != nil {
		b.Fatal(err)
	}
	cfg, log, err := f.common.setup(e)
	if err != nil {
		b.Fatal(err)
	}
	f.overrideConfig(&cfg)
	opts, _, err := f.network.crawler(cfg, log)
	if err != nil {
		b.Fatal(err)
	}
	if *checker == nil {
		if *checker, err = testsupport.FastModelChecker(sim, opts); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	var checking time.Time
	var first sync.Once
	firstCheck := func() { checking = time.Now() }
	o.Checker = crawl.CheckFunc(func(ctx context.Context, host observer.Host, co crawl.CheckOptions) (observer.Result, crawl.Trace) {
		first.Do(firstCheck)
		atomic.AddInt64(&cost.checks, 1)
		return (*checker).Check(ctx, host, co)
	})
	o.Pass.Resolve = func(_ context.Context, h observer.Host) (netip.AddrPort, error) {
		return netip.ParseAddrPort(sim.AddrOf(string(h)))
	}
	// The derivation the deployment runs at the start of a pass finds
	// nothing new here: the new list read after the previous pass
	// (newFeed) derived from every snapshot the data directory holds,
	// and a pass writes before its derivation only the seed list's new
	// hosts, which are new in the first pass alone, where a data
	// directory that knew no host is not derived (crawlpass.dueHosts).
	// So the schedule is the one a derivation would read, without a
	// child process started to find that out.
	o.Derive = func(context.Context) error { return nil }
	// A pass cut short by its budget counts as done, as the deployment
	// counts exit status 3.
	err = crawlpass.Run(ctx, o)
	first.Do(firstCheck)
	cost.due += checking.Sub(start)
	cost.checking += time.Since(checking)
	if err != nil && !errors.As(err, new(*crawlpass.CutShortError)) {
		b.Fatalf("crawl pass at %s: %v", f.common.at().Format(time.RFC3339), err)
	}
}

// newFeed is what new.atom holds when observer build runs at now: the
// newest build.FeedLimit entries of the new list, derived as the build
// derives it.
func newFeed(ctx context.Context, b *testing.B, e env, conf, data string, now time.Time) []observer.Instance {
	c := common{config: conf, data: data, logging: cliflag.Log{Format: "text", Quiet: true}}
	cfg, log, err := c.setup(e)
	if err != nil {
		b.Fatal(err)
	}
	store, _, err := openViews(ctx, c, cfg, log, now, false, false)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	var list []observer.Instance
	for inst, err := range store.Reader.NewInstances(ctx) {
		if err != nil {
			b.Fatal(err)
		}
		list = append(list, inst)
		if len(list) == build.FeedLimit {
			break
		}
	}
	return list
}
