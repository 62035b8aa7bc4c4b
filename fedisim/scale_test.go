package fedisim_test

import (
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fediverse-observer/observer/fedisim"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

const million = 1_000_000

// lastAlive is the highest-numbered instance alive on day 0 with a
// Mastodon-shaped peers list.
func lastAlive(s *fedisim.Sim) fedisim.Info {
	for i := s.Config().Instances - 1; i >= 0; i-- {
		inf, _ := s.Instance(s.Host(i))
		if s.StateOn(inf.Host, 0).State == fedisim.StateAlive && inf.PeersPath == "/api/v1/instance/peers" && inf.PeersStatus == 200 {
			return inf
		}
	}
	return fedisim.Info{}
}

func TestMillionInstancesStaySmall(t *testing.T) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	s := testsupport.StartSim(t, fedisim.Config{Seed: 2, Instances: million})
	c := newClient(t, s)
	inf := lastAlive(s)
	if inf.Index < million-100 {
		t.Fatalf("no live instance near the end: %+v", inf)
	}
	ni, _ := getNodeInfo(t, c, inf.Host)
	if ni.Software.Version != inf.Version {
		t.Fatalf("nodeinfo %+v for %+v", ni, inf)
	}
	peers, status := getPeers(t, c, inf.Host, inf.Family)
	if status != 200 || len(peers) < 10 {
		t.Fatalf("%d peers, status %d", len(peers), status)
	}
	for _, p := range peers {
		if pi, ok := s.Instance(p); ok && (pi.Index < 0 || pi.Index >= million) {
			t.Fatalf("peer %s has index %d", p, pi.Index)
		}
	}
	seeds := s.Seeds(20)
	if len(seeds) != 20 {
		t.Fatalf("Seeds(20) = %v", seeds)
	}
	hub, _ := s.Instance(seeds[19])
	hubPeers, _ := getPeers(t, c, hub.Host, hub.Family)
	if !hub.Hub || len(hubPeers) < 1000 {
		t.Fatalf("seed %s: hub %v with %d peers", hub.Host, hub.Hub, len(hubPeers))
	}

	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 32<<20 {
		t.Fatalf("a million-instance simulator holds %d MiB", grown>>20)
	}
}

// FuzzInstance feeds arbitrary host names to the host-name decoder.
func FuzzInstance(f *testing.F) {
	s, err := fedisim.New(fedisim.Config{Seed: 1, Instances: 5000, HostileHosts: true})
	if err != nil {
		f.Fatal(err)
	}
	for _, h := range []string{s.Host(0), s.Host(4999), "amber-otter-zzzzzzzzzzzzzz.social", "a-b-.de", "-.x", "hostile-trickle.social", "x-y-1.co.uk"} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, host string) {
		inf, ok := s.Instance(host)
		st := s.StateOn(host, 3)
		if ok != (st.State != fedisim.StateUnknown) {
			t.Fatalf("Instance ok=%v but StateOn %v", ok, st)
		}
		if ok && inf.Host != host {
			t.Fatalf("Instance(%q).Host = %q", host, inf.Host)
		}
		if ok && inf.Index >= 0 && s.Host(inf.Index) != host && inf.MoveTargetOf == "" {
			t.Fatalf("%q decodes to index %d, named %q", host, inf.Index, s.Host(inf.Index))
		}
	})
}

// FuzzMisskeyBody feeds arbitrary request bodies to the Misskey peers
// endpoint, the one place the simulator parses a request body.
func FuzzMisskeyBody(f *testing.F) {
	s, err := fedisim.New(fedisim.Config{Seed: 1, Instances: 3000, PeersDenied: -1})
	if err != nil {
		f.Fatal(err)
	}
	var host string
	for h := range s.Hosts(0) {
		if inf, _ := s.Instance(h); inf.Family == "misskey" && s.StateOn(h, 0).State == fedisim.StateAlive {
			host = h
			break
		}
	}
	for _, b := range []string{`{"limit":10,"offset":5}`, `{}`, ``, `{"limit":-1}`, `{"offset":1e99}`, `[`, `{"limit":100,"offset":100000}`} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "https://"+host+"/api/federation/instances", strings.NewReader(body))
		s.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			var page []struct {
				Host string `json:"host"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || len(page) > 100 {
				t.Fatalf("200 with %d entries, %v", len(page), err)
			}
		case http.StatusBadRequest:
		default:
			t.Fatalf("status %d", rec.Code)
		}
	})
}

// benchHosts returns n live Mastodon-shaped instances of a million-instance
// simulator, skipping the hubs (their lists are atypically long).
func benchHosts(s *fedisim.Sim, n int) []fedisim.Info {
	var out []fedisim.Info
	for h := range s.Hosts(0) {
		inf, _ := s.Instance(h)
		if s.StateOn(h, 0).State == fedisim.StateAlive && !inf.Hub && inf.PeersPath == "/api/v1/instance/peers" && inf.PeersStatus == 200 {
			out = append(out, inf)
			if len(out) == n {
				break
			}
		}
	}
	return out
}

func benchRequests(b *testing.B, path func(*http.Client, fedisim.Info) string) {
	s := testsupport.StartSim(b, fedisim.Config{Seed: 1, Instances: million})
	c := newClient(b, s)
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = 4
	hosts := benchHosts(s, 64)
	urls := make([]string, len(hosts))
	for k, inf := range hosts {
		urls[k] = "https://" + inf.Host + path(c, inf)
		mustFetch(b, c, "GET", urls[k], nil) // warm the connection and certificate
	}
	var next, bytes atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, err := fetch(b, c, "GET", urls[next.Add(1)%int64(len(urls))], nil)
			if err != nil || r.status != 200 {
				b.Fatalf("status %d, %v", r.status, err)
			}
			bytes.Add(int64(len(r.body)))
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(bytes.Load())/float64(b.N), "body-bytes/req")
}

// BenchmarkServeNodeInfo measures NodeInfo documents served per second
// through TLS on loopback with keep-alive (client in the same process).
func BenchmarkServeNodeInfo(b *testing.B) {
	benchRequests(b, func(c *http.Client, inf fedisim.Info) string {
		r := mustFetch(b, c, "GET", "https://"+inf.Host+"/.well-known/nodeinfo", nil)
		wk, err := decodeWellKnown(r.body)
		if err != nil || len(wk.Links) == 0 {
			b.Fatalf("%s: %s", inf.Host, r.body)
		}
		return strings.TrimPrefix(wk.Links[0].Href, "https://"+inf.Host)
	})
}

// BenchmarkServePeers measures Mastodon peers lists of ordinary instances
// served per second.
func BenchmarkServePeers(b *testing.B) {
	benchRequests(b, func(*http.Client, fedisim.Info) string { return "/api/v1/instance/peers" })
}

// BenchmarkServeCheck measures what one crawler check costs the simulator:
// a new TLS connection to a host not seen before (a certificate minted) and
// robots.txt, the well-known document, NodeInfo and peers on it.
func BenchmarkServeCheck(b *testing.B) {
	s := testsupport.StartSim(b, fedisim.Config{Seed: 1, Instances: million})
	c := newClient(b, s)
	c.Transport.(*http.Transport).MaxIdleConns = 16
	next, stop := iterPull(s)
	defer stop()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			host := next()
			for _, p := range []string{"/robots.txt", "/.well-known/nodeinfo", "/nodeinfo/2.0", "/api/v1/instance/peers"} {
				r, err := fetch(b, c, "GET", "https://"+host+p, nil)
				if err != nil {
					b.Fatal(err)
				}
				_ = r
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
}

// iterPull hands out the hosts of day 0 one by one, safely for concurrent
// callers.
func iterPull(s *fedisim.Sim) (func() string, func()) {
	next, stop := iter.Pull(s.Hosts(0))
	var mu sync.Mutex
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		h, _ := next()
		return h
	}, stop
}
