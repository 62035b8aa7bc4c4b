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
	due := crawl.NewDueList(func(h string) bool { return h == "blocked.example" }, 2)
	fetch := crawl.PeersDue{Fetch: true}
	due.Offer("blocked.example", false, fetch)
	for i := range 5 {
		due.Offer(fmt.Sprintf("n%d.farm.example", i), true, fetch)
	}
	due.Offer("old.farm.example", false, crawl.PeersDue{Fetch: true, ETag: `"v1"`})
	due.Offer("quiet.example", true, crawl.PeersDue{})

	want := []string{"n0.farm.example", "n1.farm.example", "old.farm.example", "quiet.example"}
	if !slices.Equal(due.Hosts, want) {
		t.Fatalf("hosts = %v, want %v", due.Hosts, want)
	}
	if due.Blocklisted != 1 || due.OverDomainBudget != 3 {
		t.Fatalf("blocklisted %d, over domain budget %d; want 1, 3", due.Blocklisted, due.OverDomainBudget)
	}
	for host, want := range map[string]crawl.PeersDue{
		"n0.farm.example":  fetch,
		"old.farm.example": {Fetch: true, ETag: `"v1"`},
		"quiet.example":    {},
	} {
		if got := due.Peers(host); got != want {
			t.Errorf("peers of %s = %+v, want %+v", host, got, want)
		}
	}
}

// The data/passes row keeps the summary's figures, each in its own column,
// and the due list's.
func TestSummaryRecordKeepsEveryFigure(t *testing.T) {
	due := crawl.NewDueList(func(h string) bool { return h == "blocked.example" }, 1)
	due.Offer("blocked.example", false, crawl.PeersDue{Fetch: true})
	due.Offer("a.example", true, crawl.PeersDue{Fetch: true})
	due.Offer("b.a.example", true, crawl.PeersDue{Fetch: true})
	sum := crawl.Summary{PassID: "p", Checks: 1, SkippedAddressBudget: 2, Addresses: 3, BusiestAddressRequests: 5, AddressesOverBudget: 7,
		ByOutcome: map[observer.Outcome]int{observer.OutcomeError: 4, observer.OutcomeCheckerFailed: 6, observer.OutcomeAlive: 1}}
	p := sum.Record(due, "budget reached")
	got := [...]int64{p.SkippedAddressBudget, p.Addresses, p.BusiestAddressRequests, p.AddressesOverBudget, p.Due, p.Blocklisted, p.OverDomainBudget, p.Errors, p.ByOutcome[observer.OutcomeAlive]}
	if want := [...]int64{2, 3, 5, 7, 1, 1, 1, 10, 1}; got != want {
		t.Fatalf("skipped, addresses, busiest, over budget, due, blocklisted, over domain budget, errors, alive = %v, want %v", got, want)
	}
	if p.CutShort != "budget reached" || p.PassID != "p" {
		t.Fatalf("cut short %q, pass %q", p.CutShort, p.PassID)
	}
}
