package crawl_test

import (
	"fmt"
	"testing"

	"github.com/fediverse-observer/observer/crawl"

	"github.com/fediverse-observer/observer"
)

func TestDomainBudget(t *testing.T) {
	b := crawl.NewDomainBudget(3)
	admitted := 0
	for i := range 100 {
		if b.Admit(observer.Host(fmt.Sprintf("node%d.spam-farm.online", i))) {
			admitted++
		}
	}
	if admitted != 3 {
		t.Fatalf("admitted %d farm hosts, want 3", admitted)
	}
	// Other domains have budgets of their own.
	if !b.Admit("mastodon.social") || !b.Admit("a.example.co.uk") || !b.Admit("b.example.co.uk") {
		t.Fatal("an unrelated domain was refused")
	}
	// No limit admits everything.
	all := crawl.NewDomainBudget(0)
	for i := range 50 {
		if !all.Admit(observer.Host(fmt.Sprintf("n%d.spam-farm.online", i))) {
			t.Fatal("limit 0 refused a host")
		}
	}
}
