package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/fedisim"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// BenchmarkFirstPass times one pass of the observer from the seeds of the
// first-pass world (firstpass_test.go) against a simple sequential
// crawler on the same world: one host at a time, NodeInfo and then
// Mastodon's peers list, each name it meets queued. Each iteration runs
// the three side by side (the crawler, then observer crawl with
// --isolation process and with none, each a fresh data directory), so
// that a loaded machine slows them alike: the goal is the observer within
// 1.5 times the crawler's time, finding every instance the seeds lead to.
func BenchmarkFirstPass(b *testing.B) {
	sim := testsupport.StartSim(b, firstPassWorld)
	dir := b.TempDir()
	ca := testsupport.SimCA(b, sim, dir)
	seeds := sim.Seeds(firstPassSeeds)
	want, _ := reachableAlive(sim, seeds)
	if err := os.WriteFile(filepath.Join(dir, "seeds.txt"), []byte(strings.Join(seeds, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "observer.toml"), []byte("[crawl]\nseeds = \"seeds.txt\"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	var seq, proc, none, procCPU, noneCPU time.Duration
	var seqFound, procFound, noneFound int
	for i := 0; i < b.N; i++ {
		start := time.Now()
		seqFound = sequentialCrawl(b, sim, seeds)
		seq += time.Since(start)
		for _, run := range []struct {
			isolation string
			took, cpu *time.Duration
			found     *int
		}{{"process", &proc, &procCPU, &procFound}, {"none", &none, &noneCPU, &noneFound}} {
			data := filepath.Join(dir, fmt.Sprintf("%s-%d", run.isolation, i), "data")
			cmd := exec.Command(os.Args[0], append([]string{"crawl", "--quiet", "--config", filepath.Join(dir, "observer.toml"), "--data", data,
				"--now", "2026-01-01T00:00:00Z", "--isolation", run.isolation}, simFlags(sim, ca)...)...)
			cmd.Env = append(os.Environ(), "OBSERVER_TEST_MAIN=1")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("observer crawl --isolation %s: %v\n%s", run.isolation, err, out.String())
			}
			*run.took += time.Since(start)
			// The crawl's and its children's (checkers, derivation): on a
			// loaded machine, where wall time is a share of the cores, the
			// steadier measure of what a pass costs.
			*run.cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			*run.found = countAlive(b, data)
		}
	}
	n := float64(b.N)
	b.ReportMetric(seq.Seconds()/n, "sequential-s")
	b.ReportMetric(proc.Seconds()/n, "observer-process-s")
	b.ReportMetric(none.Seconds()/n, "observer-none-s")
	b.ReportMetric(procCPU.Seconds()/n, "observer-process-cpu-s")
	b.ReportMetric(noneCPU.Seconds()/n, "observer-none-cpu-s")
	b.ReportMetric(proc.Seconds()/seq.Seconds(), "process/sequential")
	b.ReportMetric(none.Seconds()/seq.Seconds(), "none/sequential")
	b.ReportMetric(float64(seqFound), "sequential-found")
	b.ReportMetric(float64(procFound), "observer-found")
	b.Logf("reachable alive %d; found: sequential %d, observer (process) %d, (none) %d", len(want), seqFound, procFound, noneFound)
	if procFound != len(want) || noneFound != len(want) {
		b.Errorf("the observer's pass found %d and %d alive instances, want %d", procFound, noneFound, len(want))
	}
}

// countAlive is the number of hosts a data directory's checks found alive.
func countAlive(b *testing.B, data string) int {
	s := &simSite{dir: filepath.Dir(data)}
	rows := s.query(b, "SELECT count(DISTINCT host) FROM checks WHERE outcome = 'alive'")
	var n int
	fmt.Sscan(rows[0], &n)
	return n
}

// sequentialCrawl is the simple crawler: breadth first from the seeds, one
// request at a time, a host alive when its NodeInfo document names its
// software. It returns how many it found alive.
func sequentialCrawl(b *testing.B, sim *fedisim.Sim, seeds []string) int {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(sim.CAPEM())
	addr := sim.Addr()
	client := &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
			TLSClientConfig: &tls.Config{RootCAs: pool},
		},
	}
	defer client.CloseIdleConnections()
	get := func(url string, v any) bool {
		resp, err := client.Get(url)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		return err == nil && resp.StatusCode == 200 && json.Unmarshal(body, v) == nil
	}
	seen := map[string]bool{}
	queue := append([]string(nil), seeds...)
	for _, h := range seeds {
		seen[h] = true
	}
	alive := 0
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		var wk struct{ Links []struct{ Href string } }
		if !get("https://"+h+"/.well-known/nodeinfo", &wk) || len(wk.Links) == 0 {
			continue
		}
		var ni struct{ Software struct{ Name string } }
		if !get(wk.Links[len(wk.Links)-1].Href, &ni) || ni.Software.Name == "" {
			continue
		}
		alive++
		var peers []string
		get("https://"+h+"/api/v1/instance/peers", &peers)
		for _, p := range peers {
			p = strings.ToLower(strings.TrimSuffix(p, "."))
			if p != "" && !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return alive
}
