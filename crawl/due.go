package crawl

import "github.com/fediverse-observer/observer"

// DueList is a pass's due list: the schedule's due hosts, less those the
// pass must not check. Blocklisted hosts are left out, and so are new hosts
// (never checked) past their registrable domain's budget (DomainBudget):
// those stay due and are taken a few at a time by later passes.
type DueList struct {
	Hosts            []observer.Host // the hosts to check, in the schedule's order
	Blocklisted      int             // due hosts left out for the blocklist
	OverDomainBudget int             // new hosts left out for their domain's budget

	blocked func(host observer.Host) bool
	budget  *DomainBudget
	// Only what differs from "fetch it, unconditionally" is kept, so a
	// fresh pass over a million new hosts holds no entry for them.
	peers map[observer.Host]PeersDue
}

// NewDueList starts an empty due list that leaves out the hosts blocked
// reports, and new hosts beyond domainBudget per registrable domain (0: no
// budget).
func NewDueList(blocked func(host observer.Host) bool, domainBudget int) *DueList {
	return &DueList{blocked: blocked, budget: NewDomainBudget(domainBudget), peers: map[observer.Host]PeersDue{}}
}

// Offer adds the schedule's next due host, unless the pass must not check
// it. isNew says the host was never checked; peers is how its peers list is
// due.
func (d *DueList) Offer(host observer.Host, isNew bool, peers PeersDue) {
	switch {
	case d.blocked(host):
		d.Blocklisted++
		return
	case isNew && !d.budget.Admit(host):
		d.OverDomainBudget++
		return
	}
	d.Hosts = append(d.Hosts, host)
	if peers != (PeersDue{Fetch: true}) {
		d.peers[host] = peers
	}
}

// Peers is how the pass fetches host's peers list (Pass.Peers).
func (d *DueList) Peers(host observer.Host) PeersDue {
	if pd, ok := d.peers[host]; ok {
		return pd
	}
	return PeersDue{Fetch: true}
}

// AdmitDiscovered returns what says whether a host discovered during the
// pass is to be checked in it too (Pass.CheckDiscovered): at most limit of
// them (<= 0: none), not blocklisted, and within its registrable domain's
// budget, which they share with the due list's new hosts. A host it refuses
// stays a recorded discovery, due by the schedule. Only the pass's
// collector calls what it returns, so it needs no lock.
func (d *DueList) AdmitDiscovered(limit int) func(host observer.Host) bool {
	return func(host observer.Host) bool {
		if limit <= 0 || d.blocked(host) || !d.budget.Admit(host) {
			return false
		}
		limit--
		return true
	}
}
