package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
	// peers lists are not (peers_interval: 14 days).
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
	// Fifteen days on, the lists are due again and asked conditionally.
	s.sim.ResetRequests()
	before := s.sim.Stats().NotModified
	pass("2026-01-16T07:00:00Z")
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

// Per-address politeness holds under --connect-to: the address a rule sends
// a host to is its address. A catch-all rule gathers every host on one
// address, as DNS pointing every name at one machine would, so the
// address's budget stops the pass's checks there, as it does when rules for
// each host send them all to one address; rules sending each host to its
// own address count each address apart.
func TestPolitenessPerAddressUnderConnectTo(t *testing.T) {
	for _, isolation := range []string{"process", "none"} {
		t.Run(isolation, func(t *testing.T) {
			s := newSimSite(t, fedisim.Config{Instances: 100})
			var hosts []string
			for h := range s.sim.Hosts(0) {
				if s.sim.StateOn(h, 0).State == fedisim.StateAlive && len(hosts) < 40 {
					hosts = append(hosts, h)
				}
			}
			// A few checks' requests per address and pass; every check
			// makes at least one request, so no more than 12 checks
			// are made at one address.
			os.WriteFile(s.config, []byte("[crawl]\nseeds = \"seeds.txt\"\nconcurrency = 8\ndiscovered_checks = 0\naddress_budget = 12\n"), 0o644)
			os.WriteFile(filepath.Join(s.dir, "seeds.txt"), nil, 0o644)
			ca := filepath.Join(s.dir, "ca.pem")
			pass := func(name string, rules []string) (checked []string, addresses, skipped int) {
				t.Helper()
				store := &simSite{dir: filepath.Join(s.dir, name)}
				data := filepath.Join(store.dir, "data")
				os.MkdirAll(data, 0o755)
				if code, _, errs := runObserver(t, append([]string{"add", "--data", data, "--now", "2026-01-01T00:00:00Z"}, hosts...)...); code != exitOK {
					t.Fatalf("add: %s", errs)
				}
				args := []string{"crawl", "--quiet", "--config", s.config, "--data", data, "--now", "2026-01-01T01:00:00Z",
					"--isolation", isolation, "--allow-addr", "127.0.0.0/8", "--ca-cert", ca}
				for _, r := range rules {
					args = append(args, "--connect-to", r)
				}
				// Hosts waiting for a busy address are checked in their
				// turn: the budget per address leaves hosts over, which
				// does not cut the pass short.
				if code, out, errs := runObserver(t, args...); code != exitOK {
					t.Fatalf("%s: exit %d\n%s\n%s", name, code, out, errs)
				}
				q := func(sql string) []string { t.Helper(); return store.query(t, sql) }
				checked = q("SELECT host FROM checks ORDER BY host")
				f := strings.Fields(q("SELECT addresses, skipped_address_budget FROM passes")[0])
				addresses, _ = strconv.Atoi(f[0])
				skipped, _ = strconv.Atoi(f[1])
				return checked, addresses, skipped
			}

			// A rule for each host, all to one address (a hosting
			// provider's), is the catch-all's case.
			var oneAddress []string
			for _, h := range hosts {
				oneAddress = append(oneAddress, h+":443:"+s.sim.AddrOf(hosts[0]))
			}
			for name, rules := range map[string][]string{"catch-all": {s.sim.ConnectTo()}, "one-address": oneAddress} {
				checked, addresses, skipped := pass(name, rules)
				if addresses != 1 || skipped == 0 || len(checked) > 12 || len(checked)+skipped != len(hosts) {
					t.Errorf("%s: %d checks at %d addresses, %d skipped for the budget; want a few checks at 1 address, then the budget used up",
						name, len(checked), addresses, skipped)
				}
			}

			checked, addresses, skipped := pass("each", s.sim.ConnectToEach())
			at := map[string]int{}
			for _, h := range checked {
				at[s.sim.AddrOf(h)]++
			}
			if addresses != len(at) || addresses < 20 || len(checked) != len(hosts) || skipped != 0 {
				t.Errorf("a rule per host: %d checks at %d addresses (%d by the rules), %d skipped; want all %d hosts checked, counted at their own addresses",
					len(checked), addresses, len(at), skipped, len(hosts))
			}
			// The budget still holds at each address.
			for a, n := range at {
				if n > 12 {
					t.Errorf("%d checks at %s, past its budget", n, a)
				}
			}
		})
	}
}
