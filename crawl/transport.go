package crawl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// Options configures a Crawler. The zero value of each field means its
// documented default.
type Options struct {
	// UserAgent is sent with every request (config.Crawl.UserAgent builds
	// it: product token, version, contact URL).
	UserAgent string
	// ProductToken is the name looked up in robots.txt.
	ProductToken string

	// ConnectTo rules redirect connections (first match wins), as curl's
	// --connect-to; for tests and staging.
	ConnectTo []ConnectTo
	// AllowAddrs are addresses the guard accepts although they are not
	// public (e.g. 127.0.0.0/8 for a simulator on loopback). They are
	// checked before the built-in deny list.
	AllowAddrs []netip.Prefix
	// DenyAddrs are addresses the guard refuses on top of its built-in
	// list (crawl.deny_addrs), even where AllowAddrs would let them
	// through.
	DenyAddrs []netip.Prefix

	// RootCAs, if set, replaces the system roots (tests).
	RootCAs *x509.CertPool
	// CAFiles are PEM files whose certificates are trusted in addition to
	// the system roots (or RootCAs) (--ca-cert).
	CAFiles []string

	DialTimeout           time.Duration // default 10s
	TLSHandshakeTimeout   time.Duration // default 10s
	ResponseHeaderTimeout time.Duration // default 15s
	RequestTimeout        time.Duration // each request, body included; default 30s
	// CheckTimeout bounds a whole check; default 60s. The caller's context
	// may set an earlier deadline.
	CheckTimeout time.Duration

	// MaxPeerPages caps the requests made for one paged peers list
	// (Misskey, PeerTube, Lemmy 1.x), redirects included: no page is asked
	// for once that many are made, so a list makes at most MaxPeerPages
	// requests and the redirects of its last page. Default 100 pages (of 100
	// entries, or Lemmy's 50).
	MaxPeerPages int
	// MaxNewPeers caps the discoveries kept from one check, and so the
	// hosts a check remembers from its peers list; with the 32 MiB cap on
	// the whole list (all its pages) this bounds the memory a hostile
	// peers list can make a check use. Default 200000, the most a sandboxed
	// checker's result may carry (sandbox.MaxDiscoveries); observer crawl
	// sets crawl.max_new_per_list. New entries beyond it are counted in
	// the result's OverListCap.
	MaxNewPeers int
	// MaxCheckWireBytes caps the bytes one check reads from its
	// connections, as they come off the network (TLS records, headers and
	// coded bodies): past it, the connection's next read fails and the
	// check is too_large. Each body is capped too, coded and decoded (see
	// fetch.go); this bounds the whole check, whatever it is made to read.
	// Default 48 MiB: the peers list's 32 MiB and the other documents, with
	// room for headers and TLS.
	MaxCheckWireBytes int64

	// Transport, when set, carries every request of a check instead of
	// the network: no connection is made, so the address guard, the
	// connect-to rules, TLS and the count of bytes read off the wire do
	// not apply. For simulations (fedisim's Transport), never set by
	// observer itself.
	Transport http.RoundTripper

	Logger *slog.Logger // default slog.Default()
}

func (o *Options) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.DialTimeout, 10*time.Second)
	def(&o.TLSHandshakeTimeout, 10*time.Second)
	def(&o.ResponseHeaderTimeout, 15*time.Second)
	def(&o.RequestTimeout, 30*time.Second)
	def(&o.CheckTimeout, 60*time.Second)
	if o.MaxPeerPages <= 0 {
		o.MaxPeerPages = 100
	}
	if o.MaxNewPeers <= 0 {
		o.MaxNewPeers = 200_000
	}
	if o.MaxCheckWireBytes <= 0 {
		o.MaxCheckWireBytes = 48 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ProductToken == "" {
		o.ProductToken = "FediverseObserver"
	}
	if o.UserAgent == "" {
		o.UserAgent = o.ProductToken
	}
}

// Crawler checks hosts. It holds only immutable configuration, so one
// Crawler serves any number of concurrent checks.
type Crawler struct {
	opts  Options
	tls   *tls.Config
	guard *ssrf.Guardian
	// resolver is Go's own, never the C library's: the names resolved are
	// chosen by whoever wrote a peers list, and glibc's NSS would hand them
	// to whatever nsswitch.conf lists (mDNS, myhostname, LDAP…).
	resolver *net.Resolver
	// For tests: called with every address the guard passed, just before
	// connect(2); an error refuses the connection. Nil in production.
	lastGate func(netip.Addr) error
}

// New validates opts and loads the CA files.
func New(opts Options) (*Crawler, error) {
	opts.setDefaults()
	pool := opts.RootCAs
	if pool == nil {
		sys, err := x509.SystemCertPool()
		if err != nil {
			sys = x509.NewCertPool()
		}
		pool = sys
	} else {
		pool = pool.Clone()
	}
	for _, f := range opts.CAFiles {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("ca-cert: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca-cert %s: no PEM certificate found", f)
		}
	}
	c := &Crawler{
		opts: opts,
		tls: &tls.Config{
			RootCAs:          pool,
			MinVersion:       tls.VersionTLS12,
			NextProtos:       []string{"http/1.1"},
			CurvePreferences: keyExchanges,
		},
		// Ports are not the guard's business: URLs always use 443 and only
		// the operator's connect-to rules choose another.
		guard:    ssrf.New(ssrf.WithAnyPort()),
		resolver: &net.Resolver{PreferGo: true},
	}
	return c, nil
}

// keyExchanges are the TLS key exchanges a check offers: the classical
// ones, without Go's default post-quantum hybrid (X25519MLKEM768). A check
// reads public documents, which no recording of its traffic could reveal
// later, and the hybrid's lattice arithmetic was a quarter of a check's TLS
// CPU (first-pass world: 43 ms of 172 per pass in the checkers, and 34 ms
// in the servers, which answer in kind).
var keyExchanges = []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521}

// BlockedAddressError is returned when a connection would go to an address
// that is not public (loopback, private, link-local, CGNAT, ULA, multicast,
// mapped and translated forms…) and not explicitly allowed.
type BlockedAddressError struct {
	Addr string // the address that was refused
	Err  error  // the guard's reason
}

func (e *BlockedAddressError) Error() string {
	if errors.Is(e.Err, errDenied) {
		return fmt.Sprintf("address %s is in crawl.deny_addrs", e.Addr)
	}
	return fmt.Sprintf("address %s is not public", e.Addr)
}

func (e *BlockedAddressError) Unwrap() error { return e.Err }

// checkAddr is the net.Dialer Control hook (through checkDial): it sees the
// resolved address actually being connected to, after DNS and connect-to,
// so DNS rebinding or a connect-to rule cannot route around it.
func (c *Crawler) checkAddr(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedAddressError{Addr: address, Err: err}
	}
	if network != "tcp4" && network != "tcp6" {
		return &BlockedAddressError{Addr: address, Err: ssrf.ErrProhibitedNetwork}
	}
	ip := ap.Addr()
	for _, p := range c.opts.DenyAddrs {
		if p.Contains(ip.Unmap()) || p.Contains(ip) {
			return &BlockedAddressError{Addr: ip.String(), Err: errDenied}
		}
	}
	for _, p := range c.opts.AllowAddrs {
		if p.Contains(ip) {
			return nil
		}
	}
	if err := c.guard.SafeAddr(ip); err != nil {
		return &BlockedAddressError{Addr: ip.String(), Err: err}
	}
	return nil
}

// errDenied is the guard's reason for an address in Options.DenyAddrs.
var errDenied = errors.New("in crawl.deny_addrs")

// checkDial is checkAddr, then the tests' last gate when there is one.
func (c *Crawler) checkDial(network, address string, raw syscall.RawConn) error {
	if err := c.checkAddr(network, address, raw); err != nil || c.lastGate == nil {
		return err
	}
	return c.lastGate(netip.MustParseAddrPort(address).Addr())
}

// addrBlocked reports whether the guard would refuse ip (for redirects to IP
// literals, which are never followed but are reported as the guard would).
func (c *Crawler) addrBlocked(ip netip.Addr) bool {
	return c.checkAddr("tcp6", netip.AddrPortFrom(ip, 443).String(), nil) != nil
}

func (c *Crawler) dial(ctx context.Context, _, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: bad port", addr)
	}
	host, port = rewrite(c.opts.ConnectTo, host, port)
	d := net.Dialer{Timeout: c.opts.DialTimeout, Control: c.checkDial, Resolver: c.resolver}
	return d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
}

// wireMeter counts the bytes one check reads from all its connections and
// refuses reads past its cap. The transports' read loops run in goroutines
// of their own, hence the atomic.
type wireMeter struct {
	n   atomic.Int64
	max int64
}

// Bytes is what the check has read from the network so far.
func (m *wireMeter) Bytes() int64 { return m.n.Load() }

// meter wraps dial so that what its connections read is counted by m.
func (m *wireMeter) meter(dial func(context.Context, string, string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &meteredConn{Conn: conn, m: m}, nil
	}
}

type meteredConn struct {
	net.Conn
	m *wireMeter
}

func (c *meteredConn) Read(p []byte) (int, error) {
	left := c.m.max - c.m.n.Load()
	if left <= 0 {
		return 0, &TooLargeError{Cap: c.m.max, Wire: true}
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := c.Conn.Read(p)
	c.m.n.Add(int64(n))
	return n, err
}

// newClient returns a client for one check: its own transport, so a check
// shares no connections with others and at most one connection is open to
// the host at a time, every connection read through m. Redirects are
// handled by the fetcher, not the client. With Options.Transport the
// transport returned is nil: the check has none of its own to close.
func (c *Crawler) newClient(pin netip.AddrPort, m *wireMeter) (*http.Client, *http.Transport) {
	noFollow := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if c.opts.Transport != nil {
		return &http.Client{Transport: c.opts.Transport, CheckRedirect: noFollow}, nil
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	dial := c.dial
	if pin.IsValid() {
		dial = c.dialPinned(pin)
	}
	tr := &http.Transport{
		Proxy:       nil, // never from the environment
		DialContext: m.meter(dial),
		// The fetcher asks for gzip itself and decodes it after capping
		// the coded bytes (fetch.go).
		DisableCompression:     true,
		TLSClientConfig:        c.tls,
		TLSHandshakeTimeout:    c.opts.TLSHandshakeTimeout,
		ResponseHeaderTimeout:  c.opts.ResponseHeaderTimeout,
		MaxConnsPerHost:        1,
		MaxIdleConns:           1,
		MaxIdleConnsPerHost:    1,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		ForceAttemptHTTP2:      false,
		// A non-nil empty map disables HTTP/2.
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{},
		Protocols:    &protocols,
	}
	client := &http.Client{Transport: tr, CheckRedirect: noFollow}
	return client, tr
}

var errTooManyRedirects = errors.New("too many redirects")
