package crawl

import (
	"github.com/fediverse-observer/observer/hostname"

	"github.com/fediverse-observer/observer"
)

// DomainBudget admits at most a fixed number of hosts per registrable
// (ICANN-level) domain in one pass. The caller applies it to the due list's
// hosts never checked before (DueList does, before the pass starts),
// so a farm of a million subdomains that list each other costs a handful of
// checks per pass instead of a million; the rest stay due and are taken a
// few at a time in later passes.
type DomainBudget struct {
	limit int
	used  map[string]int
}

// NewDomainBudget admits limit hosts per domain; limit <= 0 admits all.
func NewDomainBudget(limit int) *DomainBudget {
	return &DomainBudget{limit: limit, used: map[string]int{}}
}

// Admit reports whether host fits in its domain's budget, and counts it if so.
func (b *DomainBudget) Admit(host observer.Host) bool {
	if b.limit <= 0 {
		return true
	}
	d := hostname.Registrable(string(host))
	if b.used[d] >= b.limit {
		return false
	}
	b.used[d]++
	return true
}
