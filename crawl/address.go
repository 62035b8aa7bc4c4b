package crawl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"

	"github.com/fediverse-observer/observer"
)

// Per-address politeness. Many instances share one IP address at a hosting
// provider, so being polite to each host is not enough: the pass also
// limits what it does to each address. Here an "address" is an IPv4
// address or an IPv6 /64 (see addrKey). The pass, the one trusted process
// that sees every check, enforces it, so the limit holds across all
// concurrent checks whether they run in-process or in sandboxed checker
// processes:
//
//  1. Before a check, the pass resolves the host (Crawler.Resolve: the
//     --connect-to rules, then DNS) to one address.
//  2. It takes that address in an AddressLimiter: one check at a time per
//     address, and a budget of requests per address per pass.
//  3. The check is pinned to that address (CheckOptions.Addr): every
//     connection it makes goes there, through the address guard, so what
//     the pass holds is what the check uses, even if DNS answers otherwise
//     in the meantime. A check uses one connection at a time (its own
//     transport, MaxConnsPerHost 1), so one check at a time per address is
//     one connection at a time per address.
//  4. The check closes its keep-alive connection when it ends, and only then
//     does the pass release the address, adding the check's requests to
//     the address's count.

// Resolve returns the address a check of host would connect to: the first
// matching ConnectTo rule applies, then DNS. Of several addresses the first
// IPv4 one is taken, else the first IPv6 one, because IPv4 reaches almost
// every host from almost every network and a pinned check cannot fall back
// from one family to the other. The address guard is not applied here; the
// pinned check's dial applies it.
func (c *Crawler) Resolve(ctx context.Context, host observer.Host) (netip.AddrPort, error) {
	h, port := rewrite(c.opts.ConnectTo, string(host), 443)
	if ip, err := parseIPLiteral(h); err == nil {
		return netip.AddrPortFrom(ip.Unmap(), uint16(port)), nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.DialTimeout)
	defer cancel()
	ips, err := c.resolver.LookupNetIP(ctx, "ip", h)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("resolve %s: %w", h, err)
	}
	if len(ips) == 0 {
		return netip.AddrPort{}, fmt.Errorf("resolve %s: no addresses", h)
	}
	pick := ips[0]
	if i := slices.IndexFunc(ips, func(a netip.Addr) bool { return a.Unmap().Is4() }); i >= 0 {
		pick = ips[i]
	}
	return netip.AddrPortFrom(pick.Unmap(), uint16(port)), nil
}

// dialPinned returns a dial function that connects to pin whatever address
// it is asked for, with the address guard as for any dial.
func (c *Crawler) dialPinned(pin netip.AddrPort) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		d := net.Dialer{Timeout: c.opts.DialTimeout, Control: c.checkDial}
		return d.DialContext(ctx, "tcp", pin.String())
	}
}

// ErrAddressBudget is returned by AddressLimiter.Take when the address has
// used its budget of requests for this pass.
var ErrAddressBudget = errors.New("address budget for this pass used up")

// addrKey is the address politeness is counted under: an IPv4 address (an
// IPv4-mapped IPv6 one too), or the /64 of an IPv6 address, given as the
// /64's first address. A machine or LAN is routinely given a whole /64, so
// keyed by the exact address the hosts of a hostile peers list whose AAAA
// records point at different addresses of one victim's /64 would each get
// a budget and a slot of their own: 2^64 of them.
func addrKey(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() {
		return netip.PrefixFrom(a, 64).Masked().Addr()
	}
	return a
}

// AddressLimiter admits one check at a time per address (addrKey) and stops
// admitting checks to an address once budget requests have been made to it.
// A check is admitted while its address has made fewer than budget
// requests, so the last admitted check may go over by its own requests (at
// most a few, plus its peers list's pages).
//
// What waits for a busy address is a W (the pass's: a host and where it is
// to connect) in that address's first-in first-out queue, not a goroutine:
// a hosting provider's thousands of instances on a few addresses wait as
// a few words each, and the pass goes on with the hosts at other addresses.
type AddressLimiter[W any] struct {
	budget int
	mu     sync.Mutex
	addrs  map[netip.Addr]*addrState[W]
}

type addrState[W any] struct {
	busy     bool
	waiting  []W // first come, first served
	requests int
	skipped  int // checks refused for the budget
}

// NewAddressLimiter returns a limiter with the given per-address request
// budget; budget <= 0 means no budget (one at a time still holds).
func NewAddressLimiter[W any](budget int) *AddressLimiter[W] {
	return &AddressLimiter[W]{budget: budget, addrs: make(map[netip.Addr]*addrState[W])}
}

func (l *AddressLimiter[W]) state(a netip.Addr) *addrState[W] {
	s := l.addrs[a]
	if s == nil {
		s = &addrState[W]{}
		l.addrs[a] = s
	}
	return s
}

func (l *AddressLimiter[W]) overBudget(s *addrState[W]) bool {
	return l.budget > 0 && s.requests >= l.budget
}

// Take takes addr for w if no check holds it (took is true, and exactly one
// Release must follow), or else queues w behind the address's other
// waiters: Release hands the address to it in its turn. It returns
// ErrAddressBudget, taking and queueing nothing, if the address's budget is
// used up.
func (l *AddressLimiter[W]) Take(addr netip.Addr, w W) (took bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.state(addrKey(addr))
	switch {
	case l.overBudget(s):
		s.skipped++
		return false, ErrAddressBudget
	case s.busy:
		s.waiting = append(s.waiting, w)
		return false, nil
	}
	s.busy = true
	return true, nil
}

// Release gives addr back after a check that made requests requests. If a
// waiter is queued for it, the address passes straight to the first one
// (next, with handed true), which now holds it and must Release it in turn.
// If the budget is used up now, every waiter is refused instead (refused,
// counted as refused for the budget) and the address is free.
func (l *AddressLimiter[W]) Release(addr netip.Addr, requests int) (next W, handed bool, refused []W) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.state(addrKey(addr))
	s.requests += requests
	switch {
	case len(s.waiting) == 0:
		s.busy = false
	case l.overBudget(s):
		refused, s.waiting = s.waiting, nil
		s.skipped += len(refused)
		s.busy = false
	default:
		next, handed = s.waiting[0], true
		var zero W
		s.waiting[0] = zero
		s.waiting = s.waiting[1:]
		if len(s.waiting) == 0 {
			s.waiting = nil // let the queue's array go
		}
	}
	return next, handed, refused
}

// Drain removes and returns every queued waiter, at every address: what a
// pass that ends early leaves for a later one.
func (l *AddressLimiter[W]) Drain() []W {
	l.mu.Lock()
	defer l.mu.Unlock()
	var all []W
	for _, s := range l.addrs {
		all = append(all, s.waiting...)
		s.waiting = nil
	}
	return all
}

// AddressStats describes what a pass did per address, so the budget can be
// tuned.
type AddressStats struct {
	Addresses       int // distinct addresses checks were made to
	BusiestRequests int // requests made to the busiest address
	OverBudget      int // addresses that refused at least one check for the budget
}

// Stats summarises the limiter's counts.
func (l *AddressLimiter[W]) Stats() AddressStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	var st AddressStats
	for _, s := range l.addrs {
		if s.requests > 0 {
			st.Addresses++
		}
		st.BusiestRequests = max(st.BusiestRequests, s.requests)
		if s.skipped > 0 {
			st.OverBudget++
		}
	}
	return st
}

// costBytes is how many bytes read from an address count as one more
// request against its budget: the budget bounds the traffic an address
// takes in a pass, not only how often it is asked.
const costBytes = 1 << 20

// addressCost is what a check counts against its address's budget: its
// requests, and a request more for each MiB it read from the network.
func addressCost(t Trace, wireBytes int64) int {
	return requestCount(t) + int(max(wireBytes, 0)/costBytes)
}

// requestCount counts the requests a check's trace records.
func requestCount(t Trace) int {
	n := 0
	for _, s := range t.Steps {
		if s.Method != "" {
			n++
		}
	}
	return n
}
