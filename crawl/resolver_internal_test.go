package crawl

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
)

// The resolver the orchestrator resolves hosts with (Crawler.Resolve, for
// per-address politeness) and the checks dial with is Go's own, never the C
// library's: a name chosen by whoever wrote a peers list must not reach
// glibc's NSS modules (mDNS, myhostname, LDAP…). Go's resolver sends its
// queries through Resolver.Dial, which the C library's path never calls.
func TestResolverIsGos(t *testing.T) {
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.resolver.PreferGo {
		t.Fatal("the crawler's resolver does not prefer Go's: with cgo (DuckDB's build) and an nsswitch.conf naming NSS modules, lookups would go through glibc")
	}
	var queries atomic.Int64
	c.resolver.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		queries.Add(1)
		return nil, errors.New("no DNS in tests")
	}
	// Not in /etc/hosts: only DNS can answer.
	if _, err := c.Resolve(context.Background(), "resolver-test.observer.invalid"); err == nil {
		t.Fatal("resolved a name with DNS refused")
	}
	if queries.Load() == 0 {
		t.Error("Crawler.Resolve did not ask DNS through the crawler's Go resolver")
	}
}
