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
	due := crawl.NewDueList(2)
	fetch := crawl.PeersDue{Fetch: true}
	due.Offer("blocked.example", false, true, fetch)
	for i := range 5 {
		due.Offer(observer.Host(fmt.Sprintf("n%d.farm.example", i)), true, false, fetch)
	}
	due.Offer("old.farm.example", false, false, crawl.PeersDue{Fetch: true, PeersValidators: observer.PeersValidators{PeersETag: `"v1"`}})
	due.Offer("quiet.example", true, false, crawl.PeersDue{})

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

// Hosts discovered in a pass are admitted to it unless blocklisted, within
// their domain's budget and the pass's limit; the blocklist is asked once
// per check's discoveries, and no more once the limit is reached.
func TestAdmitDiscoveredLeavesOutTheBlocklisted(t *testing.T) {
	due := crawl.NewDueList(2)
	due.Offer("n0.farm.example", true, false, crawl.PeersDue{Fetch: true})
	var asked [][]observer.Host
	blocked := blockedAmong("spam.example", "x.spam.example")
	admit := due.AdmitDiscovered(3, func(hosts []observer.Host) map[observer.Host]bool {
		asked = append(asked, hosts)
		return blocked(hosts)
	})
	got := admit([]observer.Host{"spam.example", "n1.farm.example", "n2.farm.example", "a.example", "x.spam.example"})
	if want := []observer.Host{"n1.farm.example", "a.example"}; !slices.Equal(got, want) {
		t.Fatalf("admitted %v, want %v", got, want)
	}
	if got := admit([]observer.Host{"spam.example", "b.example", "c.example"}); !slices.Equal(got, []observer.Host{"b.example"}) {
		t.Fatalf("admitted %v, want b.example alone (the limit is 3)", got)
	}
	if got := admit([]observer.Host{"d.example"}); got != nil {
		t.Fatalf("admitted %v past the limit", got)
	}
	if len(asked) != 2 {
		t.Fatalf("the blocklist was asked %d times (%v), want once for each of the 2 checks' discoveries before the limit", len(asked), asked)
	}
}
