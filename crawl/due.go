package crawl

import "github.com/fediverse-observer/observer"

// DueList is a pass's due list: the schedule's due hosts, less those the
// pass must not check. Blocklisted hosts are left out, and so are new hosts
// (never checked) past their registrable domain's budget (DomainBudget):
// those stay due and are taken a few at a time by later passes. It does
// not match the blocklist itself: its caller says which hosts it names
// (duck matches it, in SQL, for every use).
type DueList struct {
	Hosts            []observer.Host // the hosts to check, in the schedule's order
	Blocklisted      int             // due hosts left out for the blocklist
	OverDomainBudget int             // new hosts left out for their domain's budget

	budget *DomainBudget
	// Only what differs from "fetch it, unconditionally" is kept, so a
	// fresh pass over a million new hosts holds no entry for them.
	peers map[observer.Host]PeersDue
}

// NewDueList starts an empty due list that leaves out new hosts beyond
// domainBudget per registrable domain (0: no budget).
func NewDueList(domainBudget int) *DueList {
	return &DueList{budget: NewDomainBudget(domainBudget), peers: map[observer.Host]PeersDue{}}
}

// Offer adds the schedule's next due host, unless the pass must not check
// it. isNew says the host was never checked; blocked that the blocklist
// names it; peers is how its peers list is due.
func (d *DueList) Offer(host observer.Host, isNew, blocked bool, peers PeersDue) {
	switch {
	case blocked:
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

// AdmitDiscovered returns what says which of the hosts one check
// discovered are to be checked in the pass too (Pass.CheckDiscovered): at
// most limit of them in the pass (<= 0: none), not blocklisted, and within
// their registrable domain's budget, which they share with the due list's
// new hosts. blocked says which of the hosts it is given the blocklist
// names; it is asked once per check's discoveries, and not once the limit
// is reached. A host refused stays a recorded discovery, due by the
// schedule. Only the pass's collector calls what it returns, so it needs no
// lock.
func (d *DueList) AdmitDiscovered(limit int, blocked func(hosts []observer.Host) map[observer.Host]bool) func(hosts []observer.Host) []observer.Host {
	return func(hosts []observer.Host) []observer.Host {
		if limit <= 0 || len(hosts) == 0 {
			return nil
		}
		refused := blocked(hosts)
		var admitted []observer.Host
		for _, host := range hosts {
			if limit <= 0 || refused[host] || !d.budget.Admit(host) {
				continue
			}
			limit--
			admitted = append(admitted, host)
		}
		return admitted
	}
}
