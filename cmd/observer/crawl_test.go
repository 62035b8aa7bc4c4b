package main

import (
	"testing"

	"github.com/fediverse-observer/observer/crawl"
)

// A pass that leaves hosts over only because their address was busy says
// so rather than blaming a budget that did not run out.
func TestNotStartedReasonNamesTheCause(t *testing.T) {
	for _, c := range []struct {
		sum  crawl.Summary
		want string
	}{
		{crawl.Summary{NotStarted: 5}, "5 due hosts left for a later pass (budget reached)"},
		{crawl.Summary{NotStarted: 3, AddressBusy: 3}, "3 due hosts left for a later pass (address busy and every place to wait for it taken)"},
		{crawl.Summary{NotStarted: 5, AddressBusy: 2}, "5 due hosts left for a later pass (budget reached; 2 of them: address busy and every place to wait for it taken)"},
	} {
		if got := notStartedReason(c.sum); got != c.want {
			t.Errorf("notStartedReason(%+v) = %q, want %q", c.sum, got, c.want)
		}
	}
}
