package build_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/build"
	"github.com/fediverse-observer/observer/build/buildtest"
)

// peakMemory samples the Go heap while a benchmark runs. The figures are
// the largest HeapInuse and Sys (all memory the runtime got from the OS)
// seen, which bounds what the build needs.
type peakMemory struct {
	stop chan struct{}
	wg   sync.WaitGroup
	heap uint64
	sys  uint64
}

func startPeak() *peakMemory {
	runtime.GC()
	p := &peakMemory{stop: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			p.heap = max(p.heap, ms.HeapInuse)
			p.sys = max(p.sys, ms.Sys)
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *peakMemory) report(b *testing.B) {
	close(p.stop)
	p.wg.Wait()
	b.ReportMetric(float64(p.heap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(p.sys)/(1<<20), "peak-sys-MiB")
}

// BenchmarkBuildMillion: 1,000,000 live hosts and 10,000 new ones, streamed
// from a generator; a full build into an empty directory, and a rebuild
// where nothing changed. Goals: under 10 s and under 1 GiB.
func BenchmarkBuildMillion(b *testing.B) {
	data := &buildtest.Generated{Live: 1_000_000, New: 10_000, Now: now}
	site := b.TempDir()
	out := filepath.Join(b.TempDir(), "public")
	opts := build.Options{Site: testConfig().BuildSettings("dev"), SiteDir: site, OutDir: out, Data: data, Now: now}
	ctx := context.Background()

	b.Run("full", func(b *testing.B) {
		peak := startPeak()
		for b.Loop() {
			b.StopTimer()
			os.RemoveAll(out)
			b.StartTimer()
			rep, err := build.Build(ctx, opts)
			if err != nil {
				b.Fatal(err)
			}
			if rep.Live != 1_000_000 || rep.New != 10_000 {
				b.Fatalf("report %+v", rep)
			}
		}
		peak.report(b)
	})
	b.Run("unchanged", func(b *testing.B) {
		if _, err := build.Build(ctx, opts); err != nil {
			b.Fatal(err)
		}
		peak := startPeak()
		for b.Loop() {
			rep, err := build.Build(ctx, opts)
			if err != nil {
				b.Fatal(err)
			}
			if rep.Written != 0 {
				b.Fatalf("rebuild wrote %d files", rep.Written)
			}
		}
		peak.report(b)
	})
}

// BenchmarkBuildPages10k renders the 10,000 generated Markdown pages that
// scripts/bench-hugo.sh gives Hugo, with the default theme, and reports
// pages per second.
func BenchmarkBuildPages10k(b *testing.B) {
	const n = 10_000
	site := b.TempDir()
	if err := buildtest.WritePages(filepath.Join(site, "content"), n); err != nil {
		b.Fatal(err)
	}
	data := &buildtest.Generated{Live: 100, New: 10, Now: now}
	out := filepath.Join(b.TempDir(), "public")
	opts := build.Options{Site: testConfig().BuildSettings("dev"), SiteDir: site, OutDir: out, Data: data, Now: now}
	peak := startPeak()
	for b.Loop() {
		b.StopTimer()
		os.RemoveAll(out)
		b.StartTimer()
		rep, err := build.Build(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Pages != n {
			b.Fatalf("%d pages", rep.Pages)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "pages/s")
	peak.report(b)
}
