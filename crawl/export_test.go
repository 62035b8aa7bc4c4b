package crawl

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"
)

// OnlyLoopback makes c refuse, before connect(2), every address outside
// 127.0.0.0/8 and ::1 that its guard let through, and report it: a test of
// the guard cannot reach another network even when the guard is broken.
func OnlyLoopback(c *Crawler, report func(addr string)) {
	c.lastGate = func(ip netip.Addr) error {
		if ip.Unmap().IsLoopback() {
			return nil
		}
		report(ip.String())
		return fmt.Errorf("test crawler: %s is not a loopback address", ip)
	}
}

// ManualBudget makes p's Duration budget (which must be set) run out when
// the returned function is called, instead of when Duration has passed. It
// reports the Duration each Run asked for through got, if not nil.
func ManualBudget(p *Pass, got func(time.Duration)) (runOut func()) {
	var mu sync.Mutex
	var cancels []context.CancelFunc
	out := false
	p.withBudget = func(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
		if got != nil {
			got(d)
		}
		ctx, cancel := context.WithCancel(ctx)
		mu.Lock()
		defer mu.Unlock()
		if out {
			cancel()
		} else {
			cancels = append(cancels, cancel)
		}
		return ctx, cancel
	}
	return func() {
		mu.Lock()
		defer mu.Unlock()
		out = true
		for _, c := range cancels {
			c()
		}
	}
}

// Waiting returns how many checks wait for addr.
func (l *AddressLimiter[W]) Waiting(addr netip.Addr) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.addrs[addrKey(addr)]; s != nil {
		return len(s.waiting)
	}
	return 0
}
