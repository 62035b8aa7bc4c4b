package fedisim_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/temoto/robotstxt"
	"golang.org/x/net/publicsuffix"

	"github.com/fediverse-observer/observer/fedisim"
	"github.com/fediverse-observer/observer/hostname"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

func hostsOn(s *fedisim.Sim, day int) []string {
	var out []string
	for h := range s.Hosts(day) {
		out = append(out, h)
	}
	return out
}

func TestDeterministic(t *testing.T) {
	cfg := fedisim.Config{Seed: 42, Instances: 500, HostileHosts: true}
	a, b := testsupport.StartSim(t, cfg), testsupport.StartSim(t, cfg)
	other := testsupport.StartSim(t, fedisim.Config{Seed: 43, Instances: 500})
	if !slices.Equal(hostsOn(a, 0), hostsOn(b, 0)) || !slices.Equal(hostsOn(a, 20), hostsOn(b, 20)) {
		t.Fatal("same seed, different hosts")
	}
	if slices.Equal(hostsOn(a, 0), hostsOn(other, 0)) {
		t.Fatal("different seeds, same hosts")
	}
	if !slices.Equal(a.Seeds(5), b.Seeds(5)) || len(a.Seeds(5)) != 5 {
		t.Fatalf("seeds differ or short: %v %v", a.Seeds(5), b.Seeds(5))
	}
	ca, cb := newClient(t, a), newClient(t, b)
	for _, host := range append(a.Seeds(3), hostsOn(a, 0)[100:110]...) {
		ia, _ := a.Instance(host)
		ib, _ := b.Instance(host)
		if ia != ib {
			t.Fatalf("%s: Info differs: %+v vs %+v", host, ia, ib)
		}
		for _, path := range []string{"/.well-known/nodeinfo", "/robots.txt", "/api/v1/instance/peers", "/api/v3/federated_instances", "/api/v1/server/following"} {
			ra, ea := fetch(t, ca, "GET", "https://"+host+path, nil)
			rb, eb := fetch(t, cb, "GET", "https://"+host+path, nil)
			if (ea == nil) != (eb == nil) || ra.status != rb.status || !bytes.Equal(ra.body, rb.body) {
				t.Fatalf("%s%s differs between two sims of the same seed", host, path)
			}
		}
	}
}

// registrable checks host against the Public Suffix List: lower-case ASCII,
// an ICANN suffix, longer than the suffix; it returns the registrable domain.
func registrable(t *testing.T, host string) string {
	t.Helper()
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			t.Fatalf("%q: not lower-case ASCII", host)
		}
	}
	suffix, icann := publicsuffix.PublicSuffix(host)
	if !icann || suffix == host || !strings.Contains(suffix, ".") && strings.Count(host, ".") < 1 {
		t.Fatalf("%q: suffix %q icann=%v", host, suffix, icann)
	}
	reg, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		t.Fatalf("%q: %v", host, err)
	}
	return reg
}

func TestHostnamesPassPublicSuffixList(t *testing.T) {
	s := testsupport.StartSim(t, fedisim.Config{Seed: 7, Instances: 3000, HostileHosts: true})
	seen := map[string]string{}
	check := func(host string) {
		reg := registrable(t, host)
		if reg != host {
			t.Fatalf("%q is not its own registrable domain (%q)", host, reg)
		}
		if prev, ok := seen[reg]; ok && prev != host {
			t.Fatalf("%q and %q share a registrable domain", prev, host)
		}
		seen[reg] = host
	}
	for i := range 3000 {
		host := s.Host(i)
		check(host)
		inf, ok := s.Instance(host)
		if !ok || inf.Index != i || inf.Host != host {
			t.Fatalf("Instance(%q) = %+v, %v", host, inf, ok)
		}
		for _, target := range []string{inf.MovesTo, inf.MovingTo} {
			if target != "" {
				check(target)
				ti, ok := s.Instance(target)
				if !ok || ti.MoveTargetOf != host || ti.Index != i {
					t.Fatalf("Instance(%q) = %+v, %v; want the target of %s", target, ti, ok, host)
				}
			}
		}
	}
	farm := s.SpamFarm()
	for name := range s.Hostile() {
		if slices.Contains(farm, name) {
			if reg := registrable(t, name); reg != fedisim.SpamFarmDomain {
				t.Fatalf("spam farm host %q: registrable %q", name, reg)
			}
			continue
		}
		check(name)
	}
	if len(farm) < 10 {
		t.Fatalf("spam farm of %d hosts", len(farm))
	}
	for _, bad := range []string{"", "social", "x.test", "amber-otter-1.social", strings.ToUpper(s.Host(5)), s.Host(5) + "."} {
		if _, ok := s.Instance(bad); ok {
			t.Fatalf("Instance(%q) found", bad)
		}
	}
}

func TestEveryFamilyServesItsShapes(t *testing.T) {
	s := testsupport.StartSim(t, fedisim.Config{Seed: 3, Instances: 3000, PeersDenied: -1, JunkLists: -1})
	c := newClient(t, s)
	byFamily := map[string]string{}
	for h := range s.Hosts(0) {
		inf, _ := s.Instance(h)
		if s.StateOn(h, 0).State != fedisim.StateAlive {
			continue
		}
		if _, ok := byFamily[inf.Family]; !ok {
			byFamily[inf.Family] = h
		}
	}
	for _, fam := range []string{"mastodon", "hometown", "glitch", "pleroma", "akkoma", "misskey", "sharkey", "firefish", "iceshrimp", "lemmy", "peertube", "gotosocial", "friendica", "bookwyrm", "writefreely", "unknown"} {
		host, ok := byFamily[fam]
		if !ok {
			t.Errorf("no live %s instance among 3000", fam)
			continue
		}
		inf, _ := s.Instance(host)
		ni, rel := getNodeInfo(t, c, host)
		if ni.Software.Name != inf.NodeInfoName || strings.ToLower(ni.Software.Name) != inf.Software || ni.Software.Version != inf.Version {
			t.Errorf("%s %s: software %+v, want %+v", fam, host, ni.Software, inf)
		}
		if ni.Version != inf.NodeInfoVersion || !strings.HasSuffix(rel, "/ns/schema/"+ni.Version) {
			t.Errorf("%s: nodeinfo version %q via rel %q, want %q", host, ni.Version, rel, inf.NodeInfoVersion)
		}
		if ni.Usage.Users.Total != inf.Users || ni.Metadata.NodeName != inf.Name || ni.OpenRegistrations != inf.Open {
			t.Errorf("%s: usage/metadata %+v differ from %+v", host, ni, inf)
		}
		if (fam == "hometown" || fam == "glitch") && inf.Software != "mastodon" {
			t.Errorf("%s forks should say mastodon, say %q", fam, inf.Software)
		}
		peers, status := getPeers(t, c, host, fam)
		if fam == "writefreely" {
			if status != 404 || inf.PeersPath != "" {
				t.Errorf("writefreely %s: peers status %d path %q, want 404", host, status, inf.PeersPath)
			}
			continue
		}
		if status != 200 || len(peers) < 10 {
			t.Errorf("%s %s: peers status %d, %d entries", fam, host, status, len(peers))
			continue
		}
		for _, p := range peers {
			if _, ok := s.Instance(p); !ok {
				t.Errorf("%s %s: peer %q is not a simulator host", fam, host, p)
				break
			}
		}
		if slices.Contains(peers, host) {
			t.Errorf("%s lists itself", host)
		}
		sorted := slices.Clone(peers)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != len(peers) {
			t.Errorf("%s %s: duplicate peers", fam, host)
		}
	}
}

func TestMisskeyPagingAndMethod(t *testing.T) {
	s := testsupport.StartSim(t, fedisim.Config{Seed: 3, Instances: 3000, PeersDenied: -1, MinDegree: 150})
	c := newClient(t, s)
	var host string
	for h := range s.Hosts(0) {
		if inf, _ := s.Instance(h); inf.Family == "misskey" && s.StateOn(h, 0).State == fedisim.StateAlive {
			host = h
			break
		}
	}
	all, status := getPeers(t, c, host, "misskey")
	if status != 200 || len(all) < 100 {
		t.Fatalf("%s: %d peers, status %d", host, len(all), status)
	}
	r := mustFetch(t, c, "POST", "https://"+host+"/api/federation/instances", []byte(`{"limit":10,"offset":5}`))
	if !bytes.Contains(r.body, []byte(`"host":"`+all[5]+`"`)) || bytes.Contains(r.body, []byte(`"host":"`+all[15]+`"`)) {
		t.Fatalf("page offset 5 limit 10 wrong: %s", r.body)
	}
	if r := mustFetch(t, c, "GET", "https://"+host+"/api/federation/instances", nil); r.status == 200 {
		t.Fatal("GET on the Misskey endpoint should fail")
	}

	// Like Misskey, the list includes the instances the admin blocked
	// (isBlocked true) unless the request says "blocked": false, and only
	// them with "blocked": true. getPeers asks for blocked:false.
	blocked := fedisim.MisskeyBlockedHost(host, 0)
	if _, err := hostname.Normalize(blocked); err != nil {
		t.Fatalf("blocked host %q is not a valid name: %v", blocked, err)
	}
	if slices.Contains(all, blocked) {
		t.Fatalf("blocked:false still lists %s", blocked)
	}
	r = mustFetch(t, c, "POST", "https://"+host+"/api/federation/instances", []byte(`{"limit":3}`))
	if !bytes.Contains(r.body, []byte(`"host":"`+blocked+`"`)) || !bytes.Contains(r.body, []byte(`"isBlocked":true`)) ||
		!bytes.Contains(r.body, []byte(`"host":"`+all[0]+`"`)) {
		t.Fatalf("unfiltered page lacks the blocked instance or the first peer: %s", r.body)
	}
	r = mustFetch(t, c, "POST", "https://"+host+"/api/federation/instances", []byte(`{"limit":100,"blocked":true}`))
	if bytes.Contains(r.body, []byte(`"isBlocked":false`)) || bytes.Count(r.body, []byte(`"isBlocked":true`)) != 3 {
		t.Fatalf("blocked:true lists: %s", r.body)
	}
	if r := mustFetch(t, c, "POST", "https://"+host+"/api/federation/instances", []byte(`{"limit":1000}`)); r.status != 400 {
		t.Fatalf("limit 1000: status %d", r.status)
	}
}

// Like Lemmy 1.0, a Lemmy 1.x server lists its federated instances only
// under /api/v4, in cursor pages of at most 50, and kind=all (the
// default) includes the instances its admin blocked, each with a
// "blocked" object; getPeers asks for kind=linked.
func TestLemmyV4PagingAndKinds(t *testing.T) {
	s := testsupport.StartSim(t, fedisim.Config{Seed: 3, Instances: 3000, PeersDenied: -1, MinDegree: 150})
	c := newClient(t, s)
	var host string
	for h := range s.Hosts(0) {
		if inf, _ := s.Instance(h); inf.Family == "lemmy" && strings.HasPrefix(inf.Version, "1.") && s.StateOn(h, 0).State == fedisim.StateAlive {
			host = h
			break
		}
	}
	if host == "" {
		t.Fatal("no live Lemmy 1.x instance in the simulation")
	}
	base := "https://" + host
	if r := mustFetch(t, c, "GET", base+"/api/v3/federated_instances", nil); r.status != 404 {
		t.Fatalf("/api/v3/federated_instances: status %d, want 404", r.status)
	}
	linked, status := getPeers(t, c, host, "lemmy")
	var want []string
	for p := range s.PeersOn(host, 0) {
		want = append(want, p)
	}
	if status != 200 || len(linked) < 100 || !slices.Equal(linked, want) {
		t.Fatalf("%s: %d linked peers (status %d), want its %d peers", host, len(linked), status, len(want))
	}
	r := mustFetch(t, c, "GET", base+"/api/v4/federated_instances?limit=10&page_cursor=I5", nil)
	if !bytes.Contains(r.body, []byte(`"domain":"`+linked[5]+`"`)) || bytes.Contains(r.body, []byte(`"domain":"`+linked[15]+`"`)) ||
		!bytes.Contains(r.body, []byte(`"next_page":"I15"`)) {
		t.Fatalf("page at I5, limit 10, wrong: %s", r.body)
	}
	// The blocked instances come after the linked ones in kind=all.
	r = mustFetch(t, c, "GET", base+fmt.Sprintf("/api/v4/federated_instances?limit=50&page_cursor=I%d", len(linked)), nil)
	for b := range fedisim.LemmyBlockedHosts(host) {
		if slices.Contains(linked, b) {
			t.Fatalf("kind=linked lists the blocked %s", b)
		}
		if !bytes.Contains(r.body, []byte(`"domain":"`+b+`"`)) {
			t.Fatalf("kind=all lacks the blocked %s: %s", b, r.body)
		}
	}
	if bytes.Count(r.body, []byte(`"blocked":{`)) != 3 || bytes.Contains(r.body, []byte(`"next_page"`)) {
		t.Fatalf("kind=all's last page: %s", r.body)
	}
	for _, q := range []string{"limit=51", "limit=0", "kind=friends", "page_cursor=bogus"} {
		if r := mustFetch(t, c, "GET", base+"/api/v4/federated_instances?"+q, nil); r.status != 400 {
			t.Errorf("%s: status %d, want 400", q, r.status)
		}
	}
}

// Like PeerTube, follows in every state are listed unless the request asks
// for state=accepted; getPeers asks for it.
func TestPeerTubeFollowStates(t *testing.T) {
	s := testsupport.StartSim(t, fedisim.Config{Seed: 3, Instances: 3000, PeersDenied: -1})
	c := newClient(t, s)
	inf := find(t, s, "live peertube", func(inf fedisim.Info) bool {
		return inf.Family == "peertube" && s.StateOn(inf.Host, 0).State == fedisim.StateAlive
	})
	accepted, status := getPeers(t, c, inf.Host, "peertube")
	if status != 200 || len(accepted) == 0 {
		t.Fatalf("%s: status %d, %d accepted follows", inf.Host, status, len(accepted))
	}
	for _, followers := range []bool{true, false} {
		rejected := fedisim.PeerTubeRejectedHost(inf.Host, followers)
		if _, err := hostname.Normalize(rejected); err != nil {
			t.Fatalf("rejected host %q is not a valid name: %v", rejected, err)
		}
		if slices.Contains(accepted, rejected) {
			t.Errorf("state=accepted lists %s", rejected)
		}
		path := "/api/v1/server/following"
		if followers {
			path = "/api/v1/server/followers"
		}
		for q, want := range map[string]bool{"": true, "?state=rejected": true, "?state=accepted": false, "?state=pending": false} {
			r := mustFetch(t, c, "GET", "https://"+inf.Host+path+q, nil)
			if r.status != 200 || bytes.Contains(r.body, []byte(`"host":"`+rejected+`"`)) != want {
				t.Errorf("%s%s: status %d, lists %s: %v, want %v", path, q, r.status, rejected, !want, want)
			}
		}
	}
	if r := mustFetch(t, c, "GET", "https://"+inf.Host+"/api/v1/server/followers?state=bogus", nil); r.status != 400 {
		t.Errorf("state=bogus: status %d, want 400", r.status)
	}
}

// find returns the first instance whose Info satisfies ok.
func find(t *testing.T, s *fedisim.Sim, what string, ok func(fedisim.Info) bool) fedisim.Info {
	t.Helper()
	for i := range s.Config().Instances {
		if inf, _ := s.Instance(s.Host(i)); ok(inf) {
			return inf
		}
	}
	t.Fatalf("no instance %s", what)
	return fedisim.Info{}
}

func TestDayTransitions(t *testing.T) {
	s := testsupport.StartSim(t, fedisim.Config{Seed: 11, Instances: 2000, RecordRequests: true})
	c := newClient(t, s)
	alive := func(host string, day int) bool {
		t.Helper()
		s.SetDay(day)
		c.Transport.(interface{ CloseIdleConnections() }).CloseIdleConnections()
		r, err := fetch(t, c, "GET", "https://"+host+"/.well-known/nodeinfo", nil)
		return err == nil && r.status == 200
	}

	born := find(t, s, "born later", func(i fedisim.Info) bool {
		return i.BornDay > 2 && i.DiesDay == fedisim.NoDay && i.MovesDay == fedisim.NoDay && i.MovingDay == fedisim.NoDay
	})
	if alive(born.Host, born.BornDay-1) || !alive(born.Host, born.BornDay) {
		t.Errorf("%s should appear on day %d", born.Host, born.BornDay)
	}
	if s.StateOn(born.Host, born.BornDay-1).State != fedisim.StateNotBorn || slices.Contains(hostsOn(s, born.BornDay-1), born.Host) || !slices.Contains(hostsOn(s, born.BornDay), born.Host) {
		t.Errorf("%s: StateOn/Hosts disagree with the birth day", born.Host)
	}

	dies := find(t, s, "that dies", func(i fedisim.Info) bool { return i.DiesDay != fedisim.NoDay && i.RevivesDay == fedisim.NoDay })
	if !alive(dies.Host, dies.DiesDay-1) || alive(dies.Host, dies.DiesDay) || alive(dies.Host, dies.DiesDay+5) {
		t.Errorf("%s should die on day %d for good", dies.Host, dies.DiesDay)
	}
	for _, mode := range []string{fedisim.DownUnreachable, fedisim.Down503} {
		d := find(t, s, "down "+mode, func(i fedisim.Info) bool { return i.DiesDay != fedisim.NoDay && i.DownMode == mode })
		s.SetDay(d.DiesDay)
		r, err := fetch(t, c, "GET", "https://"+d.Host+"/.well-known/nodeinfo", nil)
		if mode == fedisim.DownUnreachable && err == nil || mode == fedisim.Down503 && (err != nil || r.status != 503) {
			t.Errorf("%s down as %s: status %d err %v", d.Host, mode, r.status, err)
		}
	}

	rev := find(t, s, "that revives", func(i fedisim.Info) bool { return i.RevivesDay != fedisim.NoDay })
	if !alive(rev.Host, rev.DiesDay-1) || alive(rev.Host, rev.DiesDay) || !alive(rev.Host, rev.RevivesDay) {
		t.Errorf("%s should die on %d and revive on %d", rev.Host, rev.DiesDay, rev.RevivesDay)
	}

	mv := find(t, s, "that moves", func(i fedisim.Info) bool { return i.MovesDay != fedisim.NoDay })
	s.SetDay(mv.MovesDay - 1)
	if r := mustFetch(t, c, "GET", "https://"+mv.Host+"/.well-known/nodeinfo", nil); r.status != 200 {
		t.Errorf("%s before its move: %d", mv.Host, r.status)
	}
	if _, err := fetch(t, c, "GET", "https://"+mv.MovesTo+"/.well-known/nodeinfo", nil); err == nil {
		t.Errorf("move target %s answers before the move", mv.MovesTo)
	}
	s.SetDay(mv.MovesDay)
	r := mustFetch(t, c, "GET", "https://"+mv.Host+"/api/v1/instance/peers?x=1", nil)
	if r.status != mv.MoveCode || (r.status != 301 && r.status != 308) || r.header.Get("Location") != "https://"+mv.MovesTo+"/api/v1/instance/peers?x=1" {
		t.Errorf("%s moved: %d Location %q", mv.Host, r.status, r.header.Get("Location"))
	}
	if st := s.StateOn(mv.Host, mv.MovesDay); st.State != fedisim.StateMoved || st.Target != mv.MovesTo {
		t.Errorf("StateOn = %+v", st)
	}
	ni, _ := getNodeInfo(t, c, mv.MovesTo)
	if ni.Software.Name != mv.NodeInfoName {
		t.Errorf("move target serves %q, want %q", ni.Software.Name, mv.NodeInfoName)
	}
	if !slices.Contains(hostsOn(s, mv.MovesDay), mv.MovesTo) || slices.Contains(hostsOn(s, mv.MovesDay), mv.Host) {
		t.Errorf("Hosts(%d) should name the new host only", mv.MovesDay)
	}

	mg := find(t, s, "moving", func(i fedisim.Info) bool { return i.MovingDay != fedisim.NoDay })
	s.SetDay(mg.MovingDay)
	r = mustFetch(t, c, "GET", "https://"+mg.Host+"/.well-known/nodeinfo", nil)
	if r.status != mg.MovingCode || (r.status != 302 && r.status != 307) || !strings.HasPrefix(r.header.Get("Location"), "https://"+mg.MovingTo+"/") {
		t.Errorf("%s moving: %d %q", mg.Host, r.status, r.header.Get("Location"))
	}
	if !alive(mg.Host, mg.MovingEnd) {
		t.Errorf("%s should be back on day %d", mg.Host, mg.MovingEnd)
	}

	oo := find(t, s, "opting out later", func(i fedisim.Info) bool { return i.OptOutDay != fedisim.NoDay && i.OptOutDay > i.BornDay })
	robots := func(day int) *robotstxt.RobotsData {
		s.SetDay(day)
		r := mustFetch(t, c, "GET", "https://"+oo.Host+"/robots.txt", nil)
		data, err := robotstxt.FromStatusAndBytes(r.status, r.body)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	if !robots(oo.OptOutDay-1).TestAgent("/.well-known/nodeinfo", "FediverseObserver") {
		t.Errorf("%s forbids before its opt-out day", oo.Host)
	}
	if robots(oo.OptOutDay).TestAgent("/.well-known/nodeinfo", "FediverseObserver") {
		t.Errorf("%s still allows on its opt-out day: rule %q", oo.Host, oo.OptOutRule)
	}
	if st := s.StateOn(oo.Host, oo.OptOutDay).State; st != fedisim.StateOptedOut {
		t.Errorf("StateOn = %s", st)
	}
	if n := len(s.Requests(oo.Host)); n != 2 {
		t.Errorf("Requests(%s) = %v", oo.Host, s.Requests(oo.Host))
	}
}

func TestLifeEventMix(t *testing.T) {
	s, err := fedisim.New(fedisim.Config{Seed: 5, Instances: 20000})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for i := range 20000 {
		inf, _ := s.Instance(s.Host(i))
		switch {
		case inf.BornDay > 0:
			count["born later"]++
		}
		switch {
		case inf.RevivesDay != fedisim.NoDay:
			count["revives"]++
		case inf.DiesDay != fedisim.NoDay:
			count["dies"]++
		case inf.MovesDay != fedisim.NoDay:
			count["moves"]++
		case inf.MovingDay != fedisim.NoDay:
			count["moving"]++
		case inf.OptOutDay != fedisim.NoDay:
			count["opts out"]++
		default:
			count["stable"]++
		}
		if inf.Hub {
			count["hub"]++
		}
	}
	within := func(name string, lo, hi float64) {
		f := float64(count[name]) / 20000
		if f < lo || f > hi {
			t.Errorf("%s: %.3f of instances, want %.3f..%.3f", name, f, lo, hi)
		}
	}
	within("stable", 0.8, 0.9)
	within("born later", 0.15, 0.25)
	within("dies", 0.02, 0.06)
	within("revives", 0.01, 0.03)
	within("moves", 0.015, 0.045)
	within("moving", 0.01, 0.03)
	within("opts out", 0.015, 0.045)
	within("hub", 0.005, 0.015)
}

func TestReachableFromSeeds(t *testing.T) {
	t.Run("default", func(t *testing.T) { testReachable(t, fedisim.Config{Seed: 9, Instances: 2000}, 2) })
	// Small hubs force several hops.
	t.Run("small hubs", func(t *testing.T) {
		testReachable(t, fedisim.Config{Seed: 9, Instances: 2000, HubDegree: 60, MinDegree: 8, MaxDegree: 200}, 5)
	})
}

func testReachable(t *testing.T, cfg fedisim.Config, hops int) {
	s := testsupport.StartSim(t, cfg)
	c := newClient(t, s)
	const day = 0
	depth := map[string]int{}
	queue := s.Seeds(5)
	for _, h := range queue {
		depth[h] = 0
	}
	maxDepth := 0
	for len(queue) > 0 {
		host := queue[0]
		queue = queue[1:]
		inf, ok := s.Instance(host)
		if !ok || s.StateOn(host, day).State != fedisim.StateAlive {
			continue
		}
		peers, status := getPeers(t, c, host, inf.Family)
		if status != 200 {
			continue
		}
		for _, p := range peers {
			if _, seen := depth[p]; !seen {
				depth[p] = depth[host] + 1
				maxDepth = max(maxDepth, depth[p])
				queue = append(queue, p)
			}
		}
	}
	exist := hostsOn(s, day)
	missing := 0
	for _, h := range exist {
		if _, ok := depth[h]; !ok {
			missing++
		}
	}
	if missing > len(exist)/50 {
		t.Fatalf("%d of %d existing hosts not reachable from the seeds", missing, len(exist))
	}
	if maxDepth > hops {
		t.Fatalf("reaching everything took %d hops", maxDepth)
	}
	t.Logf("%d hosts, %d missing, max depth %d", len(exist), missing, maxDepth)
}

func TestPeersOnMatchesServed(t *testing.T) {
	s := testsupport.StartSim(t, fedisim.Config{Seed: 21, Instances: 1500, RecordRequests: true})
	c := newClient(t, s)
	checked := 0
	for _, day := range []int{0, 12, 25} {
		s.SetDay(day)
		for i := 0; i < 1500 && checked < 60*(day+1); i += 7 {
			host := s.Host(i)
			inf, _ := s.Instance(host)
			var want []string
			for p := range s.PeersOn(host, day) {
				want = append(want, p)
			}
			st := s.StateOn(host, day).State
			if st != fedisim.StateAlive && st != fedisim.StateOptedOut {
				if len(want) != 0 {
					t.Fatalf("%s is %s on day %d but PeersOn lists %d", host, st, day, len(want))
				}
				continue
			}
			got, status := getPeers(t, c, host, inf.Family)
			if status != 200 {
				got = nil
			}
			// PeerTube splits the list into followers and following.
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("%s day %d: served %d peers, PeersOn %d", host, day, len(got), len(want))
			}
			checked++
		}
	}
	// Peers name instances under their current names.
	mv := find(t, s, "that moves", func(i fedisim.Info) bool { return i.MovesDay != fedisim.NoDay })
	seen := false
	for i := range 1500 {
		for p := range s.PeersOn(s.Host(i), mv.MovesDay) {
			if p == mv.Host {
				t.Fatalf("%s still listed under its old name on day %d", mv.Host, mv.MovesDay)
			}
			seen = seen || p == mv.MovesTo
		}
	}
	if !seen {
		t.Fatalf("nobody lists %s's new name", mv.Host)
	}
}

func TestNodeInfoVariety(t *testing.T) {
	s := testsupport.StartSim(t, fedisim.Config{Seed: 8, Instances: 1000})
	c := newClient(t, s)
	seen := map[string]int{}
	for host := range s.Hosts(0) {
		if s.StateOn(host, 0).State != fedisim.StateAlive {
			continue
		}
		r := mustFetch(t, c, "GET", "https://"+host+"/.well-known/nodeinfo", nil)
		if bytes.HasPrefix(r.body, []byte(`{"links":{`)) {
			seen["links object"]++
		}
		if bytes.Contains(r.body, []byte(`"rel":"https://`)) {
			seen["https rel"]++
		}
		if bytes.Count(r.body, []byte(`"rel"`)) > 1 {
			seen["several links"]++
		}
		ni, _ := getNodeInfo(t, c, host)
		seen["schema "+ni.Version]++
		if ni.Version == "2.2" && ni.Instance != nil && ni.Instance.Name == ni.Metadata.NodeName {
			seen["2.2 instance object"]++
		}
		if ni.Software.Name != strings.ToLower(ni.Software.Name) {
			seen["capitalised name"]++
		}
		if strings.ContainsAny(ni.Software.Version, "+ ") || strings.HasPrefix(ni.Software.Version, "v") || strings.Count(ni.Software.Version, ".") != 2 {
			seen["non-semver version"]++
		}
	}
	for _, k := range []string{"links object", "https rel", "several links", "schema 1.0", "schema 1.1", "schema 2.0", "schema 2.1", "schema 2.2", "2.2 instance object", "capitalised name", "non-semver version"} {
		if seen[k] == 0 {
			t.Errorf("no instance with %s among %v", k, seen)
		}
	}
}

func TestRobotsAgreeWithOptOut(t *testing.T) {
	s := testsupport.StartSim(t, fedisim.Config{Seed: 4, Instances: 1500, OptsOut: 0.2})
	c := newClient(t, s)
	const day = 20
	s.SetDay(day)
	var allowed, forbidden, missing int
	for host := range s.Hosts(day) {
		st := s.StateOn(host, day).State
		if st != fedisim.StateAlive && st != fedisim.StateOptedOut {
			continue
		}
		r := mustFetch(t, c, "GET", "https://"+host+"/robots.txt", nil)
		if r.status == 404 {
			missing++
		}
		data, err := robotstxt.FromStatusAndBytes(r.status, r.body)
		if err != nil {
			t.Fatalf("%s robots.txt: %v", host, err)
		}
		ok := data.TestAgent("/.well-known/nodeinfo", "FediverseObserver/1.0 (+https://example.org)")
		if ok != (st == fedisim.StateAlive) {
			t.Fatalf("%s is %s but robots.txt allows=%v:\n%s", host, st, ok, r.body)
		}
		if ok {
			allowed++
		} else {
			forbidden++
		}
	}
	if allowed < 4*forbidden || forbidden == 0 || missing == 0 {
		t.Fatalf("allowed %d, forbidden %d, no robots.txt %d", allowed, forbidden, missing)
	}
}

func TestPeersDenied(t *testing.T) {
	s := testsupport.StartSim(t, fedisim.Config{Seed: 4, Instances: 2000, PeersDenied: 0.3})
	c := newClient(t, s)
	seen := map[int]bool{}
	for host := range s.Hosts(0) {
		inf, _ := s.Instance(host)
		if s.StateOn(host, 0).State != fedisim.StateAlive || inf.PeersStatus == 200 || inf.PeersPath == "" || seen[inf.PeersStatus] {
			continue
		}
		if _, status := getPeers(t, c, host, inf.Family); status != inf.PeersStatus {
			t.Fatalf("%s: peers status %d, want %d", host, status, inf.PeersStatus)
		}
		seen[inf.PeersStatus] = true
	}
	if !seen[401] || !seen[403] || !seen[404] {
		t.Fatalf("statuses seen: %v", seen)
	}
}
