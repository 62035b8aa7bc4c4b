package main

import (
	"context"
	"encoding/csv"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/fedisim"
)

// gate is a TCP proxy to the simulated fediverse that lets the first open
// connections through and holds every later one until release is closed,
// so a test can stop a crawl in the middle of its pass for as long as it
// needs, without timing. It stands in front of each of the simulator's
// addresses on the same address (via), so that hosts keep the addresses
// they share and per-address politeness sees the world it would without it.
type gate struct {
	t       *testing.T
	open    int64
	count   atomic.Int64
	held    chan struct{} // closed when the first connection is held
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	fronts  map[string]string // target "ADDR:PORT" -> the gate's listener before it
}

func newGate(t *testing.T, open int64) *gate {
	t.Helper()
	g := &gate{t: t, open: open, held: make(chan struct{}), release: make(chan struct{}), fronts: map[string]string{}}
	t.Cleanup(func() {
		g.once.Do(func() { close(g.held) })
		select {
		case <-g.release:
		default:
			close(g.release)
		}
	})
	return g
}

// via is the address, on target's own IP, of the gate's listener that
// forwards to target.
func (g *gate) via(target string) string {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if a, ok := g.fronts[target]; ok {
		return a
	}
	ip, _, err := net.SplitHostPort(target)
	if err != nil {
		g.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go g.serve(c, target)
		}
	}()
	g.fronts[target] = ln.Addr().String()
	return g.fronts[target]
}

// rule is the --connect-to rule that sends what rule sends to its address
// through the gate instead.
func (g *gate) rule(rule string) string {
	g.t.Helper()
	parts := strings.SplitN(rule, ":", 3)
	if len(parts) != 3 {
		g.t.Fatalf("--connect-to %q: not HOST:PORT:ADDR:PORT", rule)
	}
	return parts[0] + ":" + parts[1] + ":" + g.via(parts[2])
}

func (g *gate) serve(c net.Conn, target string) {
	defer c.Close()
	if g.count.Add(1) > g.open {
		g.once.Do(func() { close(g.held) })
		<-g.release
	}
	up, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer up.Close()
	go func() { io.Copy(up, c); up.(*net.TCPConn).CloseWrite() }()
	io.Copy(c, up)
}

// TestSQLWhileACrawlIsWriting: `observer sql` answers, and derives, while
// another process's crawl pass is in the middle of writing snapshots into
// the same data directory, and sees the checks flushed so far; after the
// pass, it sees all of them.
func TestSQLWhileACrawlIsWriting(t *testing.T) {
	// A safety net only: every wait below is on an event or a file.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	s := newSimSite(t, fedisim.Config{Instances: 1000})
	if code, out, errs := s.crawl(t, crawl1, "--isolation", "none"); code != exitOK {
		t.Fatalf("first crawl: exit %d\n%s\n%s", code, out, errs)
	}
	counts := func() (checks, hosts, passes int) {
		t.Helper()
		code, out, errs := s.sql(t, "--format", "csv",
			"SELECT (SELECT count(*) FROM checks), (SELECT count(*) FROM state), (SELECT count(*) FROM passes)")
		if code != exitOK {
			t.Fatalf("sql: exit %d\n%s\n%s", code, out, errs)
		}
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(rows) != 2 {
			t.Fatalf("sql output %q: %v", out, err)
		}
		n := make([]int, 3)
		for i := range n {
			n[i], _ = strconv.Atoi(rows[1][i])
		}
		return n[0], n[1], n[2]
	}
	checks0, hosts0, passes0 := counts()

	// The second pass checks the hundreds of hosts the seeds named; the
	// gate holds it after its first few hundred connections.
	g := newGate(t, 300)
	args := []string{"crawl", "--quiet", "--config", s.config, "--data", s.data(), "--now", crawl2,
		"--isolation", "none", "--flush-checks", "1"}
	for i := 0; i < len(s.net); i += 2 {
		v := s.net[i+1]
		if s.net[i] == "--connect-to" {
			v = g.rule(v)
		}
		args = append(args, s.net[i], v)
	}
	cmd := observerProcess(t, args...)
	var crawlOut strings.Builder
	cmd.Stdout, cmd.Stderr = &crawlOut, &crawlOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-g.held:
	case err := <-exited:
		t.Fatalf("the crawl ended before the gate held it (%v):\n%s", err, crawlOut.String())
	case <-ctx.Done():
		t.Fatal("the crawl never reached the gate")
	}
	// Wait for a snapshot file of this pass: its flushed checks.
	before, _ := filepath.Glob(filepath.Join(s.data(), "checks", "*", "*.parquet"))
	for {
		now, _ := filepath.Glob(filepath.Join(s.data(), "checks", "*", "*.parquet"))
		if len(now) > len(before) || slices.ContainsFunc(now, func(f string) bool { return !slices.Contains(before, f) }) {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the held pass never flushed a check")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Mid-pass: the crawl is alive, holds data/.lock and is writing.
	checks1, hosts1, passes1 := counts()
	if checks1 <= checks0 || hosts1 < hosts0 || passes1 != passes0 {
		t.Fatalf("mid-pass: checks %d→%d, hosts %d→%d, passes %d→%d; want more checks, the same passes",
			checks0, checks1, hosts0, hosts1, passes0, passes1)
	}
	select {
	case err := <-exited:
		t.Fatalf("the crawl ended while held (%v): the query was not concurrent\n%s", err, crawlOut.String())
	default:
	}

	close(g.release)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("crawl: %v\n%s", err, crawlOut.String())
		}
	case <-ctx.Done():
		t.Fatal("the released crawl never ended")
	}
	checks2, hosts2, passes2 := counts()
	t.Logf("checks before, mid-pass, after: %d, %d, %d", checks0, checks1, checks2)
	if checks2 <= checks1 || hosts2 < hosts1 || passes2 != passes0+1 {
		t.Fatalf("after the pass: checks %d→%d, hosts %d→%d, passes %d→%d", checks1, checks2, hosts1, hosts2, passes0, passes2)
	}
}
