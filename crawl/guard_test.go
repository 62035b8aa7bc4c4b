package crawl_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
)

// Redirects to IP literals are never followed; those the guard would refuse
// are reported as blocked_address.
func TestRedirectToNonPublicLiterals(t *testing.T) {
	for _, to := range []string{
		"https://169.254.169.254/latest/meta-data/", "https://100.64.0.1/", "https://10.0.0.1/", "https://192.168.1.1/",
		"https://[::1]/", "https://[::ffff:127.0.0.1]/", "https://[::ffff:10.0.0.1]/", "https://[64:ff9b::a00:1]/",
		"https://[fd00::1]/", "https://[fe80::1]/", "https://224.0.0.1/", "https://0.0.0.0/",
	} {
		t.Run(to, func(t *testing.T) {
			e := newEnv(t, func(o *crawl.Options) { o.AllowAddrs = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} })
			rt := instance("alpha.social", "mastodon", `[]`)
			rt["/.well-known/nodeinfo"] = redirect(302, to)
			e.host("alpha.social", rt)
			r, _ := e.check("alpha.social", crawl.CheckOptions{})
			wantOutcome(t, r, observer.OutcomeBlockedAddress, "non-public address")
		})
	}
}

// The guard runs in the dialer's Control hook, before connect(2): these
// addresses are refused without a packet being sent. (Were the guard broken,
// the test crawler's last gate would refuse them instead, and fail the test.)
func TestDialGuard(t *testing.T) {
	for _, addr := range []string{"169.254.169.254", "100.64.0.1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "127.0.0.1", "0.0.0.0", "224.0.0.1", "198.18.0.1"} {
		t.Run(addr, func(t *testing.T) {
			c := newTestCrawler(t, crawl.Options{ConnectTo: []crawl.ConnectTo{{Addr: addr}}})
			r, _ := c.Check(context.Background(), "victim.social", crawl.CheckOptions{})
			wantOutcome(t, r, observer.OutcomeBlockedAddress, "address "+addr+" is not public")
		})
	}
}

func TestBlockedAddressError(t *testing.T) {
	var err error = &crawl.BlockedAddressError{Addr: "10.0.0.1", Err: errors.New("denied")}
	var b *crawl.BlockedAddressError
	if !errors.As(errors.Join(errors.New("wrapped"), err), &b) || b.Addr != "10.0.0.1" {
		t.Error("BlockedAddressError not found with errors.As")
	}
}

// An address in DenyAddrs is refused at the dial, on top of the built-in
// list, even where AllowAddrs would let it through, and whether the check
// resolves its host at the dial or is pinned to an address by its pass.
func TestDenyAddrs(t *testing.T) {
	e := newEnv(t, func(o *crawl.Options) {
		o.DenyAddrs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/30")}
	})
	e.host("denied.social", instance("denied.social", "mastodon", `[]`))
	r, _ := e.check("denied.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeBlockedAddress, "address 127.0.0.1 is in crawl.deny_addrs")
	if p := e.srv.Paths("denied.social"); len(p) != 0 {
		t.Errorf("a denied address was requested: %v", p)
	}
	addr, err := e.c.Resolve(context.Background(), "denied.social")
	if err != nil {
		t.Fatal(err)
	}
	r, _ = e.check("denied.social", crawl.CheckOptions{Addr: addr})
	wantOutcome(t, r, observer.OutcomeBlockedAddress, "is in crawl.deny_addrs")

	// The control: outside the denied prefix, the same host is checked.
	e2 := newEnv(t, func(o *crawl.Options) {
		o.DenyAddrs = []netip.Prefix{netip.MustParsePrefix("127.0.0.4/30"), netip.MustParsePrefix("64:ff9b::/96")}
	})
	e2.host("fine.social", instance("fine.social", "mastodon", `[]`))
	r, _ = e2.check("fine.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeAlive, "")
}
