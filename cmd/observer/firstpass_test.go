package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/fedisim"
)

// firstPassWorld is the simulated world of the first-pass test and
// benchmark: 150 instances, of which the three seeds' peers lists lead,
// list by list, to 138 names and 118 instances alive.
var firstPassWorld = fedisim.Config{Seed: 48, Instances: 150}

const firstPassSeeds = 3

// reachableAlive is the ground truth a crawler from the seeds can reach on
// day 0: the alive instances the seeds lead to through the peers lists of
// alive instances, breadth first, and every name it meets.
func reachableAlive(sim *fedisim.Sim, seeds []string) (alive []string, named int) {
	seen := map[string]bool{}
	queue := append([]string(nil), seeds...)
	for _, h := range seeds {
		seen[h] = true
	}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if sim.StateOn(h, 0).State != fedisim.StateAlive {
			continue
		}
		alive = append(alive, h)
		for p := range sim.PeersOn(h, 0) {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	sort.Strings(alive)
	return alive, len(seen)
}

// One pass from the seeds, with the default schedule, finds every alive
// instance the seeds lead to, not only the seeds and the hosts they name:
// the hosts it discovers are checked in the same pass, and their lists read.
func TestOnePassFromTheSeedsFindsEveryReachableInstance(t *testing.T) {
	s := newSimSite(t, firstPassWorld)
	seeds := s.sim.Seeds(firstPassSeeds)
	os.WriteFile(filepath.Join(s.dir, "seeds.txt"), []byte(strings.Join(seeds, "\n")+"\n"), 0o644)
	// The default schedule (newSimSite's config leaves discoveries to the
	// next pass, which is what this test is not about).
	os.WriteFile(s.config, []byte("[crawl]\nseeds = \"seeds.txt\"\n"), 0o644)
	want, named := reachableAlive(s.sim, seeds)
	if len(want) < 100 {
		t.Fatalf("the world leads to %d alive instances; the test needs a hundred or more", len(want))
	}
	code, out, errs := s.crawl(t, "2026-01-01T00:00:00Z", "--isolation", "none")
	if code != exitOK {
		t.Fatalf("first pass: exit %d\n%s\n%s", code, out, errs)
	}
	got := s.query(t, "SELECT DISTINCT host FROM checks WHERE outcome = 'alive' ORDER BY host")
	if strings.Join(got, " ") != strings.Join(want, " ") {
		missing := []string{}
		for _, h := range want {
			if _, found := sort.Find(len(got), func(i int) int { return strings.Compare(h, got[i]) }); !found {
				missing = append(missing, h)
			}
		}
		t.Fatalf("one pass found %d alive instances, want the %d reachable from the seeds (%d names); missing %v\n%s", len(got), len(want), named, missing, out)
	}
	t.Logf("one pass: %d alive instances of the %d names reachable from %d seeds", len(got), named, len(seeds))
}
