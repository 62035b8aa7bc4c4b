package crawl

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/fediverse-observer/observer/hostname"
)

// ParseAllowAddr parses an --allow-addr value: a CIDR prefix
// ("127.0.0.0/8", "fd00::/8") or a single address ("127.0.0.1").
func ParseAllowAddr(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	return netip.Prefix{}, fmt.Errorf("%q: not a CIDR prefix or IP address", s)
}

// ConnectTo redirects connections as curl's --connect-to does: a request to
// Host:Port is sent to Addr:AddrPort instead, with TLS and HTTP still
// speaking to Host. It exists for tests and staging (pointing the crawler at
// a simulator); the address guard still applies to Addr.
type ConnectTo struct {
	Host     string // "" matches any host (written "*" or left empty)
	Port     int    // 0 matches any port
	Addr     string // "" keeps the host
	AddrPort int    // 0 keeps the port
}

// ConnectPorts are the TCP ports checks may connect to with these rules:
// HTTPS and whatever a rule redirects to (a confined checker may connect
// to these alone).
func ConnectPorts(rules []ConnectTo) []uint16 {
	ports := []uint16{443}
	for _, ct := range rules {
		switch {
		case ct.AddrPort != 0:
			ports = append(ports, uint16(ct.AddrPort))
		case ct.Port != 0:
			ports = append(ports, uint16(ct.Port))
		}
	}
	return ports
}

// ParseConnectTo parses curl's HOST:PORT:ADDR:PORT syntax. HOST may be "*"
// or empty (any host), PORT empty (any port); ADDR may be an IPv6 address in
// brackets.
func ParseConnectTo(s string) (ConnectTo, error) {
	var c ConnectTo
	bad := func(why string) (ConnectTo, error) {
		return ConnectTo{}, fmt.Errorf("%q: %s (want HOST:PORT:ADDR:PORT)", s, why)
	}
	parts := strings.SplitN(s, ":", 3)
	if len(parts) != 3 {
		return bad("too few fields")
	}
	host, port, rest := parts[0], parts[1], parts[2]
	var addr, addrPort string
	if strings.HasPrefix(rest, "[") {
		end := strings.Index(rest, "]")
		if end < 0 {
			return bad("unclosed '[' in ADDR")
		}
		addr = rest[1:end]
		after, ok := strings.CutPrefix(rest[end+1:], ":")
		if !ok {
			return bad("missing ':PORT' after ADDR")
		}
		addrPort = after
	} else {
		var ok bool
		addr, addrPort, ok = strings.Cut(rest, ":")
		if !ok {
			return bad("too few fields")
		}
	}
	if host != "*" && host != "" {
		h, err := hostname.Normalize(host)
		if err != nil {
			return bad("HOST: " + err.Error())
		}
		c.Host = string(h)
	}
	var err error
	if c.Port, err = parsePort(port); err != nil {
		return bad("PORT: " + err.Error())
	}
	if c.AddrPort, err = parsePort(addrPort); err != nil {
		return bad("second PORT: " + err.Error())
	}
	if strings.ContainsAny(addr, "/ []") || strings.Contains(addr, ":") && net.ParseIP(addr) == nil {
		return bad("ADDR is not a host name or IP address")
	}
	c.Addr = addr
	return c, nil
}

func parsePort(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("%q is not a port number", s)
	}
	return p, nil
}

// String formats c as ParseConnectTo reads it.
func (c ConnectTo) String() string {
	host := c.Host
	if host == "" {
		host = "*"
	}
	port, addrPort := "", ""
	if c.Port != 0 {
		port = strconv.Itoa(c.Port)
	}
	if c.AddrPort != 0 {
		addrPort = strconv.Itoa(c.AddrPort)
	}
	addr := c.Addr
	if strings.Contains(addr, ":") {
		addr = "[" + addr + "]"
	}
	return host + ":" + port + ":" + addr + ":" + addrPort
}

// rewrite applies the first matching rule to host:port.
func rewrite(rules []ConnectTo, host string, port int) (string, int) {
	for _, r := range rules {
		if (r.Host == "" || r.Host == host) && (r.Port == 0 || r.Port == port) {
			if r.Addr != "" {
				host = r.Addr
			}
			if r.AddrPort != 0 {
				port = r.AddrPort
			}
			return host, port
		}
	}
	return host, port
}
