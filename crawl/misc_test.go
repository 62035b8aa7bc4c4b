package crawl_test

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
)

func TestParseConnectTo(t *testing.T) {
	good := []struct {
		in   string
		want crawl.ConnectTo
	}{
		{"*:443:127.0.0.1:8443", crawl.ConnectTo{Port: 443, Addr: "127.0.0.1", AddrPort: 8443}},
		{"Example.COM:443:127.0.0.2:", crawl.ConnectTo{Host: "example.com", Port: 443, Addr: "127.0.0.2"}},
		{"::[::1]:8443", crawl.ConnectTo{Addr: "::1", AddrPort: 8443}},
		{"a.social::sim.example.net:9000", crawl.ConnectTo{Host: "a.social", Addr: "sim.example.net", AddrPort: 9000}},
		{"*:443::8443", crawl.ConnectTo{Port: 443, AddrPort: 8443}},
	}
	for _, g := range good {
		got, err := crawl.ParseConnectTo(g.in)
		if err != nil || got != g.want {
			t.Errorf("ParseConnectTo(%q) = %+v, %v; want %+v", g.in, got, err, g.want)
			continue
		}
		again, err := crawl.ParseConnectTo(got.String())
		if err != nil || again != got {
			t.Errorf("round trip of %q via %q: %+v, %v", g.in, got.String(), again, err)
		}
	}
	for _, bad := range []string{"", "a.social", "a.social:443", "a.social:443:127.0.0.1", "a.social:x:127.0.0.1:1",
		"a.social:443:127.0.0.1:70000", "a.social:443:[::1:1", "a.social:443:[::1]1", "a.social:443:1:2:3:4", "a.social:0:1.2.3.4:5", "local host:443:1.2.3.4:5", "10.0.0.1:443:1.2.3.4:5"} {
		_, err := crawl.ParseConnectTo(bad)
		if err == nil {
			t.Errorf("ParseConnectTo(%q) accepted", bad)
		} else if !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
			t.Errorf("ParseConnectTo(%q): error %q does not name the input", bad, err)
		}
	}
}

func TestParseAllowAddr(t *testing.T) {
	for in, want := range map[string]string{"127.0.0.0/8": "127.0.0.0/8", "127.0.0.1": "127.0.0.1/32", "10.1.2.3/8": "10.0.0.0/8", "::1": "::1/128", "fd00::/8": "fd00::/8"} {
		p, err := crawl.ParseAllowAddr(in)
		if err != nil || p.String() != want {
			t.Errorf("ParseAllowAddr(%q) = %v, %v; want %s", in, p, err, want)
		}
	}
	for _, bad := range []string{"", "localhost", "127.0.0.1/33", "1.2.3"} {
		if _, err := crawl.ParseAllowAddr(bad); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
			t.Errorf("ParseAllowAddr(%q): %v", bad, err)
		}
	}
}

func TestKnownSet(t *testing.T) {
	var nilSet *crawl.KnownSet
	if nilSet.Has("a.social") || nilSet.HasBytes([]byte("a.social")) || nilSet.Len() != 0 {
		t.Error("nil set is not empty")
	}
	var s crawl.KnownSet // zero value usable
	const n = 10000
	for i := 0; i < n; i++ {
		if !s.Add(observer.Host(fmt.Sprintf("h%d.social", i))) {
			t.Fatalf("h%d reported as present", i)
		}
	}
	if s.Add("h5.social") {
		t.Error("duplicate Add reported new")
	}
	if s.Len() != n {
		t.Errorf("Len = %d", s.Len())
	}
	for i := 0; i < n; i++ {
		h := fmt.Sprintf("h%d.social", i)
		if !s.Has(observer.Host(h)) || !s.HasBytes([]byte(h)) {
			t.Fatalf("%s missing", h)
		}
		if s.Has(observer.Host(fmt.Sprintf("x%d.social", i))) {
			t.Fatalf("x%d.social present", i)
		}
	}
}

// A table built for n hosts (any size, not a power of two) takes them at
// its fixed load, finds them again read as KnownSetOf, and refuses a host
// that would leave it without an empty slot.
func TestKnownTable(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000, 12345} {
		slots := make([]uint64, crawl.KnownTableSlots(n))
		if n > 0 && float64(n)/float64(len(slots)) > crawl.FrozenLoad {
			t.Errorf("%d hosts in %d slots: load over %v", n, len(slots), crawl.FrozenLoad)
		}
		build, err := crawl.BuildKnownTable(slots)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if added, err := build.TryAdd(observer.Host(fmt.Sprintf("h%d.social", i))); !added || err != nil {
				t.Fatalf("n=%d: h%d: added %v, %v", n, i, added, err)
			}
		}
		table, count := build.Table()
		s, err := crawl.KnownSetOf(table, count)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if !s.Has(observer.Host(fmt.Sprintf("h%d.social", i))) || s.Has(observer.Host(fmt.Sprintf("x%d.social", i))) {
				t.Fatalf("n=%d: lookup of h%d or x%d wrong", n, i, i)
			}
		}
		// Fill it up: the last slot stays empty.
		full := false
		for i := n; i < len(slots)+1; i++ {
			if _, err := build.TryAdd(observer.Host(fmt.Sprintf("h%d.social", i))); err != nil {
				full = true
				break
			}
		}
		if _, count := build.Table(); !full || count != len(slots)-1 {
			t.Errorf("n=%d: full %v with %d of %d slots used", n, full, count, len(slots))
		}
	}
	if _, err := crawl.KnownSetOf(make([]uint64, 16), 16); err == nil {
		t.Error("a table of 16 slots read as holding 16 hosts")
	}
}

func TestWriteTextAndReport(t *testing.T) {
	users := int64(5)
	r := observer.Result{
		Check: observer.Check{Host: "alpha.social", CheckedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			Outcome: observer.OutcomeAlive, HTTPStatus: 200, Software: "mastodon", Version: "4.3", NodeInfoVersion: "2.0",
			Users: &users, Name: "Evil\x1b[2Jname", PeersFetched: true, PeersCount: 3, NewPeersCount: 1},
		Discoveries: []observer.Discovery{{Host: "b.social", Via: "alpha.social"}},
		Bytes:       1234,
	}
	tr := crawl.Trace{Steps: []crawl.Step{
		{Method: "GET", URL: "https://alpha.social/robots.txt", Status: 404, Bytes: 9},
		{Note: "robots.txt allows /.well-known/nodeinfo"},
		{Method: "GET", URL: "https://alpha.social/x\x07", Error: "timeout"},
	}}
	var b strings.Builder
	if err := crawl.WriteText(&b, r, tr); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"check alpha.social at 2026-01-01T00:00:00Z", "GET https://alpha.social/robots.txt -> 404, 9 bytes",
		"robots.txt allows", "failed: timeout", "outcome: alive (HTTP 200)", "software: mastodon 4.3 (NodeInfo 2.0)",
		"users: 5 total", `name: "Evil\x1b[2Jname"`, "peers: 3 valid, 1 new", "new: b.social (via alpha.social)", `x\a`} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("control characters reached the terminal:\n%q", out)
	}
	// A hub's thousands of discoveries: the first twenty are listed, then
	// how many more there are.
	for i := range 25 {
		r.Discoveries = append(r.Discoveries, observer.Discovery{Host: observer.Host(fmt.Sprintf("n%02d.social", i)), Via: "alpha.social"})
	}
	b.Reset()
	if err := crawl.WriteText(&b, r, tr); err != nil {
		t.Fatal(err)
	}
	hub := b.String()
	if n := strings.Count(hub, "  new: "); n != 20 || !strings.Contains(hub, "new: n18.social") || strings.Contains(hub, "new: n19.social") ||
		!strings.Contains(hub, "… and 6 more new (observer check --json lists them all)") {
		t.Errorf("%d discoveries listed of 26:\n%s", n, hub)
	}
	b.Reset()
	err := crawl.WriteJSON(&b, r, tr)
	var report crawl.Report
	if err == nil {
		err = json.Unmarshal([]byte(b.String()), &report)
	}
	if err != nil || report.Result.Check.Outcome != "alive" || len(report.Result.Discoveries) != 26 || len(report.Steps) != len(tr.Steps) || report.Steps[0].Method != "GET" {
		t.Errorf("report JSON = %s, %v", b.String(), err)
	}
}

func FuzzParseConnectTo(f *testing.F) {
	for _, s := range []string{"*:443:127.0.0.1:8443", "::[::1]:1", "a.social:443::", "x:1:y:2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := crawl.ParseConnectTo(s)
		if err != nil {
			return
		}
		again, err := crawl.ParseConnectTo(c.String())
		if err != nil || again != c {
			t.Fatalf("%q parsed as %+v, printed %q, reparsed %+v, %v", s, c, c.String(), again, err)
		}
	})
}

// A check offers the classical key exchanges only, not the post-quantum
// hybrid: what it reads is public, and the hybrid cost a quarter of its TLS.
func TestCheckOffersClassicalKeyExchanges(t *testing.T) {
	e := newEnv(t)
	e.host("alpha.social", instance("alpha.social", "Mastodon", `[]`))
	r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	hellos := e.srv.KeyExchanges()
	if len(hellos) == 0 {
		t.Fatal("no client hello seen")
	}
	want := []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521}
	for i, got := range hellos {
		if !slices.Equal(got, want) {
			t.Errorf("client hello %d offered %v, want %v", i+1, got, want)
		}
	}
}
