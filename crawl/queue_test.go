package crawl_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/crawl"
)

// A pass checks the hosts it discovers, as far as they are admitted: a
// chain of discoveries three deep is checked in one pass, the blocklisted
// and those over their domain's budget are recorded but not checked, and
// without CheckDiscovered nothing discovered is checked.
func TestPassChecksItsDiscoveries(t *testing.T) {
	run := func(checkDiscovered bool, maxChecks int) (*fakeChecker, crawl.Summary, *memSink) {
		f := newFake()
		f.peers["seed.social"] = []string{"hub.social", "blocked.social", "a.farm.example", "b.farm.example", "c.farm.example"}
		f.peers["hub.social"] = []string{"new1.social", "new2.social", "seed.social"}
		f.peers["new2.social"] = []string{"deep.social", "new1.social"}
		due := crawl.NewDueList(2)
		due.Offer("seed.social", true, false, crawl.PeersDue{Fetch: true})
		due.Offer("old.social", false, false, crawl.PeersDue{})
		sink := &memSink{}
		p := &crawl.Pass{Checker: f, Sink: sink, Known: known("seed.social", "old.social"), Concurrency: 3,
			Now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), PassID: "p", Peers: due.Peers, MaxChecks: maxChecks}
		if checkDiscovered {
			p.CheckDiscovered = due.AdmitDiscovered(100, blockedAmong("blocked.social"))
		}
		sum, err := p.Run(context.Background(), due.Hosts)
		if err != nil {
			t.Fatal(err)
		}
		return f, sum, sink
	}

	f, sum, sink := run(true, 0)
	checked := sink.hosts()
	slices.Sort(checked)
	want := []string{"a.farm.example", "b.farm.example", "deep.social", "hub.social", "new1.social", "new2.social", "old.social", "seed.social"}
	if !slices.Equal(checked, want) {
		t.Errorf("checked %v, want %v", checked, want)
	}
	for h, n := range f.calls {
		if n != 1 {
			t.Errorf("%s checked %d times", h, n)
		}
	}
	// Discovered hosts are checked with their peers list, as new hosts.
	if !f.opts["new2.social"].FetchPeers {
		t.Error("a discovered host's peers list was not fetched")
	}
	if sum.Discovered != 8 || sum.DiscoveredChecked != 6 || sum.Checks != 8 || sum.NotStarted != 0 {
		t.Errorf("summary %+v", sum)
	}

	// Without CheckDiscovered, the pass checks its due list alone.
	_, sum, sink = run(false, 0)
	if got := sink.hosts(); len(got) != 2 || sum.Discovered != 5 || sum.DiscoveredChecked != 0 {
		t.Errorf("without CheckDiscovered: checked %v, summary %+v", got, sum)
	}

	// MaxChecks bounds discoveries too; the discoveries left over are not
	// counted as not started (they are due by the schedule).
	_, sum, sink = run(true, 3)
	if got := sink.hosts(); len(got) != 3 || sum.NotStarted != 0 || sum.DiscoveredChecked != 1 {
		t.Errorf("with MaxChecks 3: checked %v, summary %+v", got, sum)
	}
}
