package crawl_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
)

// The due list leaves out blocklisted hosts, and new hosts past their
// domain's budget, counting each; a host checked before is never held back
// by the budget, and only peers lists not due unconditionally are remembered.
func TestDueListLeavesOutWhatThePassMustNotCheck(t *testing.T) {
	due := crawl.NewDueList(func(h observer.Host) bool { return h == "blocked.example" }, 2)
	fetch := crawl.PeersDue{Fetch: true}
	due.Offer("blocked.example", false, fetch)
	for i := range 5 {
		due.Offer(observer.Host(fmt.Sprintf("n%d.farm.example", i)), true, fetch)
	}
	due.Offer("old.farm.example", false, crawl.PeersDue{Fetch: true, PeersValidators: observer.PeersValidators{PeersETag: `"v1"`}})
	due.Offer("quiet.example", true, crawl.PeersDue{})

	want := []observer.Host{"n0.farm.example", "n1.farm.example", "old.farm.example", "quiet.example"}
	if !slices.Equal(due.Hosts, want) {
		t.Fatalf("hosts = %v, want %v", due.Hosts, want)
	}
	if due.Blocklisted != 1 || due.OverDomainBudget != 3 {
		t.Fatalf("blocklisted %d, over domain budget %d; want 1, 3", due.Blocklisted, due.OverDomainBudget)
	}
	for host, want := range map[string]crawl.PeersDue{
		"n0.farm.example":  fetch,
		"old.farm.example": {Fetch: true, PeersValidators: observer.PeersValidators{PeersETag: `"v1"`}},
		"quiet.example":    {},
	} {
		if got := due.Peers(observer.Host(host)); got != want {
			t.Errorf("peers of %s = %+v, want %+v", host, got, want)
		}
	}
}
