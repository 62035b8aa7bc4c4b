package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/fedisim"
)

// peersRequests counts the peers-list requests host received.
func peersRequests(s *fedisim.Sim, host string) int {
	n := 0
	for _, r := range s.Requests(host) {
		if strings.Contains(r, "/api/v1/instance/peers") {
			n++
		}
	}
	return n
}

// TestPassesArePoliteAboutPeersListsAndTheBlocklist runs passes over the
// simulated fediverse at different --now times: a blocklisted seed is never
// contacted; a host's peers list is fetched once, skipped while it is
// within peers_interval, and asked for again afterwards with the ETag it was
// served with, which the server answers 304.
func TestPassesArePoliteAboutPeersListsAndTheBlocklist(t *testing.T) {
	s := newSimSite(t, fedisim.Config{Instances: 200, RecordRequests: true})
	seeds := s.sim.Seeds(4)
	blocked, watched := seeds[0], seeds[1:]
	os.WriteFile(filepath.Join(s.dir, "seeds.txt"), []byte(strings.Join(seeds, "\n")+"\n"), 0o644)
	os.MkdirAll(filepath.Join(s.dir, "data"), 0o755)
	os.WriteFile(filepath.Join(s.dir, "data", "blocklist.txt"), []byte("# asked to be left out\n"+blocked+"\n"), 0o644)

	pass := func(now string) {
		t.Helper()
		s.sim.SetDay(0) // the same lists every pass, so a conditional request can be answered 304
		if code, out, errs := s.crawl(t, now); code != exitOK {
			t.Fatalf("pass at %s: exit %d\n%s\n%s", now, code, out, errs)
		}
	}
	pass("2026-01-01T00:00:00Z")
	for _, h := range watched {
		if n := peersRequests(s.sim, h); n != 1 {
			t.Fatalf("%s: %d peers requests in the first pass, want 1", h, n)
		}
	}
	// 31 hours on, the seeds are due again (every 29 h ± 2 h) but their
	// peers lists are not (peers_interval: 7 days).
	s.sim.ResetRequests()
	pass("2026-01-02T07:00:00Z")
	for _, h := range watched {
		if len(s.sim.Requests(h)) == 0 {
			t.Fatalf("%s was not checked again after 31 hours", h)
		}
		if n := peersRequests(s.sim, h); n != 0 {
			t.Errorf("%s: peers list asked for again within peers_interval", h)
		}
	}
	// Eight days on, the lists are due again and asked conditionally.
	s.sim.ResetRequests()
	before := s.sim.Stats().NotModified
	pass("2026-01-09T07:00:00Z")
	for _, h := range watched {
		if n := peersRequests(s.sim, h); n != 1 {
			t.Errorf("%s: %d peers requests after peers_interval, want 1", h, n)
		}
	}
	if got := s.sim.Stats().NotModified - before; got < int64(len(watched)) {
		t.Errorf("%d peers lists answered 304, want at least the %d seeds'", got, len(watched))
	}
	rows := s.query(t, "SELECT host FROM checks WHERE peers_not_modified ORDER BY host")
	for _, h := range watched {
		if !slices.Contains(rows, h) {
			t.Errorf("%s: no check recorded its peers list as not modified (rows %v)", h, rows)
		}
	}

	if r := s.sim.Requests(blocked); len(r) > 0 {
		t.Errorf("blocklisted %s was requested: %v", blocked, r)
	}
	if got := s.query(t, "SELECT count(*) FROM checks WHERE host = '"+blocked+"'"); got[0] != "0" {
		t.Errorf("blocklisted %s was checked %s times", blocked, got[0])
	}
	// Each pass records what it left out: the blocklisted seed, due (never
	// checked) in all three; and its politeness figures, never NULL.
	if got := s.query(t, "SELECT count(*) || ' ' || sum(blocklisted) || ' ' || count(*) FILTER (WHERE addresses IS NULL OR over_domain_budget IS NULL) FROM passes"); got[0] != "3 3 0" {
		t.Errorf("passes, blocklisted, passes without politeness figures = %s, want 3 3 0", got[0])
	}
}

// TestInvalidBlocklistFailsNamingFileAndLine: a typo in the blocklist must
// not silently unblock a host, so the pass refuses to start.
func TestInvalidBlocklistFailsNamingFileAndLine(t *testing.T) {
	s := newSimSite(t, fedisim.Config{Instances: 20})
	os.MkdirAll(filepath.Join(s.dir, "data"), 0o755)
	list := filepath.Join(s.dir, "data", "blocklist.txt")
	os.WriteFile(list, []byte("fine.social\nhttp://not a host/\n"), 0o644)
	code, _, errs := s.crawl(t, "2026-01-01T00:00:00Z")
	if code != exitFailure || !strings.Contains(errs, list) || !strings.Contains(errs, "line 2") {
		t.Fatalf("exit %d, stderr:\n%s\nwant a failure naming %s and line 2", code, errs, list)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "data", "checks")); err == nil {
		t.Error("checks were written although the pass refused to start")
	}
}

// crawlSeed crawls host alone, as the only seed, on the simulation's first
// day, and returns the hosts discovered from its peers list, sorted.
func crawlSeed(t *testing.T, s *simSite, host string) []string {
	t.Helper()
	os.WriteFile(filepath.Join(s.dir, "seeds.txt"), []byte(host+"\n"), 0o644)
	if code, out, errs := s.crawl(t, "2026-01-01T00:00:00Z", "--max-checks", "1"); code != exitOK && code != exitCutShort {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	return s.query(t, "SELECT host FROM discoveries WHERE via = '"+host+"' ORDER BY host")
}

// Mbin (and kbin) list the instances they federate with at /api/federated;
// /api/defederated is the admin's block list, whose hosts must never be
// taken for peers. A pass reads the one and never asks for the other.
func TestMbinPeersAreReadAndItsBlockListNever(t *testing.T) {
	const instances = 3000
	s := newSimSite(t, fedisim.Config{Instances: instances, RecordRequests: true})
	var host string
	for i := range instances {
		h := s.sim.Host(i)
		inf, _ := s.sim.Instance(h)
		if inf.Family == "mbin" && inf.PeersStatus == 200 && s.sim.StateOn(h, 0).State == fedisim.StateAlive {
			host = h
			break
		}
	}
	if host == "" {
		t.Fatal("no live Mbin instance with a public peers list in the simulation")
	}
	want := slices.Sorted(s.sim.PeersOn(host, 0))
	if len(want) == 0 {
		t.Fatalf("%s lists no peers: the test would prove nothing", host)
	}
	got := crawlSeed(t, s, host)
	if !slices.Equal(got, want) {
		t.Errorf("discovered from %s: %d hosts, want its %d peers", host, len(got), len(want))
	}
	if n := s.sim.Stats().MbinBlockedReads; n != 0 {
		t.Errorf("the block list was read %d times", n)
	}
}

// Lemmy 1.0 lists its peers only under /api/v4, in cursor pages; a crawl
// of a Lemmy 1.x seed discovers every one of them, and none of the
// instances its admin blocked.
func TestLemmy1PeersAreRead(t *testing.T) {
	const instances = 3000
	// Without junk entries, its peers are exactly what it should yield.
	s := newSimSite(t, fedisim.Config{Instances: instances, MinDegree: 120, JunkLists: -1})
	var host string
	for i := range instances {
		h := s.sim.Host(i)
		inf, _ := s.sim.Instance(h)
		if inf.Family == "lemmy" && strings.HasPrefix(inf.Version, "1.") && inf.PeersStatus == 200 && s.sim.StateOn(h, 0).State == fedisim.StateAlive {
			host = h
			break
		}
	}
	if host == "" {
		t.Fatal("no live Lemmy 1.x instance with a public peers list in the simulation")
	}
	want := slices.Sorted(s.sim.PeersOn(host, 0))
	if len(want) <= 50 {
		t.Fatalf("%s lists %d peers: one page would prove nothing about the cursor", host, len(want))
	}
	got := crawlSeed(t, s, host)
	if !slices.Equal(got, want) {
		t.Errorf("discovered from %s: %d hosts, want its %d peers", host, len(got), len(want))
	}
	for b := range fedisim.LemmyBlockedHosts(host) {
		if slices.Contains(got, b) {
			t.Errorf("the blocked %s was discovered", b)
		}
	}
}
