package crawl_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/crawl/internal/testnet"
)

var (
	addrA = netip.MustParseAddr("192.0.2.1")
	addrB = netip.MustParseAddr("2001:db8::1")
)

func TestAddressLimiterOneAtATime(t *testing.T) {
	l := crawl.NewAddressLimiter[string](0)
	if took, err := l.Take(addrA, "first"); !took || err != nil {
		t.Fatalf("Take of a free address = %v, %v", took, err)
	}
	// Another address is independent, and an IPv4-mapped form is the same
	// address: its takers wait in the order they came.
	if took, err := l.Take(addrB, "b"); !took || err != nil {
		t.Fatalf("Take of another address = %v, %v", took, err)
	}
	mapped := netip.AddrFrom16(addrA.As16())
	for _, w := range []string{"second", "third"} {
		if took, err := l.Take(mapped, w); took || err != nil {
			t.Fatalf("Take(%s) of a busy address = %v, %v; want queued", w, took, err)
		}
	}
	if n := l.Waiting(addrA); n != 2 {
		t.Fatalf("%d waiting, want 2", n)
	}
	// The turn passes straight on: the address stays busy, and a newcomer
	// waits behind those already waiting.
	next, handed, refused := l.Release(addrA, 2)
	if !handed || next != "second" || refused != nil {
		t.Fatalf("Release handed %q (%v), refused %v; want second", next, handed, refused)
	}
	if took, err := l.Take(addrA, "late"); took || err != nil {
		t.Fatalf("a newcomer's Take = %v, %v; want queued", took, err)
	}
	for _, want := range []string{"third", "late"} {
		if next, handed, _ := l.Release(addrA, 1); !handed || next != want {
			t.Fatalf("Release handed %q (%v); want %q", next, handed, want)
		}
	}
	if _, handed, _ := l.Release(addrA, 1); handed {
		t.Fatal("Release handed the address on with nobody waiting")
	}
	if took, err := l.Take(addrA, "again"); !took || err != nil {
		t.Fatalf("Take of the freed address = %v, %v", took, err)
	}
	l.Release(addrA, 0)
	l.Release(addrB, 1)
	st := l.Stats()
	if st.Addresses != 2 || st.BusiestRequests != 5 || st.OverBudget != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // safety net only
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAddressLimiterBudget(t *testing.T) {
	l := crawl.NewAddressLimiter[string](5)
	l.Take(addrA, "holder")
	l.Take(addrA, "w1")
	l.Take(addrA, "w2")
	// The holder goes over the budget: the waiters are refused, the
	// address is free, and every later taker is refused too.
	next, handed, refused := l.Release(addrA, 6)
	if handed || strings.Join(refused, " ") != "w1 w2" {
		t.Errorf("Release over budget handed %q (%v), refused %v; want w1 w2 refused", next, handed, refused)
	}
	if n := l.Waiting(addrA); n != 0 {
		t.Errorf("%d still waiting", n)
	}
	if took, err := l.Take(addrA, "later"); took || !errors.Is(err, crawl.ErrAddressBudget) {
		t.Errorf("later: %v, %v; want ErrAddressBudget", took, err)
	}
	// Under budget, another address is admitted.
	if took, err := l.Take(addrB, "b"); !took || err != nil {
		t.Fatal(took, err)
	}
	l.Release(addrB, 4)
	if took, err := l.Take(addrB, "b2"); !took || err != nil {
		t.Errorf("address under budget refused: %v, %v", took, err)
	}
	l.Release(addrB, 0)
	st := l.Stats()
	if st.Addresses != 2 || st.BusiestRequests != 6 || st.OverBudget != 1 {
		t.Errorf("stats = %+v", st)
	}
}

// An address is an IPv4 address (mapped or not) or an IPv6 /64: two
// addresses of one /64 share one slot, and Stats counts the /64 once.
func TestAddressLimiterIPv6Slash64(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", true},
		{"2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"2001:db8:1:2::1", "2001:db8:1:2::1", true},
		{"192.0.2.1", "::ffff:192.0.2.1", true},
		{"192.0.2.1", "192.0.2.2", false},
		{"::ffff:192.0.2.1", "::ffff:192.0.2.2", false},
	}
	for _, tc := range cases {
		l := crawl.NewAddressLimiter[int](0)
		a, b := netip.MustParseAddr(tc.a), netip.MustParseAddr(tc.b)
		if took, err := l.Take(a, 1); !took || err != nil {
			t.Fatal(took, err)
		}
		ok, err := l.Take(b, 2)
		if err != nil || ok == tc.same {
			t.Errorf("%s held, Take(%s) = %v, %v; want %v", a, b, ok, err, !tc.same)
		}
		if ok {
			l.Release(b, 1)
		}
		l.Release(a, 2)
	}
	l := crawl.NewAddressLimiter[int](0)
	l.Release(netip.MustParseAddr("2001:db8:1:2:3:4:5:6"), 3)
	l.Release(netip.MustParseAddr("2001:db8:1:2::9"), 2)
	if st := l.Stats(); st.Addresses != 1 || st.BusiestRequests != 5 {
		t.Errorf("stats %+v, want one address, the /64 2001:db8:1:2::, with 5 requests", st)
	}
}

// A hundred hosts on a hundred addresses of one IPv6 /64 (one machine; a
// peers list can name any number of them) share one budget; two /64s have
// one each, and IPv4 addresses are not grouped.
func TestPassAddressBudgetPerIPv6Slash64(t *testing.T) {
	cases := []struct {
		name      string
		addr      func(i int) string
		checks    int64
		addresses int64
	}{
		{"one /64", func(i int) string { return fmt.Sprintf("2001:db8:1:2::%x", i+1) }, 5, 1},
		{"two /64s", func(i int) string { return fmt.Sprintf("2001:db8:1:%d::%x", 2+i%2, i+1) }, 10, 2},
		{"IPv4", func(i int) string { return fmt.Sprintf("192.0.2.%d", i+1) }, 100, 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addrs := map[string]netip.Addr{}
			var due []observer.Host
			for i := range 100 {
				h := fmt.Sprintf("h%d.example%d.net", i, i)
				addrs[h] = netip.MustParseAddr(tc.addr(i))
				due = append(due, observer.Host(h))
			}
			checker := crawl.CheckFunc(func(_ context.Context, h observer.Host, o crawl.CheckOptions) (observer.Result, crawl.Trace) {
				// The check still connects to the host's own address.
				if o.Addr.Addr() != addrs[string(h)] {
					t.Errorf("%s pinned to %s, want %s", h, o.Addr, addrs[string(h)])
				}
				return observer.Result{Check: observer.Check{Host: observer.Host(h), Outcome: observer.OutcomeAlive}},
					crawl.Trace{Steps: []crawl.Step{{Method: "GET", URL: string("https://" + h + "/robots.txt")}}}
			})
			p := &crawl.Pass{Checker: checker, Sink: &memSink{}, Concurrency: 4, AddressBudget: 5,
				Resolve: func(_ context.Context, h observer.Host) (netip.AddrPort, error) {
					return netip.AddrPortFrom(addrs[string(h)], 443), nil
				}}
			sum, err := p.Run(context.Background(), due)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Checks != tc.checks || sum.Addresses != tc.addresses || sum.Checks+sum.SkippedAddressBudget+sum.NotStarted != 100 {
				t.Errorf("%d checks on %d addresses (%d skipped for the budget, %d not started), want %d checks on %d addresses",
					sum.Checks, sum.Addresses, sum.SkippedAddressBudget, sum.NotStarted, tc.checks, tc.addresses)
			}
		})
	}
}

// Drain takes every waiter out, at every address: what a pass ending early
// leaves for a later one. The addresses' holders release them as usual.
func TestAddressLimiterDrain(t *testing.T) {
	l := crawl.NewAddressLimiter[string](0)
	for _, w := range []string{"a1", "a2", "a3"} {
		l.Take(addrA, w)
	}
	l.Take(addrB, "b1")
	l.Take(addrB, "b2")
	got := l.Drain()
	slices.Sort(got)
	if strings.Join(got, " ") != "a2 a3 b2" {
		t.Errorf("drained %v, want a2 a3 b2", got)
	}
	if _, handed, _ := l.Release(addrA, 1); handed {
		t.Error("a drained waiter was handed the address")
	}
	if took, _ := l.Take(addrA, "a4"); !took {
		t.Error("the address stayed busy after its holder released it")
	}
}

// twoAddresses runs two test servers, on 127.0.0.1 and 127.0.0.2, and a
// crawler that sends hosts named *.example.net to the second.
func twoAddresses(t *testing.T) (*testnet.Server, *testnet.Server, *crawl.Crawler) {
	t.Helper()
	a := testnet.NewServer(t, "127.0.0.1")
	b := testnet.NewServer(t, "127.0.0.2")
	opts := a.Options(t)
	var rules []crawl.ConnectTo
	for _, h := range []string{"one.example.net", "two.example.net"} {
		rules = append(rules, crawl.ConnectTo{Host: h, Port: 443, Addr: "127.0.0.2", AddrPort: b.Port()})
	}
	opts.ConnectTo = append(rules, opts.ConnectTo...)
	return a, b, newTestCrawler(t, opts)
}

// meeting makes each listed host's robots.txt wait until every one of them
// has asked for it, or until patience runs out: if their checks can run at
// once, they do.
type meeting struct {
	patience time.Duration
	want     int
	mu       sync.Mutex
	arrived  map[string]bool
	all      chan struct{}
	timedOut atomic.Bool // some robots.txt waited out its patience
}

func meet(patience time.Duration, hosts ...string) *meeting {
	return &meeting{patience: patience, want: len(hosts), arrived: map[string]bool{}, all: make(chan struct{})}
}

func (m *meeting) join(rt routes, host string) {
	rt["/robots.txt"] = func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		if !m.arrived[host] {
			m.arrived[host] = true
			if len(m.arrived) == m.want {
				close(m.all)
			}
		}
		m.mu.Unlock()
		select {
		case <-m.all:
		case <-time.After(m.patience):
			m.timedOut.Store(true)
		}
		http.NotFound(w, r)
	}
}

func TestPassOneConnectionPerAddress(t *testing.T) {
	hosts := []string{"a.social", "b.social", "c.social", "d.social"}
	run := func(t *testing.T, limit bool) *testnet.Server {
		srv, _, c := twoAddresses(t)
		m := meet(200*time.Millisecond, hosts...)
		for _, h := range hosts {
			rt := instance(h, "mastodon", `["x.social"]`)
			m.join(rt, h)
			srv.HandleFunc(h, rt.serve)
		}
		p := &crawl.Pass{Checker: c, Sink: &memSink{}, Concurrency: 4}
		if limit {
			p.Resolve = c.Resolve
		}
		sum, err := p.Run(context.Background(), asHosts(hosts))
		if err != nil {
			t.Fatal(err)
		}
		if sum.Checks != 4 || sum.ByOutcome[observer.OutcomeAlive] != 4 || limit && (sum.Addresses != 1 || sum.BusiestAddressRequests != 16) {
			t.Errorf("summary %+v", sum)
		}
		return srv
	}
	t.Run("limited", func(t *testing.T) {
		srv := run(t, true)
		if a, b, ok := srv.Overlaps(); ok {
			t.Errorf("connections %d and %d to one address were used at once", a, b)
		}
		if n := srv.Conns(); n != 4 {
			t.Errorf("%d connections, want one per check", n)
		}
	})
	// The control: without the limit the same checks do overlap, so the
	// test above can see a broken limit.
	t.Run("unlimited", func(t *testing.T) {
		if _, _, ok := run(t, false).Overlaps(); !ok {
			t.Error("no overlap without the limit: the test cannot see one")
		}
	})
}

// Hosts on different addresses are still checked at once.
func TestPassAddressesIndependent(t *testing.T) {
	srvA, srvB, c := twoAddresses(t)
	m := meet(10*time.Second, "a.social", "one.example.net") // safety net only
	for _, x := range []struct {
		srv  *testnet.Server
		host string
	}{{srvA, "a.social"}, {srvB, "one.example.net"}} {
		rt := instance(x.host, "mastodon", `[]`)
		m.join(rt, x.host)
		x.srv.HandleFunc(x.host, rt.serve)
	}
	p := &crawl.Pass{Checker: c, Sink: &memSink{}, Concurrency: 2, Resolve: c.Resolve}
	sum, err := p.Run(context.Background(), []observer.Host{"a.social", "one.example.net"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Checks != 2 || sum.Addresses != 2 || sum.BusiestAddressRequests != 4 {
		t.Errorf("summary %+v", sum)
	}
	// Each robots.txt was answered only after both had been asked for:
	// the two checks ran at once.
	if m.timedOut.Load() {
		t.Error("the checks of two addresses did not run at once")
	}
	if len(srvA.Paths("a.social")) != 4 || len(srvB.Paths("one.example.net")) != 4 {
		t.Errorf("requests: %v / %v", srvA.Paths("a.social"), srvB.Paths("one.example.net"))
	}
}

func TestPassAddressBudget(t *testing.T) {
	srvA, srvB, c := twoAddresses(t)
	var due []observer.Host
	for i := range 5 {
		h := fmt.Sprintf("h%d.social", i)
		srvA.HandleFunc(h, instance(h, "mastodon", `[]`).serve)
		due = append(due, observer.Host(h))
	}
	srvB.HandleFunc("one.example.net", instance("one.example.net", "mastodon", `[]`).serve)
	due = append(due, "one.example.net")
	sink := &memSink{}
	// Each check makes 3 requests (robots.txt, well-known, NodeInfo; peers
	// not due): checks are admitted while fewer than 7 requests were made,
	// so 3 checks, 9 requests, and the other 2 hosts wait for next pass.
	p := &crawl.Pass{Checker: c, Sink: sink, Concurrency: 3, Resolve: c.Resolve, AddressBudget: 7,
		Peers: func(observer.Host) crawl.PeersDue { return crawl.PeersDue{} }}
	sum, err := p.Run(context.Background(), due)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Checks != 4 || sum.SkippedAddressBudget != 2 || sum.NotStarted != 0 || sum.Addresses != 2 ||
		sum.BusiestAddressRequests != 9 || sum.AddressesOverBudget != 1 {
		t.Errorf("summary %+v", sum)
	}
	if !strings.Contains(sum.String(), "addresses: 2, busiest took 9 requests; 1 over budget, 2 hosts left for a later pass") {
		t.Errorf("summary text:\n%s", sum)
	}
	recorded := map[string]bool{}
	for _, r := range sink.results {
		recorded[string(r.Check.Host)] = true
	}
	if !recorded["one.example.net"] {
		t.Error("the host at the other address was not checked")
	}
	for _, h := range due[:5] {
		if n := len(srvA.Paths(string(h))); recorded[string(h)] != (n == 3) || !recorded[string(h)] && n != 0 {
			t.Errorf("%s: recorded %v, %d requests", h, recorded[string(h)], n)
		}
	}
	if len(srvA.Requests()) != 9 {
		t.Errorf("%d requests to the budgeted address, want 9", len(srvA.Requests()))
	}
}

// A pinned check connects to its pin, whatever ConnectTo or DNS say, and
// the address guard still applies to it.
func TestCheckPinnedAddress(t *testing.T) {
	srvA, srvB, c := twoAddresses(t)
	srvA.HandleFunc("a.social", instance("a.social", "mastodon", `[]`).serve)
	srvB.HandleFunc("a.social", instance("a.social", "pleroma", `[]`).serve)
	pin := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), uint16(srvB.Port()))
	r, _ := c.Check(context.Background(), "a.social", crawl.CheckOptions{Addr: pin})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	if r.Check.Software != "pleroma" || len(srvA.Requests()) != 0 || len(srvB.Paths("a.social")) != 3 {
		t.Errorf("software %q; requests A %d, B %d", r.Check.Software, len(srvA.Requests()), len(srvB.Requests()))
	}
	blocked := netip.MustParseAddrPort("10.0.0.1:443")
	r, _ = c.Check(context.Background(), "a.social", crawl.CheckOptions{Addr: blocked})
	wantOutcome(t, r, observer.OutcomeBlockedAddress, "10.0.0.1")
}

// A NodeInfo link that names the checked host in another spelling (upper
// case, a trailing dot) is the checked host: it is fetched at the pinned
// address too, not at the one the name resolves to.
func TestCheckPinnedAddressNodeInfoLinkSpelling(t *testing.T) {
	for _, link := range []string{"A.Social", "a.social.", "a.social:443"} {
		t.Run(link, func(t *testing.T) {
			srvA, srvB, c := twoAddresses(t)
			rtB := instance("a.social", "pleroma", `[]`)
			rtB["/.well-known/nodeinfo"] = text(200, wellKnownFor(link, "2.0"))
			srvA.HandleFunc("a.social", instance("a.social", "mastodon", `[]`).serve)
			srvB.HandleFunc("a.social", rtB.serve)
			pin := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), uint16(srvB.Port()))
			r, _ := c.Check(context.Background(), "a.social", crawl.CheckOptions{Addr: pin})
			wantOutcome(t, r, observer.OutcomeAlive, "")
			if r.Check.Software != "pleroma" || len(srvA.Requests()) != 0 || len(srvB.Paths("a.social")) != 3 {
				t.Errorf("software %q; requests A %d, B %d", r.Check.Software, len(srvA.Requests()), len(srvB.Requests()))
			}
		})
	}
}

func TestResolveConnectTo(t *testing.T) {
	_, srvB, c := twoAddresses(t)
	got, err := c.Resolve(context.Background(), "two.example.net")
	if err != nil || got != netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), uint16(srvB.Port())) {
		t.Errorf("Resolve = %v, %v", got, err)
	}
	c2 := newTestCrawler(t, crawl.Options{ConnectTo: []crawl.ConnectTo{{Addr: "::ffff:127.0.0.3"}}})
	if got, err := c2.Resolve(context.Background(), "x.social"); err != nil || got != netip.MustParseAddrPort("127.0.0.3:443") {
		t.Errorf("Resolve = %v, %v", got, err)
	}
}

// Hosts waiting for a busy address do not keep hosts at other addresses
// from being checked: with two checks at a time and four hosts at one
// address first in the list, the host at the second address is checked
// while the first address is busy.
func TestPassBusyAddressDoesNotBlockOthers(t *testing.T) {
	srvA, srvB, c := twoAddresses(t)
	m := meet(10*time.Second, "A", "B") // safety net only
	var due []observer.Host
	for i := range 4 {
		h := fmt.Sprintf("h%d.social", i)
		rt := instance(h, "mastodon", `[]`)
		m.join(rt, "A")
		srvA.HandleFunc(h, rt.serve)
		due = append(due, observer.Host(h))
	}
	rt := instance("one.example.net", "mastodon", `[]`)
	m.join(rt, "B")
	srvB.HandleFunc("one.example.net", rt.serve)
	due = append(due, "one.example.net")
	p := &crawl.Pass{Checker: c, Sink: &memSink{}, Concurrency: 2, Resolve: c.Resolve}
	sum, err := p.Run(context.Background(), due)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Checks != 5 || sum.ByOutcome[observer.OutcomeAlive] != 5 || sum.Addresses != 2 {
		t.Errorf("summary %+v", sum)
	}
	if m.timedOut.Load() {
		t.Error("the host at the free address waited for the busy one")
	}
	if _, _, ok := srvA.Overlaps(); ok {
		t.Error("connections to one address overlapped")
	}
}

// A host waiting for its address when the pass is interrupted is not
// started; the pinned address reaches the checker.
func TestPassInterruptedWhileWaitingForAddress(t *testing.T) {
	f := newFake()
	f.block["a.social"] = make(chan struct{}) // never closed: ends with ctx
	pin := netip.MustParseAddrPort("192.0.2.7:443")
	resolvedB := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &crawl.Pass{Checker: f, Sink: &memSink{}, Concurrency: 2,
		Resolve: func(_ context.Context, h observer.Host) (netip.AddrPort, error) {
			if h == "b.social" {
				// Resolved only once a.social's check holds the address.
				waitFor(t, func() bool { return f.running.Load() == 1 })
				defer close(resolvedB)
			}
			return pin, nil
		}}
	go func() {
		<-resolvedB
		cancel()
	}()
	sum, err := p.Run(ctx, []observer.Host{"a.social", "b.social"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Checks != 0 || sum.Abandoned != 1 || sum.NotStarted != 1 || f.calls["b.social"] != 0 {
		t.Errorf("summary %+v, calls %v", sum, f.calls)
	}
	if got := f.opts["a.social"].Addr; got != pin {
		t.Errorf("checker was given address %v, want %v", got, pin)
	}
}

// A host the pass cannot resolve is not checked, since its check could not
// be held to an address (and a resolver that fails the pass's lookup but
// answers the checker's would send many such checks to one address at
// once). It is recorded as unreachable, as a check failing on DNS is.
func TestPassUnresolvedHostNotChecked(t *testing.T) {
	srv, _, c := twoAddresses(t)
	var due []observer.Host
	for i := range 10 {
		h := fmt.Sprintf("h%d.social", i)
		srv.HandleFunc(h, instance(h, "mastodon", `[]`).serve)
		due = append(due, observer.Host(h))
	}
	sink := &memSink{}
	p := &crawl.Pass{Checker: c, Sink: sink, Concurrency: 10, AddressBudget: 7, PassID: "p1",
		Resolve: func(_ context.Context, h observer.Host) (netip.AddrPort, error) {
			if h == "h0.social" {
				return netip.AddrPort{}, fmt.Errorf("resolve %s: %w", h, &net.DNSError{Err: "no such host", Name: string(h), IsNotFound: true})
			}
			return netip.AddrPort{}, errors.New("lookup: server misbehaving")
		}}
	sum, err := p.Run(context.Background(), due)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests for hosts the pass could not resolve", n)
	}
	if sum.Checks != 10 || sum.ByOutcome[observer.OutcomeUnreachable] != 10 || sum.Addresses != 0 {
		t.Errorf("summary %+v", sum)
	}
	for _, r := range sink.results {
		want := "dns: lookup: server misbehaving"
		if r.Check.Host == "h0.social" {
			want = "dns: no such host"
		}
		if r.Check.Error != want || r.Check.PassID != "p1" || r.Check.CheckedAt.IsZero() {
			t.Errorf("%s: error %q (want %q), pass %q, at %v", r.Check.Host, r.Check.Error, want, r.Check.PassID, r.Check.CheckedAt)
		}
	}
}

// A farm of hosts at one address whose checks are slow does not hold up the
// hosts behind it, and is checked in full later in the pass, one at a time.
// Here the farm's checks last until the host at the other address has been
// checked; had the farm held every place, that would never have happened
// (the context's deadline, a safety net only, would then end the pass).
func TestPassFarmAtOneAddressDoesNotHoldUpOthers(t *testing.T) {
	f := newFake()
	release := make(chan struct{})
	const farm = 20
	var due []observer.Host
	for i := range farm {
		h := fmt.Sprintf("farm%d.social", i)
		f.block[h] = release
		due = append(due, observer.Host(h))
	}
	var farmRunning, farmMost atomic.Int64
	checker := crawl.CheckFunc(func(ctx context.Context, h observer.Host, o crawl.CheckOptions) (observer.Result, crawl.Trace) {
		if h != "innocent.social" {
			n := farmRunning.Add(1)
			defer farmRunning.Add(-1)
			if n > farmMost.Load() {
				farmMost.Store(n)
			}
		}
		return f.Check(ctx, h, o)
	})
	due = append(due, "innocent.social")
	sink := &memSink{onRecord: func(r observer.Result) {
		if r.Check.Host == "innocent.social" {
			close(release)
		}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := &crawl.Pass{Checker: checker, Sink: sink, Concurrency: 2,
		Resolve: func(_ context.Context, h observer.Host) (netip.AddrPort, error) {
			if h == "innocent.social" {
				return netip.AddrPortFrom(addrB, 443), nil
			}
			return netip.AddrPortFrom(addrA, 443), nil
		}}
	sum, err := p.Run(ctx, due)
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the host at a free address waited for the farm")
	}
	if sum.Checks != farm+1 || sum.NotStarted != 0 || sum.ByOutcome[observer.OutcomeAlive] != farm+1 || sum.CutShort(false) != "" {
		t.Errorf("summary %+v, cut short %q; want every host checked", sum, sum.CutShort(false))
	}
	if farmMost.Load() != 1 {
		t.Errorf("%d checks of the farm at once, want one at a time", farmMost.Load())
	}
}

// Hosts waiting for a busy address hold neither a goroutine nor a place
// each: ten thousand hosts at one address, checked two at a time, are all
// checked, one at a time, with the pass's goroutines a handful throughout,
// and the hosts at other addresses interleaved with them rather than
// after them.
func TestPassManyHostsAtOneAddressHoldNoGoroutines(t *testing.T) {
	const farm = 10_000
	var due []observer.Host
	for i := range farm {
		due = append(due, observer.Host(fmt.Sprintf("farm%d.social", i)))
		if i%1000 == 0 {
			due = append(due, observer.Host(fmt.Sprintf("own%d.social", i)))
		}
	}
	base := runtime.NumGoroutine()
	var mostGoroutines, running, mostFarm atomic.Int64
	var mu sync.Mutex
	var order []string
	checker := crawl.CheckFunc(func(_ context.Context, h observer.Host, o crawl.CheckOptions) (observer.Result, crawl.Trace) {
		farmCheck := strings.HasPrefix(string(h), "farm")
		if farmCheck {
			n := running.Add(1)
			defer running.Add(-1)
			if n > mostFarm.Load() {
				mostFarm.Store(n)
			}
		}
		if n := int64(runtime.NumGoroutine() - base); n > mostGoroutines.Load() {
			mostGoroutines.Store(n)
		}
		mu.Lock()
		order = append(order, string(h))
		mu.Unlock()
		return observer.Result{Check: observer.Check{Host: h, Outcome: observer.OutcomeAlive}},
			crawl.Trace{Steps: []crawl.Step{{Method: "GET"}}}
	})
	p := &crawl.Pass{Checker: checker, Sink: &memSink{}, Concurrency: 2,
		Resolve: func(_ context.Context, h observer.Host) (netip.AddrPort, error) {
			if strings.HasPrefix(string(h), "own") {
				return netip.AddrPortFrom(addrB, 443), nil
			}
			return netip.AddrPortFrom(addrA, 443), nil
		}}
	sum, err := p.Run(context.Background(), due)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Checks != int64(len(due)) || sum.NotStarted != 0 || sum.Addresses != 2 || sum.BusiestAddressRequests != farm {
		t.Errorf("summary %+v; want all %d hosts checked", sum, len(due))
	}
	if mostFarm.Load() != 1 {
		t.Errorf("%d checks of the farm's address at once", mostFarm.Load())
	}
	// Two checks, two goroutines resolving, the producer and the
	// collector's side: never one per waiting host.
	if n := mostGoroutines.Load(); n > 20 {
		t.Errorf("%d goroutines more than before the pass while %d hosts waited", n, farm)
	}
	// The last host at the other address is not left until the farm is
	// done: it is checked before the farm's last thousand.
	if i := slices.Index(order, "own9000.social"); i < 0 || i > farm {
		t.Errorf("own9000.social checked %dth of %d", i, len(order))
	}
}

// When the time budget runs out, hosts still waiting for a busy address are
// not started and stay due; the summary says the time budget left them.
func TestPassBudgetEndsWhileHostsWaitForAnAddress(t *testing.T) {
	f := newFake()
	first := make(chan struct{})
	due := []observer.Host{"farm0.social", "farm1.social", "farm2.social", "farm3.social"}
	for _, h := range due {
		f.block[string(h)] = first
	}
	p := &crawl.Pass{Checker: f, Sink: &memSink{}, Concurrency: 2, Duration: time.Hour,
		Resolve: func(context.Context, observer.Host) (netip.AddrPort, error) {
			return netip.AddrPortFrom(addrA, 443), nil
		}}
	runOut := crawl.ManualBudget(p, nil)
	var sum crawl.Summary
	done := make(chan error)
	go func() {
		var err error
		sum, err = p.Run(context.Background(), due)
		done <- err
	}()
	// One host runs; the rest wait for its address (or are on their way
	// to its queue: either way they are not started).
	waitFor(t, func() bool { return f.running.Load() == 1 })
	runOut()
	close(first)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if sum.Checks != 1 || sum.NotStarted != 3 || sum.PastMaxChecks != 0 || len(f.calls) != 1 {
		t.Errorf("summary %+v, calls %v; want one check, three not started", sum, f.calls)
	}
	if got, want := sum.CutShort(false), "3 due hosts left for a later pass (time budget (duration) reached)"; got != want {
		t.Errorf("cut short %q, want %q", got, want)
	}
}

// MaxChecks counts the hosts a pass takes on, not the checks it has
// started: a host taken on that waits for its address is checked in its
// turn, and only the hosts past MaxChecks are left, for that reason.
func TestPassMaxChecksWithHostsWaitingForAnAddress(t *testing.T) {
	f := newFake()
	var due []observer.Host
	for i := range 8 {
		due = append(due, observer.Host(fmt.Sprintf("farm%d.social", i)))
	}
	p := &crawl.Pass{Checker: f, Sink: &memSink{}, Concurrency: 3, MaxChecks: 5,
		Resolve: func(context.Context, observer.Host) (netip.AddrPort, error) {
			return netip.AddrPortFrom(addrA, 443), nil
		}}
	sum, err := p.Run(context.Background(), due)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Checks != 5 || sum.NotStarted != 3 || sum.PastMaxChecks != 3 || f.maxActive.Load() != 1 {
		t.Errorf("summary %+v, %d at once; want 5 checks one at a time, 3 past max_checks", sum, f.maxActive.Load())
	}
	if got, want := sum.CutShort(false), "3 due hosts left for a later pass (max_checks reached)"; got != want {
		t.Errorf("cut short %q, want %q", got, want)
	}
}

// The address budget sees the traffic, not only the requests: a check that
// read 3 MiB counts as its request and 3 more, so a budget of 8 admits two
// such checks of one address (1+3, then 4+4) where it admits eight light ones.
func TestPassAddressBudgetCountsWireBytes(t *testing.T) {
	for _, tc := range []struct {
		wire   int64
		checks int64
	}{{0, 8}, {3 << 20, 2}} {
		var due []observer.Host
		for i := range 20 {
			due = append(due, observer.Host(fmt.Sprintf("h%d.example%d.net", i, i)))
		}
		checker := crawl.CheckFunc(func(_ context.Context, h observer.Host, o crawl.CheckOptions) (observer.Result, crawl.Trace) {
			return observer.Result{Check: observer.Check{Host: observer.Host(h), Outcome: observer.OutcomeAlive, WireBytes: tc.wire}},
				crawl.Trace{Steps: []crawl.Step{{Method: "GET", URL: string("https://" + h + "/robots.txt")}}}
		})
		p := &crawl.Pass{Checker: checker, Sink: &memSink{}, Concurrency: 1, AddressBudget: 8,
			Resolve: func(context.Context, observer.Host) (netip.AddrPort, error) {
				return netip.MustParseAddrPort("192.0.2.1:443"), nil
			}}
		sum, err := p.Run(context.Background(), due)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Checks != tc.checks || sum.WireBytes != tc.checks*tc.wire {
			t.Errorf("%d bytes a check: %d checks, %d wire bytes; want %d checks", tc.wire, sum.Checks, sum.WireBytes, tc.checks)
		}
	}
}
