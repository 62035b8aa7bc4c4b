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
//	OBSERVER_MODEL_DIR        a directory that keeps the run's site and a checkpoint after
//	                          each simulated day (default: a temporary directory, no checkpoints);
//	                          a run started on it again continues from its checkpoint
//	                          (see modelCheckpoint), so a run longer than a session is
//	                          run in segments
//
// make bench-latency-model runs it (MODEL_INSTANCES, MODEL_DAYS, MODEL_DIR).
func BenchmarkDiscoveryLatencyModel(b *testing.B) {
	m := modelRun{
		instances:   benchEnvInt("OBSERVER_MODEL_INSTANCES", 1_000_000),
		days:        benchEnvInt("OBSERVER_MODEL_DAYS", 60),
		every:       latencyEvery(b),
		reportEvery: benchEnvInt("OBSERVER_MODEL_REPORT", 0),
		dir:         os.Getenv("OBSERVER_MODEL_DIR"),
		config:      latencyConfig(),
	}
	for i := 0; i < b.N; i++ {
		runModelWorld(b, m).figures.report(b)
	}
}

// modelRun is one run of the model: its world, its passes, and where it
// keeps what it has done.
type modelRun struct {
	instances, days int
	every           time.Duration
	reportEvery     int    // print the figures so far every this many days (0: never)
	config          string // observer.toml
	// dir keeps the site and the newest checkpoint; "" is a temporary
	// directory and no checkpoints.
	dir string
	// stopAfterDay ends the run once that day's checkpoint is written, as
	// a run killed then would end, and stopAfterPasses after that many
	// passes of this segment, before the day's checkpoint: a run killed
	// in the middle of a day (0: neither). A run stopped has no figures.
	stopAfterDay, stopAfterPasses int
	// buildDelay, when set, is the time from a pass's start to the build
	// after it, for runs that must repeat to the second; unset, the pass's
	// wall time, rounded up to a second, as the deployment's build would
	// follow it.
	buildDelay time.Duration
	// stepped dates a pass's checks a millisecond apart from its start, in
	// the order they start, instead of by the wall clock: with one check
	// at a time, for runs that must repeat to the check.
	stepped bool
	// warm is when the births measured start (0: 8 days).
	warm time.Duration
}

// modelOutcome is what a run of the model measured: its figures, and when
// each host was first listed in new.atom and under which id.
type modelOutcome struct {
	figures  latencyFigures
	listedAt map[string]time.Time
	ids      map[string]string
	// finished is false for a run stopped before its last day.
	finished bool
}

func runModelWorld(tb testing.TB, m modelRun) modelOutcome {
	ctx := context.Background()
	sim, err := fedisim.New(fedisim.Config{Seed: modelSeed, Instances: m.instances, Spread: &fedisim.Spread{}})
	if err != nil {
		tb.Fatal(err)
	}
	dir := m.dir
	if dir == "" {
		dir = tb.TempDir()
	}
	site := filepath.Join(dir, "site")
	conf := filepath.Join(site, "observer.toml")
	data := filepath.Join(site, "data")
	day0 := sim.Config().Day0
	p := modelProgress{Instances: m.instances, Seed: modelSeed, Every: m.every.String(), Config: m.config, Next: day0,
		ListedAt: map[string]time.Time{}, IDs: map[string]string{}}
	resumed := false
	if m.dir != "" {
		var err error
		if resumed, err = restoreModel(m.dir, &p); err != nil {
			tb.Fatal(err)
		}
	}
	if !resumed {
		if code, _, stderr := runObserverB(tb, "new", "site", site); code != 0 {
			tb.Fatalf("observer new site: %s", stderr)
		}
		seeds := strings.Join(sim.Seeds(5), "\n") + "\n"
		if err := os.WriteFile(filepath.Join(site, "data", "seeds.txt"), []byte(seeds), 0o644); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(conf, []byte(m.config), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	p.Segments++
	// The derivation runs in a child, this test binary as observer.
	tb.Setenv("OBSERVER_TEST_MAIN", "1")
	e := env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: os.Stderr}
	start := time.Now()
	// The spread model's index of links is built on first use: not a cost
	// of the first pass.
	sim.FirstNamed(0, day0)
	fmt.Fprintf(os.Stderr, "bench-latency-model: %d instances, model ready in %s\n", m.instances, time.Since(start).Round(time.Second))
	if resumed {
		fmt.Fprintf(os.Stderr, "bench-latency-model: segment %d, from the checkpoint of day %d in %s\n", p.Segments, p.Day, m.dir)
	}

	end := day0.Add(time.Duration(m.days) * 24 * time.Hour)
	f := latencyFigures{instances: m.instances, days: m.days, every: m.every, warm: m.warm, byState: map[string]float64{}}
	// Made by the first pass and kept: it keeps the crawler's readings
	// from pass to pass. A resumed run starts without them: they are the
	// crawler's own results (TestFastModelCheckerIsTheCrawler), so reading
	// them again changes nothing.
	var checker crawl.Checker
	start = time.Now()
	cpu0 := processCPU()
	// sofar is p with this segment's time and the simulator's counts added.
	sofar := func() modelProgress {
		q := p
		q.Wall += time.Since(start)
		q.CPU += processCPU() - cpu0
		st := sim.Stats()
		q.PeersBytes += st.PeersBytes
		q.NotModified += st.NotModified
		return q
	}
	figuresOf := func(q modelProgress, day int, to time.Time) latencyFigures {
		g := f
		g.days, g.wall, g.byState, g.passes, g.idChanges, g.segments = day, q.Wall, map[string]float64{}, q.Passes, q.IDChanges, q.Segments
		g.earlier = simCounts{peersBytes: p.PeersBytes, notModified: p.NotModified}
		g.fromTruth(tb, sim, data, q.ListedAt, day0, to)
		return g
	}
	passes := 0
	for t := p.Next; t.Before(end); t = t.Add(m.every) {
		now := t.Format(time.RFC3339)
		crawlStart := time.Now()
		modelPass(ctx, tb, e, sim, []string{"--quiet", "--config", conf, "--data", data, "--now", now, "--isolation", "none"}, &checker, &p.Cost, m.stepped)
		p.PassWall += time.Since(crawlStart)
		// What observer build after the pass renders into new.atom.
		built := t.Add(time.Since(crawlStart).Truncate(time.Second) + time.Second)
		if m.buildDelay > 0 {
			built = t.Add(m.buildDelay)
		}
		listStart := time.Now()
		for _, inst := range newFeed(ctx, tb, e, conf, data, built) {
			first := inst.FirstAliveAt.UTC()
			host, id := string(inst.Host), first.Format("2006-01-02")+"/"+string(inst.Host)
			if _, ok := p.ListedAt[host]; !ok {
				p.ListedAt[host] = built
			}
			if was, ok := p.IDs[host]; ok && was != id {
				p.IDChanges++
			}
			p.IDs[host] = id
		}
		p.ListWall += time.Since(listStart)
		p.Passes++
		passes++
		if passes == m.stopAfterPasses {
			return modelOutcome{listedAt: p.ListedAt, ids: p.IDs}
		}
		next := t.Add(m.every)
		if next.Sub(day0)/(24*time.Hour) == t.Sub(day0)/(24*time.Hour) {
			continue
		}
		day := int(next.Sub(day0) / (24 * time.Hour))
		q := sofar()
		fmt.Fprintf(os.Stderr, "bench-latency-model: day %d of %d done, %s since the start, %s of CPU (passes %s: %d checks in %s, due lists %s; new lists %s)\n",
			day, m.days, q.Wall.Round(time.Second), q.CPU.Round(time.Second), q.PassWall.Round(time.Second),
			q.Cost.Checks, q.Cost.Checking.Round(time.Second), q.Cost.Due.Round(time.Second), q.ListWall.Round(time.Second))
		if m.reportEvery > 0 && day%m.reportEvery == 0 && day < m.days {
			fmt.Fprintf(os.Stderr, "bench-latency-model: the figures after day %d:\n%s", day, figuresOf(q, day, next).String())
		}
		if m.dir != "" {
			q.Day, q.Next = day, next
			if err := checkpointModel(m.dir, q); err != nil {
				tb.Fatal(err)
			}
		}
		if day == m.stopAfterDay {
			return modelOutcome{listedAt: p.ListedAt, ids: p.IDs}
		}
	}
	q := sofar()
	return modelOutcome{figures: figuresOf(q, m.days, end), listedAt: p.ListedAt, ids: p.IDs, finished: true}
}

// modelSeed is the model's world: the networked benchmark's.
const modelSeed = 26

// runObserverB runs one command in-process, for a benchmark.
func runObserverB(tb testing.TB, args ...string) (code int, stdout, stderr string) {
	tb.Helper()
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
	Due, Checking time.Duration
	Checks        int64
}

// modelPass runs one crawl pass as observer crawl with args would, but for
// its checks, which the spread model answers in-process (by *checker,
// made with the pass's crawler options when nil), and its addresses,
// which are the simulator's (Sim.AddrOf). It adds its costs to cost.
// Stepped, it dates its checks a millisecond apart from the pass's start
// (--now), in the order they start, rather than by the time elapsed.
func modelPass(ctx context.Context, b testing.TB, e env, sim *fedisim.Sim, args []string, checker *crawl.Checker, cost *passCost, stepped bool) {
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
	var started atomic.Int64
	o.Checker = crawl.CheckFunc(func(ctx context.Context, host observer.Host, co crawl.CheckOptions) (observer.Result, crawl.Trace) {
		first.Do(firstCheck)
		atomic.AddInt64(&cost.Checks, 1)
		if n := started.Add(1); stepped {
			co.CheckedAt = o.Now.Add(time.Duration(n) * time.Millisecond)
		}
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
	cost.Due += checking.Sub(start)
	cost.Checking += time.Since(checking)
	if err != nil && !errors.As(err, new(*crawlpass.CutShortError)) {
		b.Fatalf("crawl pass at %s: %v", f.common.at().Format(time.RFC3339), err)
	}
}

// newFeed is what new.atom holds when observer build runs at now: the
// newest build.FeedLimit entries of the new list, derived as the build
// derives it.
func newFeed(ctx context.Context, b testing.TB, e env, conf, data string, now time.Time) []observer.Instance {
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
