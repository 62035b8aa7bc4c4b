package fedisim_test

import (
	"testing"

	"golang.org/x/net/publicsuffix"

	"github.com/fediverse-observer/observer/fedisim"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// A flooder is alive and its peers list names FloodPeers distinct new names,
// each its own registrable domain, and others the next day.
func TestFlooders(t *testing.T) {
	s := testsupport.StartSim(t, fedisim.Config{Seed: 1, Instances: 50, Flooders: 2, FloodPeers: 5000})
	c := newClient(t, s)
	flooders := s.Flooders()
	if len(flooders) != 2 {
		t.Fatalf("flooders %v", flooders)
	}
	if ni, _ := getNodeInfo(t, c, flooders[1]); ni.Software.Name != "mastodon" {
		t.Errorf("flooder's NodeInfo: %+v", ni)
	}
	day0, status := getPeers(t, c, flooders[1], "mastodon")
	if status != 200 || len(day0) != 5000 {
		t.Fatalf("flooder's peers: HTTP %d, %d entries", status, len(day0))
	}
	domains := map[string]bool{}
	for _, h := range day0 {
		d, err := publicsuffix.EffectiveTLDPlusOne(h)
		if err != nil || d != h {
			t.Fatalf("%s is not its own registrable domain (%s, %v)", h, d, err)
		}
		domains[d] = true
	}
	if len(domains) != 5000 {
		t.Errorf("%d distinct names in a list of 5000", len(domains))
	}
	s.SetDay(1)
	day1, _ := getPeers(t, c, flooders[1], "mastodon")
	if len(day1) != 5000 || domains[day1[0]] || domains[day1[4999]] {
		t.Errorf("the next day's list repeats the first's: %d entries, %s", len(day1), day1[0])
	}
	other, _ := getPeers(t, c, flooders[0], "mastodon")
	if len(other) != 5000 || other[0] == day1[0] {
		t.Errorf("two flooders list the same names: %s", other[0])
	}
}
