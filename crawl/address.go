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

// ErrAddressBudget is returned by AddressLimiter.Acquire when the address
// has used its budget of requests for this pass.
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
// most a few, plus its peers list's pages); the budget bounds how many
// checks of hosts at one address wait behind each other in a pass.
type AddressLimiter struct {
	budget int
	mu     sync.Mutex
	addrs  map[netip.Addr]*addrState
}

type addrState struct {
	busy     bool
	waiters  []chan struct{} // FIFO, each closed when it is its turn
	requests int
	skipped  int // checks refused for the budget
}

// NewAddressLimiter returns a limiter with the given per-address request
// budget; budget <= 0 means no budget (one at a time still holds).
func NewAddressLimiter(budget int) *AddressLimiter {
	return &AddressLimiter{budget: budget, addrs: make(map[netip.Addr]*addrState)}
}

func (l *AddressLimiter) state(a netip.Addr) *addrState {
	s := l.addrs[a]
	if s == nil {
		s = &addrState{}
		l.addrs[a] = s
	}
	return s
}

func (l *AddressLimiter) overBudget(s *addrState) bool {
	return l.budget > 0 && s.requests >= l.budget
}

// Acquire waits until no other check holds addr, then takes it. It
// returns ErrAddressBudget (holding nothing) if the address's budget is
// used up, and ctx's error if ctx ends first. A nil error must be followed
// by exactly one Release.
func (l *AddressLimiter) Acquire(ctx context.Context, addr netip.Addr) error {
	addr = addrKey(addr)
	l.mu.Lock()
	s := l.state(addr)
	if l.overBudget(s) {
		s.skipped++
		l.mu.Unlock()
		return ErrAddressBudget
	}
	if !s.busy {
		s.busy = true
		l.mu.Unlock()
		return nil
	}
	turn := make(chan struct{})
	s.waiters = append(s.waiters, turn)
	l.mu.Unlock()

	select {
	case <-turn:
	case <-ctx.Done():
		l.mu.Lock()
		if i := slices.Index(s.waiters, turn); i >= 0 {
			s.waiters = slices.Delete(s.waiters, i, i+1)
			l.mu.Unlock()
			return ctx.Err()
		}
		l.mu.Unlock()
		// The turn was handed over just as ctx ended: pass it on.
		l.Release(addr, 0)
		return ctx.Err()
	}
	// It is our turn; the budget may have run out while we waited.
	l.mu.Lock()
	if l.overBudget(s) {
		s.skipped++
		l.mu.Unlock()
		l.Release(addr, 0)
		return ErrAddressBudget
	}
	l.mu.Unlock()
	return nil
}

// TryAcquire takes addr if no check holds it, without waiting: it reports
// false (and no error) if the address is busy, and ErrAddressBudget if its
// budget is used up. A true result must be followed by exactly one Release.
func (l *AddressLimiter) TryAcquire(addr netip.Addr) (bool, error) {
	addr = addrKey(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.state(addr)
	if l.overBudget(s) {
		s.skipped++
		return false, ErrAddressBudget
	}
	if s.busy {
		return false, nil
	}
	s.busy = true
	return true, nil
}

// Release gives addr back after a check that made requests requests, and
// hands it to the next waiting check, if any.
func (l *AddressLimiter) Release(addr netip.Addr, requests int) {
	addr = addrKey(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.state(addr)
	s.requests += requests
	if len(s.waiters) > 0 {
		next := s.waiters[0]
		s.waiters = s.waiters[1:]
		close(next) // busy stays true: the turn passes directly
		return
	}
	s.busy = false
}

// AddressStats describes what a pass did per address, so the budget can be
// tuned.
type AddressStats struct {
	Addresses       int // distinct addresses checks were made to
	BusiestRequests int // requests made to the busiest address
	OverBudget      int // addresses that refused at least one check for the budget
}

// Stats summarises the limiter's counts.
func (l *AddressLimiter) Stats() AddressStats {
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
