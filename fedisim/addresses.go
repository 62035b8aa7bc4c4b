package fedisim

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"syscall"
)

// MaxAddresses is the most loopback addresses, from 127.0.1.1 on, the
// simulator listens on besides the one Start is given, all on the same
// port. Every host it serves has one of them as its address (AddrOf), as a
// real host has the address DNS gives it, so that a crawler told where each
// host is (ConnectToEach) is polite per address as it would be on the
// Internet. A world of no more hosts than this has one address per host
// (an instance keeps its address under the name it moves to); a bigger one
// shares them out evenly.
const MaxAddresses = 16 * 254

// addressOf is the index, among the simulator's addresses, of host's
// address, and false for a name the simulator does not serve.
func (s *Sim) addressOf(host string) (int, bool) {
	k, ok := s.w.number(host)
	if ok {
		return int(k%s.w.n) % s.addresses, true
	}
	if i, ok := s.others[host]; ok {
		return (int(s.w.n) + i) % s.addresses, true
	}
	return 0, false
}

// addressAt is the address with index i: 127.0.1.1 to 127.0.1.254, then
// 127.0.2.1 on.
func addressAt(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{127, 0, byte(1 + i/254), byte(1 + i%254)})
}

// otherHosts numbers the hosts served beside the generated instances
// (hostile and spam-farm hosts, flooders, captured instances), so that
// each has an address of its own.
func (s *Sim) otherHosts() map[string]int {
	var names []string
	names = append(names, slices.Sorted(maps.Keys(s.hostile))...)
	names = append(names, s.Flooders()...)
	names = append(names, slices.Sorted(maps.Keys(s.captured))...)
	m := make(map[string]int, len(names))
	for i, h := range names {
		m[h] = i
	}
	return m
}

// listenAll listens on addr and on the simulator's addresses at the port
// addr was given. With port 0 the port is the one the system picks for
// addr; if another program holds it on one of the addresses, it tries
// another.
func (s *Sim) listenAll(addr string) (main net.Listener, each []net.Listener, err error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, fmt.Errorf("fedisim: address %q: %w", addr, err)
	}
	for try := 0; ; try++ {
		main, err = net.Listen("tcp", addr)
		if err != nil {
			return nil, nil, fmt.Errorf("fedisim: listen %s: %w", addr, err)
		}
		each, err = s.listenEach(main.Addr().(*net.TCPAddr).Port)
		if err == nil {
			return main, each, nil
		}
		main.Close()
		if port != "0" || try == 9 || !errors.Is(err, syscall.EADDRINUSE) {
			return nil, nil, err
		}
	}
}

// listenEach listens on every one of the simulator's addresses at port.
func (s *Sim) listenEach(port int) ([]net.Listener, error) {
	var each []net.Listener
	for i := range s.addresses {
		a := netip.AddrPortFrom(addressAt(i), uint16(port))
		ln, err := net.Listen("tcp", a.String())
		if err != nil {
			for _, l := range each {
				l.Close()
			}
			return nil, fmt.Errorf("fedisim: listen %s: %w", a, err)
		}
		each = append(each, ln)
	}
	return each, nil
}

// AddrOf is the address ("127.0.K.J:PORT") where the running simulator
// serves host, the one a crawler should be sent to for it; for a name it
// does not serve, the address Start was given.
func (s *Sim) AddrOf(host string) string {
	i, ok := s.addressOf(host)
	if !ok {
		return s.Addr()
	}
	return netip.AddrPortFrom(addressAt(i), uint16(s.Port())).String()
}

// ConnectToEach is the crawler's --connect-to values that send each host
// the simulator serves to its own address (AddrOf), then every other name
// to the address Start was given (ConnectTo), as one address would answer
// for all the names a DNS zone points there. The hosts named are the
// generated instances and the names they move to, the hostile and spam
// farm hosts, the flooders and the captured instances; what a flooder's
// peers list names is not among them.
func (s *Sim) ConnectToEach() []string {
	var rules []string
	add := func(host string) {
		rules = append(rules, host+":443:"+s.AddrOf(host))
	}
	w := s.w
	for i := range w.n {
		add(w.hostFor(i))
		if f := w.fate(i); f == fateMoves || f == fateMoving {
			add(w.hostFor(w.n + i))
		}
	}
	others := slices.SortedFunc(maps.Keys(s.others), func(a, b string) int { return s.others[a] - s.others[b] })
	for _, h := range others {
		add(h)
	}
	return append(rules, s.ConnectTo())
}

// Addresses is how many addresses the simulator serves its hosts at
// (besides the one Start is given).
func (s *Sim) Addresses() int { return s.addresses }
