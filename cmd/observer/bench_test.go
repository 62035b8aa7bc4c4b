package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/fedisim"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// The crawl-pass benchmark: one full pass of the real `observer crawl`
// command, as its own process, over every host of a simulated fediverse,
// all of them known and due. The simulator runs in this (the benchmark's)
// process, so its CPU is this process's CPU; the crawl's is the child's.
//
//	OBSERVER_BENCH_INSTANCES    instances in the simulator and hosts due (default 20 000; 1 000 000 for the full run)
//	OBSERVER_BENCH_CONCURRENCY  comma-separated --concurrency values to try (default 64)
//	OBSERVER_BENCH_ISOLATION    comma-separated isolation modes (default process,none)
//	OBSERVER_BENCH_ORCH_CPUPROFILE  write a CPU profile of the orchestrator (the crawl process) to this file,
//	                            from OBSERVER_BENCH_PROFILE_AFTER (default 10s) for OBSERVER_BENCH_PROFILE_FOR (default 30s)
//
// scripts/bench-crawl.sh runs the million-instance pass.

const (
	benchNow  = "2026-01-01T12:00:00Z" // simulated day 0, after the discoveries below
	benchSeen = "2026-01-01T00:00:00Z" // when every host was "discovered"
)

func benchEnvInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func benchEnvList(name, def string) []string {
	v := os.Getenv(name)
	if v == "" {
		v = def
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// benchSim starts a simulated fediverse of n instances for a benchmark and
// writes a config without a seed list (every host comes from discoveries
// the benchmark writes); it returns the config's path and the crawl flags
// that reach the simulator.
func benchSim(b *testing.B, n int) (sim *fedisim.Sim, config string, net []string) {
	sim = testsupport.StartSim(b, fedisim.Config{Seed: 7, Instances: n})
	dir := b.TempDir()
	ca := testsupport.SimCA(b, sim, dir)
	config = filepath.Join(dir, "observer.toml")
	// discovered_checks = 0: the pass measured is one over the n known due
	// hosts, not also over the names their peers lists add. address_budget
	// = 0: the simulator's few addresses each hold hundreds of the n hosts,
	// which a budget would leave unchecked (one check at a time per address
	// still holds).
	if err := os.WriteFile(config, []byte("[crawl]\nseeds = \"no-seeds.txt\"\ndiscovered_checks = 0\naddress_budget = 0\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return sim, config, simFlags(sim, ca)
}

func BenchmarkCrawlPass(b *testing.B) {
	n := benchEnvInt("OBSERVER_BENCH_INSTANCES", 20_000)
	sim, config, net := benchSim(b, n)

	for _, iso := range benchEnvList("OBSERVER_BENCH_ISOLATION", "process,none") {
		b.Run("isolation="+iso, func(b *testing.B) {
			for _, c := range benchEnvList("OBSERVER_BENCH_CONCURRENCY", "64") {
				conc, err := strconv.Atoi(c)
				if err != nil || conc < 1 {
					b.Fatalf("OBSERVER_BENCH_CONCURRENCY: %q is not a positive number", c)
				}
				b.Run("concurrency="+c, func(b *testing.B) {
					var total passFigures
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						data := filepath.Join(b.TempDir(), "data")
						seeding := seedKnownHosts(b, sim, n, data)
						b.StartTimer()
						f := runBenchPass(b, data, append([]string{"crawl", "--quiet", "--config", config, "--data", data,
							"--now", benchNow, "--isolation", iso, "--concurrency", c,
							"--duration", benchDuration(n).String()}, net...))
						b.StopTimer()
						f.seeding = seeding
						f.measureData(b, data)
						if f.checks != int64(n) {
							b.Fatalf("the pass checked %d of %d due hosts", f.checks, n)
						}
						b.Log(f.String(iso, conc, n))
						total.add(f)
					}
					total.report(b)
				})
			}
		})
	}
}

// benchDuration is a time budget the pass never reaches: it is there only
// so a pass that hangs ends.
func benchDuration(n int) time.Duration {
	return max(time.Hour, time.Duration(n)*20*time.Millisecond)
}

// seedKnownHosts records every simulated instance as a known, never
// checked host, all in one Parquet file, and says how long that took.
func seedKnownHosts(b *testing.B, sim *fedisim.Sim, n int, data string) time.Duration {
	start := time.Now()
	ctx := context.Background()
	store, err := duck.Open(ctx, data, duck.Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	at, _ := time.Parse(time.RFC3339, benchSeen)
	ds := make([]observer.Discovery, n)
	for i := range ds {
		ds[i] = observer.Discovery{Host: observer.Host(sim.Host(i)), DiscoveredAt: at, Via: observer.ViaSeed}
	}
	w, err := store.Snapshots.NewWriter(duck.NewPassID(at), duck.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Discover(ctx, ds...); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// passFigures is what one pass cost.
type passFigures struct {
	passes  int
	wall    time.Duration // the crawl command, start to exit
	pass    time.Duration // the pass itself (data/passes), without start-up and the final write
	seeding time.Duration

	orchCPU    time.Duration // the crawl process alone (user + system)
	treeCPU    time.Duration // the crawl process and every checker process it reaped
	simCPU     time.Duration // this process: the simulator (and the sampling below)
	orchPeak   int64         // bytes: the crawl process's peak resident set
	treePeak   int64         // bytes: the largest peak resident set in the tree (rusage)
	checkPeak  int64         // bytes: largest peak resident set of a checker process seen by sampling
	checkProcs int           // checker processes seen by sampling
	derivePeak int64         // bytes: peak resident set of the __derive child (the derivation before the pass)
	loadMax    float64       // highest 1-minute load average seen during the pass

	checks     int64
	outcomes   map[string]int64
	peers      int64 // peers-list entries the pass's checks read
	fetched    int64 // checks that fetched a peers list
	discovered int64 // new hosts recorded
	written    int64 // bytes of checks and discoveries files the pass wrote
	known      int64
}

// benchCrawlCommand prepares the crawl as a child process of the benchmark
// (not observerProcess: that helper takes a *testing.T), its output kept in
// a buffer and its log in crawl.stderr beside data; the caller closes the
// log.
func benchCrawlCommand(b *testing.B, data string, args []string) (*exec.Cmd, *bytes.Buffer, *os.File) {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "OBSERVER_TEST_MAIN=1")
	stdout := new(bytes.Buffer)
	stderr, err := os.Create(filepath.Join(filepath.Dir(data), "crawl.stderr"))
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd, stdout, stderr
}

// runBenchPass runs the crawl as a child process and measures it.
func runBenchPass(b *testing.B, data string, args []string) passFigures {
	var f passFigures
	f.passes = 1
	var self0, kids0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self0)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids0)
	cmd, stdout, stderr := benchCrawlCommand(b, data, args)
	defer stderr.Close()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	pid := cmd.Process.Pid

	stop := make(chan struct{})
	var samp sampler
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		samp.run(pid, stop)
	}()
	// Wait for the exit without reaping, so the zombie's /proc/PID/stat
	// still tells the crawl process's own CPU time apart from its
	// children's.
	for {
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			break
		}
	}
	f.wall = time.Since(start)
	close(stop)
	wg.Wait()
	self, kids, statErr := procCPU(pid)
	runErr := cmd.Wait()
	if runErr != nil {
		logTail, _ := os.ReadFile(stderr.Name())
		b.Fatalf("crawl: %v\nstdout:\n%s\nstderr (tail):\n%s", runErr, stdout.String(), tail(string(logTail), 4000))
	}
	if statErr != nil {
		b.Fatalf("CPU time of the crawl process: %v", statErr)
	}
	var self1, kids1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self1)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids1)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)

	f.orchCPU = self
	f.treeCPU = cpuOf(&kids1) - cpuOf(&kids0)
	if kids != 0 && f.treeCPU < self+kids-100*time.Millisecond {
		b.Logf("warning: tree CPU %s from rusage, %s from /proc", f.treeCPU, self+kids)
	}
	f.simCPU = cpuOf(&self1) - cpuOf(&self0)
	f.treePeak = ru.Maxrss << 10
	f.orchPeak = samp.orchPeak
	if samp.checkers == 0 {
		// No children: the rusage peak is the crawl process's own, exact.
		f.orchPeak = f.treePeak
	}
	f.checkPeak, f.checkProcs, f.loadMax = samp.checkPeak, samp.checkers, samp.loadMax
	f.derivePeak = samp.derivePeak
	return f
}

func cpuOf(r *syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// procCPU reads a process's own CPU time and its reaped children's from
// /proc/PID/stat (in clock ticks of 10 ms).
func procCPU(pid int) (self, children time.Duration, err error) {
	st, err := readStat(pid)
	if err != nil {
		return 0, 0, err
	}
	tick := func(i int) time.Duration {
		v, _ := strconv.ParseInt(st[i], 10, 64)
		return time.Duration(v) * 10 * time.Millisecond
	}
	return tick(11) + tick(12), tick(13) + tick(14), nil
}

// readStat returns the fields of /proc/PID/stat after the command name:
// [0] is the state, [1] the parent pid, [11] utime, [12] stime, [13] cutime,
// [14] cstime.
func readStat(pid int) ([]string, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 15 {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return f, nil
}

// sampler polls the peak resident sets (VmHWM) of the crawl process and of
// its children, the checkers, while the pass runs: the kernel keeps no
// per-process peak once a process is reaped, and rusage only gives the
// largest of the whole tree.
type sampler struct {
	orchPeak   int64
	checkPeak  int64
	derivePeak int64 // the __derive child, which runs before the checks
	checkers   int
	loadMax    float64
}

func (s *sampler) run(pid int, stop <-chan struct{}) {
	seen := map[int]bool{}
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		if hwm := vmHWM(pid); hwm > s.orchPeak {
			s.orchPeak = hwm
		}
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			child, err := strconv.Atoi(e.Name())
			if err != nil || child == pid {
				continue
			}
			st, err := readStat(child)
			if err != nil || st[1] != strconv.Itoa(pid) {
				continue
			}
			if cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); strings.Contains(string(cmdline), "\x00__derive\x00") {
				s.derivePeak = max(s.derivePeak, vmHWM(child))
				continue
			}
			if !seen[child] {
				seen[child] = true
				s.checkers++
			}
			if hwm := vmHWM(child); hwm > s.checkPeak {
				s.checkPeak = hwm
			}
		}
		if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
			if l, err := strconv.ParseFloat(strings.Fields(string(raw))[0], 64); err == nil && l > s.loadMax {
				s.loadMax = l
			}
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// vmHWM is a live process's peak resident set in bytes, or 0.
func vmHWM(pid int) int64 { return procKB(pid, "status", "VmHWM:") }

// procKB is the figure in kB of the line starting with key in
// /proc/PID/file, in bytes, or 0.
func procKB(pid int, file, key string) int64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + file)
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, key); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// measureData reads what the pass wrote: its checks, what their peers lists
// held, and the bytes on disk.
func (f *passFigures) measureData(b *testing.B, data string) {
	ctx := context.Background()
	store, err := duck.Open(ctx, data, duck.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	now, _ := time.Parse(time.RFC3339, benchNow)
	if err := store.Reader.CreateViews(ctx, duck.ViewParams{Now: now, Rules: config.Default().Rules()}); err != nil {
		b.Fatal(err)
	}
	one := func(q string) []any {
		rows, err := store.Reader.Query(ctx, q)
		if err != nil {
			b.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		if !rows.Next() {
			b.Fatalf("%s: no row", q)
		}
		v, err := rows.Values()
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	num := func(v any) int64 {
		switch x := v.(type) {
		case int64:
			return x
		case int32:
			return int64(x)
		case float64:
			return int64(x)
		case nil:
			return 0
		}
		n, _ := strconv.ParseInt(fmt.Sprint(v), 10, 64)
		return n
	}
	v := one("SELECT count(*), sum(peers_count), count(*) FILTER (WHERE peers_fetched) FROM checks")
	f.checks, f.peers, f.fetched = num(v[0]), num(v[1]), num(v[2])
	v = one("SELECT count(*) FILTER (WHERE via <> 'seed'), count(DISTINCT host) FROM discoveries")
	f.discovered, f.known = num(v[0]), num(v[1])
	v = one("SELECT epoch_ms(ended_at) - epoch_ms(started_at) FROM passes")
	f.pass = time.Duration(num(v[0])) * time.Millisecond
	rows, err := store.Reader.Query(ctx, "SELECT outcome, count(*) FROM checks GROUP BY ALL ORDER BY 2 DESC")
	if err != nil {
		b.Fatal(err)
	}
	f.outcomes = map[string]int64{}
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			b.Fatal(err)
		}
		f.outcomes[fmt.Sprint(v[0])] = num(v[1])
	}
	rows.Close()
	// The seed discoveries are one file named after their own pass id; the
	// crawl's files are named after the crawl's.
	seedFiles, _ := filepath.Glob(filepath.Join(data, duck.DiscoveriesDir, "date=*", "20260101T000000Z-*.parquet"))
	f.written = dirBytes(filepath.Join(data, duck.ChecksDir)) + dirBytes(filepath.Join(data, duck.DiscoveriesDir))
	for _, s := range seedFiles {
		if st, err := os.Stat(s); err == nil {
			f.written -= st.Size()
		}
	}
}

func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func (f *passFigures) add(g passFigures) {
	f.passes += g.passes
	f.wall += g.wall
	f.pass += g.pass
	f.orchCPU += g.orchCPU
	f.treeCPU += g.treeCPU
	f.simCPU += g.simCPU
	f.checks += g.checks
	f.peers += g.peers
	f.written += g.written
	f.orchPeak = max(f.orchPeak, g.orchPeak)
	f.treePeak = max(f.treePeak, g.treePeak)
	f.checkPeak = max(f.checkPeak, g.checkPeak)
	f.derivePeak = max(f.derivePeak, g.derivePeak)
	f.known = max(f.known, g.known)
}

func (f *passFigures) report(b *testing.B) {
	if f.checks == 0 {
		return
	}
	checks := float64(f.checks)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / checks }
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	b.ReportMetric(checks/f.wall.Seconds(), "checks/s")
	b.ReportMetric(checks/f.pass.Seconds(), "pass-checks/s")
	b.ReportMetric(ms(f.orchCPU), "orch-cpu-ms/check")
	b.ReportMetric(ms(f.treeCPU), "crawl-cpu-ms/check")
	b.ReportMetric(ms(f.simCPU), "sim-cpu-ms/check")
	b.ReportMetric(100*float64(f.simCPU)/float64(f.simCPU+f.treeCPU), "sim-cpu-%")
	b.ReportMetric(mib(f.orchPeak), "orch-peak-MiB")
	b.ReportMetric(mib(f.checkPeak), "checker-peak-MiB")
	b.ReportMetric(mib(f.derivePeak), "derive-peak-MiB")
	b.ReportMetric(float64(f.written)/checks, "bytes-written/check")
	b.ReportMetric(float64(f.peers)/float64(f.passes), "peers-entries/pass")
	b.ReportMetric(float64(f.known), "known-hosts")
}

// String is the human summary of one pass, logged under the result line.
func (f passFigures) String(iso string, conc, n int) string {
	var b strings.Builder
	checks := float64(f.checks)
	perCheck := func(d time.Duration) string {
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)/checks)
	}
	fmt.Fprintf(&b, "isolation=%s concurrency=%d instances=%d: %d checks in %s (pass %s; %.0f checks/s, pass alone %.0f/s); seeding %d known hosts took %s\n",
		iso, conc, n, f.checks, f.wall.Round(time.Millisecond), f.pass.Round(time.Millisecond),
		checks/f.wall.Seconds(), checks/f.pass.Seconds(), f.known, f.seeding.Round(time.Millisecond))
	fmt.Fprintf(&b, "  CPU per check: crawl process %s, crawl process + checkers %s, simulator %s (%.0f%% of all); total %.1f s on %.1f s of wall clock\n",
		perCheck(f.orchCPU), perCheck(f.treeCPU), perCheck(f.simCPU), 100*float64(f.simCPU)/float64(f.simCPU+f.treeCPU),
		(f.treeCPU + f.simCPU).Seconds(), f.wall.Seconds())
	fmt.Fprintf(&b, "  peak RSS: crawl process %d MiB, checker %d MiB (%d checker processes seen), derivation %d MiB, largest in the tree %d MiB\n",
		f.orchPeak>>20, f.checkPeak>>20, f.checkProcs, f.derivePeak>>20, f.treePeak>>20)
	fmt.Fprintf(&b, "  peers lists fetched %d, peers entries read %d, new hosts discovered %d; written %d bytes (%.0f bytes/check)\n",
		f.fetched, f.peers, f.discovered, f.written, float64(f.written)/checks)
	var outs []string
	for o, k := range f.outcomes {
		outs = append(outs, fmt.Sprintf("%s %d", o, k))
	}
	slices.Sort(outs)
	fmt.Fprintf(&b, "  outcomes: %s; highest 1-min load average during the pass %.2f", strings.Join(outs, ", "), f.loadMax)
	return b.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// init profiles the crawl process when the benchmark asks for it (the
// test binary is that process when OBSERVER_TEST_MAIN is set). The command
// ends with os.Exit, which would lose a profile stopped at exit, so a window
// in the middle of the pass is profiled instead.
func init() {
	path := os.Getenv("OBSERVER_BENCH_ORCH_CPUPROFILE")
	if path == "" || os.Getenv("OBSERVER_TEST_MAIN") != "1" || len(os.Args) < 2 || os.Args[1] != "crawl" {
		return
	}
	after, err := time.ParseDuration(os.Getenv("OBSERVER_BENCH_PROFILE_AFTER"))
	if err != nil {
		after = 10 * time.Second
	}
	window, err := time.ParseDuration(os.Getenv("OBSERVER_BENCH_PROFILE_FOR"))
	if err != nil {
		window = 30 * time.Second
	}
	go func() {
		time.Sleep(after)
		f, err := os.Create(path)
		if err != nil {
			return
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return
		}
		time.Sleep(window)
		pprof.StopCPUProfile()
		f.Close()
	}()
}
