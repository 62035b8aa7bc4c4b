package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/fedisim"
)

// The crawl-memory benchmark: one `observer crawl` pass, as its own process,
// with many known hosts of which few are due, and the memory of its whole
// process tree (the crawl, the derivation child, every checker): the peak
// of the summed PSS (proportional set size: a shared page, such as the
// known table's or the executable's, counted once across the processes that
// map it), and the peak of a memory cgroup of its own where the benchmark
// can make one (cgroup v2 memory.peak, or v1 memory.max_usage_in_bytes;
// page cache included, as systemd's MemoryMax counts it).
//
//	OBSERVER_BENCH_KNOWN        known hosts (default 1 000 000; scripts/bench-memory.sh runs 1, 10 and 20 million)
//	OBSERVER_BENCH_DUE          simulated instances, all due and checked (default 2000)
//	OBSERVER_BENCH_CONCURRENCY  --concurrency (default 64)
//	OBSERVER_BENCH_ISOLATION    comma-separated isolation modes (default process)
//	OBSERVER_BENCH_STATE_MEMORY_LIMIT  [state] memory_limit, the derivation child's (default: the config's default)
//
// The known hosts beyond the simulated ones are discovered a week after
// them, out of the observer's first week, so they are due over the next
// discovery_delay, and the pass, a minute later, finds a share of them due;
// --max-checks keeps it to the simulated ones, which come first, and leaves
// the rest for a later pass (exit 3, "max_checks reached").
func BenchmarkCrawlMemory(b *testing.B) {
	known := benchEnvInt("OBSERVER_BENCH_KNOWN", 1_000_000)
	dueN := benchEnvInt("OBSERVER_BENCH_DUE", 2000)
	conc := benchEnvInt("OBSERVER_BENCH_CONCURRENCY", 64)
	sim, config, net := benchSim(b, dueN)
	if limit := os.Getenv("OBSERVER_BENCH_STATE_MEMORY_LIMIT"); limit != "" {
		f, err := os.OpenFile(config, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, err = fmt.Fprintf(f, "[state]\nmemory_limit = %q\n", limit)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	data := filepath.Join(dir, "data")
	seedMemoryBench(b, sim, dueN, known, data)
	for _, iso := range benchEnvList("OBSERVER_BENCH_ISOLATION", "process") {
		b.Run(fmt.Sprintf("isolation=%s/known=%d", iso, known), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				// Each pass on a copy of the data, so every run starts alike.
				run := filepath.Join(b.TempDir(), "data")
				if out, err := exec.Command("cp", "-a", data, run).CombinedOutput(); err != nil {
					b.Fatalf("copy data: %v %s", err, out)
				}
				args := []string{"crawl", "--quiet", "--config", config, "--data", run, "--now", "2026-01-09T00:01:00Z",
					"--isolation", iso, "--concurrency", strconv.Itoa(conc), "--max-checks", strconv.Itoa(dueN)}
				args = append(args, net...)
				m := runMemoryPass(b, run, args)
				b.ReportMetric(float64(m.pssPeak)/(1<<20), "tree-pss-peak-MiB")
				b.ReportMetric(float64(m.passPSSPeak)/(1<<20), "pass-pss-peak-MiB")
				b.ReportMetric(float64(m.cgroupPeak)/(1<<20), "cgroup-peak-MiB")
				b.ReportMetric(float64(m.procsPeak), "procs-peak")
				b.Logf("isolation=%s known=%d concurrency=%d: peak summed PSS %d MiB (%d MiB once checkers ran; %d processes at most, %d checkers), cgroup peak %s, %s",
					iso, known, conc, m.pssPeak>>20, m.passPSSPeak>>20, m.procsPeak, m.checkers, m.cgroupText(), strings.TrimSpace(m.summary))
			}
		})
	}
}

// seedMemoryBench records the simulated instances as known at day 0 and
// known-n filler hosts a week later.
func seedMemoryBench(b *testing.B, sim *fedisim.Sim, dueN, known int, data string) {
	ctx := context.Background()
	store, err := duck.Open(ctx, data, duck.Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	day0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w, err := store.Snapshots.NewWriter(duck.NewPassID(day0), duck.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ds := make([]observer.Discovery, 0, 100_000)
	for i := range dueN {
		ds = append(ds, observer.Discovery{Host: observer.Host(sim.Host(i)), DiscoveredAt: day0, Via: observer.ViaSeed})
	}
	later := day0.Add(8 * 24 * time.Hour)
	for i := dueN; i < known; i++ {
		ds = append(ds, observer.Discovery{Host: observer.Host(fmt.Sprintf("k%08d.example", i)), DiscoveredAt: later, Via: observer.ViaSeed})
		if len(ds) == cap(ds) {
			if err := w.Discover(ctx, ds...); err != nil {
				b.Fatal(err)
			}
			ds = ds[:0]
		}
	}
	if err := w.Discover(ctx, ds...); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		b.Fatal(err)
	}
}

// memoryFigures is what runMemoryPass measured.
type memoryFigures struct {
	pssPeak     int64 // bytes: the largest summed PSS of the tree seen
	passPSSPeak int64 // the same, once a checker was seen (the pass itself)
	procsPeak   int   // most processes in the tree at once
	checkers    int   // checker processes seen
	cgroupPeak  int64 // bytes; 0: no cgroup of its own
	cgroupKind  string
	summary     string
}

func (m memoryFigures) cgroupText() string {
	if m.cgroupPeak == 0 {
		return "not measured (" + m.cgroupKind + ")"
	}
	return fmt.Sprintf("%d MiB (%s)", m.cgroupPeak>>20, m.cgroupKind)
}

// runMemoryPass runs the crawl as a child process, in a memory cgroup of
// its own where it can, sampling the summed PSS of its process tree.
func runMemoryPass(b *testing.B, data string, args []string) memoryFigures {
	var m memoryFigures
	cmd, stdout, stderr := benchCrawlCommand(b, data, args)
	defer stderr.Close()
	cg := newBenchCgroup(b)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	cg.add(cmd.Process.Pid)
	m.cgroupKind = cg.kind
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { sampleTree(cmd.Process.Pid, stop, &m) })
	runErr := cmd.Wait()
	close(stop)
	wg.Wait()
	m.cgroupPeak = cg.peak()
	logTail, _ := os.ReadFile(stderr.Name())
	// --max-checks leaves the fillers due by then for a later pass: a pass
	// cut short by it alone (exit 3) is the pass this benchmark means.
	var exit *exec.ExitError
	if errors.As(runErr, &exit) && exit.ExitCode() == exitCutShort && strings.Contains(string(logTail), "(max_checks reached)") {
		runErr = nil
	}
	if runErr != nil {
		b.Fatalf("crawl: %v\nstdout:\n%s\nstderr (tail):\n%s", runErr, stdout.String(), tail(string(logTail), 4000))
	}
	m.summary = strings.SplitN(stdout.String(), "\n", 2)[0]
	return m
}

// sampleTree polls the summed PSS of pid and its descendants until stop.
func sampleTree(pid int, stop <-chan struct{}, m *memoryFigures) {
	seen := map[int]bool{}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		tree := descendants(pid)
		var sum int64
		checkers := false
		for _, p := range tree {
			sum += pss(p)
			if p != pid {
				cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
				if bytes.Contains(cmdline, []byte("\x00__checker\x00")) {
					checkers = true
					if !seen[p] {
						seen[p] = true
						m.checkers++
					}
				}
			}
		}
		m.pssPeak = max(m.pssPeak, sum)
		if checkers {
			m.passPSSPeak = max(m.passPSSPeak, sum)
		}
		m.procsPeak = max(m.procsPeak, len(tree))
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// descendants is pid and every live process below it.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(p); err == nil {
			if pp, err := strconv.Atoi(st[1]); err == nil {
				children[pp] = append(children[pp], p)
			}
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// pss is a process's proportional set size in bytes, or 0.
func pss(pid int) int64 { return procKB(pid, "smaps_rollup", "Pss:") }

// benchCgroup is a memory cgroup of the benchmark's own for one crawl.
type benchCgroup struct {
	dir, kind string
}

// newBenchCgroup makes a memory cgroup below the benchmark's own: cgroup
// v2 if its memory controller is there, else v1's memory hierarchy. kind
// says which, or why none.
func newBenchCgroup(b *testing.B) benchCgroup {
	raw, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return benchCgroup{kind: "no /proc/self/cgroup"}
	}
	name := fmt.Sprintf("observer-bench-%d-%d", os.Getpid(), time.Now().UnixNano())
	for line := range strings.Lines(string(raw)) {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		var dir, kind string
		switch {
		case f[0] == "0" && f[1] == "":
			root := "/sys/fs/cgroup"
			if _, err := os.Stat("/sys/fs/cgroup/unified"); err == nil {
				root = "/sys/fs/cgroup/unified"
			}
			ctl, _ := os.ReadFile(filepath.Join(root, f[2], "cgroup.controllers"))
			if !strings.Contains(string(ctl), "memory") {
				continue
			}
			dir, kind = filepath.Join(root, f[2], name), "cgroup v2 memory.peak"
		case f[1] == "memory":
			dir, kind = filepath.Join("/sys/fs/cgroup/memory", f[2], name), "cgroup v1 memory.max_usage_in_bytes"
		default:
			continue
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return benchCgroup{kind: "cannot make a cgroup: " + err.Error()}
		}
		b.Cleanup(func() { os.Remove(dir) })
		return benchCgroup{dir: dir, kind: kind}
	}
	return benchCgroup{kind: "no memory cgroup"}
}

// add moves pid into the cgroup; the processes it starts stay there.
func (c *benchCgroup) add(pid int) {
	if c.dir == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		c.dir, c.kind = "", "cannot join a cgroup: "+err.Error()
	}
}

// peak is the cgroup's peak memory in bytes, or 0.
func (c benchCgroup) peak() int64 {
	if c.dir == "" {
		return 0
	}
	for _, f := range []string{"memory.peak", "memory.max_usage_in_bytes"} {
		if raw, err := os.ReadFile(filepath.Join(c.dir, f)); err == nil {
			n, _ := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
			return n
		}
	}
	return 0
}
