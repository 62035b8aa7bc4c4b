package fedisim_test

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/fedisim"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// Every host the simulator serves has a --connect-to rule to its own
// address among the simulator's, which answers for it; hosts share those
// addresses, and every other name goes to the address Start was given.
func TestConnectToEachSendsEveryHostToItsAddress(t *testing.T) {
	s := testsupport.StartSim(t, fedisim.Config{Seed: 3, Instances: 400, HostileHosts: true, Flooders: 2})
	rules := s.ConnectToEach()
	if last := rules[len(rules)-1]; last != s.ConnectTo() {
		t.Fatalf("last rule %q, want the catch-all %q", last, s.ConnectTo())
	}
	at := map[string]string{}
	addrs := map[string]int{}
	for _, r := range rules[:len(rules)-1] {
		host, addr, ok := strings.Cut(r, ":443:")
		if !ok || at[host] != "" {
			t.Fatalf("rule %q: not HOST:443:ADDR:PORT, or a second rule for its host", r)
		}
		at[host] = addr
		addrs[addr]++
	}
	want := []string{s.Host(0), s.Host(399), fedisim.HostileGzipMembers, s.Flooders()[1]}
	want = append(want, s.SpamFarm()[0])
	for _, h := range want {
		if at[h] != s.AddrOf(h) {
			t.Errorf("%s: rule to %q, want its address %q", h, at[h], s.AddrOf(h))
		}
	}
	// One address per host, the names instances move to at their
	// instance's.
	if len(addrs) != s.Addresses() || s.Addresses() != 400+len(s.Hostile())+2 {
		t.Errorf("hosts at %d addresses, the simulator at %d; want one for each of the 400 instances, %d hostile hosts and 2 flooders",
			len(addrs), s.Addresses(), len(s.Hostile()))
	}
	for i := range 400 {
		info, _ := s.Instance(s.Host(i))
		for _, to := range []string{info.MovesTo, info.MovingTo} {
			if to != "" && s.AddrOf(to) != s.AddrOf(s.Host(i)) {
				t.Errorf("%s moves to %s at another address", s.Host(i), to)
			}
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM())
	for _, h := range append(s.Seeds(2), s.Flooders()[0]) {
		c, err := tls.Dial("tcp", s.AddrOf(h), &tls.Config{ServerName: h, RootCAs: pool})
		if err != nil {
			t.Fatalf("%s at %s: %v", h, s.AddrOf(h), err)
		}
		if got := c.ConnectionState().PeerCertificates[0].DNSNames; len(got) == 0 || got[0] != h {
			t.Errorf("%s at %s: certificate for %q", h, s.AddrOf(h), got)
		}
		if ip, _, _ := net.SplitHostPort(c.RemoteAddr().String()); !strings.HasPrefix(ip, "127.0.") || strings.HasPrefix(ip, "127.0.0.") {
			t.Errorf("%s answered from %s", h, ip)
		}
		c.Close()
	}
}

// A world of more hosts than addresses shares them out evenly.
func TestBigWorldSharesAddresses(t *testing.T) {
	s := testsupport.StartSim(t, fedisim.Config{Seed: 3, Instances: 2 * fedisim.MaxAddresses})
	if s.Addresses() != fedisim.MaxAddresses {
		t.Fatalf("%d addresses, want %d", s.Addresses(), fedisim.MaxAddresses)
	}
	if a, b := s.AddrOf(s.Host(7)), s.AddrOf(s.Host(7+fedisim.MaxAddresses)); a != b {
		t.Errorf("instances 7 and 7+%d at %s and %s, want one address", fedisim.MaxAddresses, a, b)
	}
	if a := s.AddrOf(s.Host(fedisim.MaxAddresses - 1)); !strings.HasPrefix(a, "127.0.16.254:") {
		t.Errorf("the last address is %s, want 127.0.16.254", a)
	}
}
