package fedisim_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/fedisim"
)

func spreadSim(tb testing.TB, n int) *fedisim.Sim {
	tb.Helper()
	s, err := fedisim.New(fedisim.Config{Seed: 11, Instances: n, Spread: &fedisim.Spread{}})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// The spread model's ground truth is deterministic and ordered as
// documented: births in index order, hubs alive throughout, ghosts never
// alive, deaths after births, some instances born within the timeline.
func TestSpreadTruth(t *testing.T) {
	const n = 3000
	a, b := spreadSim(t, n), spreadSim(t, n)
	day0 := a.Config().Day0
	var prev time.Time
	var ghosts, later, dead, revived int
	for i := range n {
		tr, ok := a.Truth(i)
		if !ok {
			t.Fatal("no truth with the spread model")
		}
		if again, _ := b.Truth(i); again != tr {
			t.Fatalf("instance %d: two simulators with one seed differ: %+v, %+v", i, tr, again)
		}
		if tr.Ghost {
			ghosts++
			if tr.AliveAt(day0.Add(100 * 24 * time.Hour)) {
				t.Errorf("ghost %s alive", tr.Host)
			}
			continue
		}
		if tr.Born.Before(prev) {
			t.Fatalf("instance %d born %v, before instance %d's %v", i, tr.Born, i-1, prev)
		}
		prev = tr.Born
		if tr.Hub && (!tr.Died.IsZero() || !tr.AliveAt(day0)) {
			t.Errorf("hub %s: %+v", tr.Host, tr)
		}
		if !tr.Born.Before(day0) {
			later++
			if tr.FirstFederation.IsZero() || tr.FirstFederation.Before(tr.Born) {
				t.Errorf("%s born %v, first federation %v", tr.Host, tr.Born, tr.FirstFederation)
			}
		}
		if !tr.Died.IsZero() {
			dead++
			if !tr.Died.After(tr.Born) || tr.AliveAt(tr.Died) || !tr.AliveAt(tr.Died.Add(-time.Second)) {
				t.Errorf("%s: %+v", tr.Host, tr)
			}
			if !tr.Revived.IsZero() {
				revived++
				if !tr.AliveAt(tr.Revived) {
					t.Errorf("%s not alive once revived: %+v", tr.Host, tr)
				}
			}
		}
	}
	if ghosts < n/20 || later < n/4 || dead < n/10 || revived == 0 {
		t.Errorf("ghosts %d, born later %d, dead %d, revived %d of %d", ghosts, later, dead, revived, n)
	}
}

// A new instance's name reaches the hubs' peers lists first, within hours
// of its first federation, Mastodon's day of cache aside; lists name
// ghosts, dead instances and a host in a second spelling.
func TestSpreadReachesHubsFirst(t *testing.T) {
	const n = 3000
	s := spreadSim(t, n)
	day0 := s.Config().Day0
	hubs := s.Seeds(100)
	if len(hubs) < 5 {
		t.Fatalf("seeds = %v", hubs)
	}
	hubIndex := map[string]int{}
	for i := range n {
		if tr, _ := s.Truth(i); tr.Hub {
			hubIndex[tr.Host] = i
		}
	}
	inHubs := func(host string, at time.Time) bool {
		for _, h := range hubs {
			for p := range s.SpreadPeersAt(hubIndex[h], at) {
				if p == host {
					return true
				}
			}
		}
		return false
	}
	var checked, withinTwoDays int
	for i := n - 400; i < n; i += 20 {
		tr, _ := s.Truth(i)
		if tr.Ghost || !tr.Born.After(day0) {
			continue
		}
		checked++
		if inHubs(tr.Host, tr.Born.Add(-time.Second)) {
			t.Errorf("%s named by a hub before its birth", tr.Host)
		}
		if inHubs(tr.Host, tr.Born.Add(48*time.Hour)) {
			withinTwoDays++
		}
	}
	if checked == 0 || withinTwoDays < checked*9/10 {
		t.Errorf("%d of %d new instances named by a hub within two days of birth", withinTwoDays, checked)
	}

	// What a hub's list carries, late in the timeline.
	at := day0.Add(80 * 24 * time.Hour)
	var names, ghosts, dead, spelled int
	for p := range s.SpreadPeersAt(hubIndex[hubs[0]], at) {
		names++
		if p != strings.ToLower(strings.TrimSuffix(p, ".")) {
			spelled++
			continue
		}
		inf, ok := s.Instance(p)
		if !ok {
			t.Fatalf("hub lists %q, no instance", p)
		}
		tr, _ := s.Truth(inf.Index)
		switch {
		case tr.Ghost:
			ghosts++
		case !tr.AliveAt(at):
			dead++
		}
	}
	if ghosts == 0 || dead == 0 || spelled == 0 || names < n/10 {
		t.Errorf("hub list of %d names: %d ghosts, %d dead, %d second spellings", names, ghosts, dead, spelled)
	}
}

// Over the network: a hub (Mastodon) serves its list with a day's cache
// and a weak ETag, answers a matching If-None-Match with 304, and serves
// the same list all day; a ghost never answers.
func TestSpreadServesMastodonsCache(t *testing.T) {
	s, err := fedisim.New(fedisim.Config{Seed: 11, Instances: 2000, Spread: &fedisim.Spread{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := newClient(t, s)
	hub := s.Seeds(1)[0]
	day0 := s.Config().Day0
	s.SetNow(day0.Add(30 * 24 * time.Hour))
	url := "https://" + hub + "/api/v1/instance/peers"
	r := mustFetch(t, c, "GET", url, nil)
	if r.status != 200 || r.header.Get("Cache-Control") != "max-age=86400, public" || !strings.HasPrefix(r.header.Get("ETag"), `W/"`) {
		t.Fatalf("hub peers: %d %v", r.status, r.header)
	}
	var first []string
	if err := json.Unmarshal(r.body, &first); err != nil || len(first) == 0 {
		t.Fatalf("hub peers body: %v", err)
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("If-None-Match", r.header.Get("ETag"))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 304 {
		t.Errorf("conditional fetch of the same list: %d, want 304", resp.StatusCode)
	}
	// Within a day of cache, the list is one of at most two (the cache
	// renews once); two days later it has grown.
	seen := map[string]bool{}
	for h := 0; h < 24; h += 3 {
		s.SetNow(day0.Add(30*24*time.Hour + time.Duration(h)*time.Hour))
		seen[mustFetch(t, c, "GET", url, nil).header.Get("ETag")] = true
	}
	if len(seen) > 2 {
		t.Errorf("%d lists within one day of cache", len(seen))
	}
	s.SetNow(day0.Add(32 * 24 * time.Hour))
	var later []string
	json.Unmarshal(mustFetch(t, c, "GET", url, nil).body, &later)
	if len(later) <= len(first) || !slices.Contains(later, first[len(first)-1]) {
		t.Errorf("list of %d names two days later, was %d", len(later), len(first))
	}
	for i := range 2000 {
		if tr, _ := s.Truth(i); tr.Ghost {
			if _, err := fetch(t, c, "GET", "https://"+tr.Host+"/.well-known/nodeinfo", nil); err == nil {
				t.Errorf("ghost %s answered", tr.Host)
			}
			break
		}
	}
}

// FirstNamed is the first moment some instance's served peers list names
// an instance: none names it a second before, one does then.
func TestSpreadFirstNamed(t *testing.T) {
	const n = 400
	s := spreadSim(t, n)
	day0 := s.Config().Day0
	until := day0.Add(60 * 24 * time.Hour)
	namedBy := func(host string, at time.Time) bool {
		for k := range n {
			for p := range s.SpreadPeersAt(k, at) {
				if p == host {
					return true
				}
			}
		}
		return false
	}
	tested := 0
	for i := n - 1; i >= 0 && tested < 8; i-- {
		tr, _ := s.Truth(i)
		if tr.Ghost || tr.Born.Before(day0) || tr.Born.After(until.Add(-10*24*time.Hour)) {
			continue
		}
		at, ok := s.FirstNamed(i, until)
		if !ok {
			t.Fatalf("%s, born %s, never named by %s", tr.Host, tr.Born, until)
		}
		if at.Before(tr.FirstFederation) {
			t.Errorf("%s named at %s, before its first federation %s", tr.Host, at, tr.FirstFederation)
		}
		if !namedBy(tr.Host, at) || namedBy(tr.Host, at.Add(-time.Second)) {
			t.Errorf("%s: FirstNamed %s is not the first moment a served list names it", tr.Host, at)
		}
		tested++
	}
	if tested < 8 {
		t.Fatalf("only %d instances born in the timeline", tested)
	}
}
