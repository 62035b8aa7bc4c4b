// Package testnet serves made-up instances over TLS on loopback for the
// crawl package's tests: a throw-away CA, one leaf certificate valid for
// wildcard names under a few public suffixes, and a server that dispatches
// by Host and records every request it sees. It is test support only.
package testnet

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/crawl"
)

// Names the leaf certificate is valid for: any single label under these.
var Names = []string{"*.social", "*.example.com", "*.example.net", "*.co.uk"}

// CA is a throw-away certificate authority with one leaf certificate.
type CA struct {
	Pool *x509.CertPool
	Leaf tls.Certificate
	PEM  []byte
}

var (
	caOnce sync.Once
	ca     *CA
)

// TestCA returns the package's CA, made once per test binary.
func TestCA(t testing.TB) *CA {
	caOnce.Do(func() { ca = newCA() })
	return ca
}

func newCA() *CA {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "observer test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		panic(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "observer test leaf"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		DNSNames:     Names,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		panic(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return &CA{
		Pool: pool,
		Leaf: tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey},
		PEM:  encodePEM(caDER),
	}
}

// Request is one request a server saw.
type Request struct {
	Host, Method, Path, Query, UserAgent, Body string
	ProtoMajor                                 int
	Header                                     http.Header
	// Conn numbers the connection the request came on (1, 2, … in the
	// order the server accepted them).
	Conn int64
}

type connKey struct{}

// Server is a TLS server for many made-up hosts.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	hosts    map[string]http.Handler
	requests []Request
	// keyShares are the key exchanges each client hello offered, in the
	// order the hellos came.
	keyShares [][]tls.CurveID
	conns     atomic.Int64
}

// NewServer starts a server on addr ("127.0.0.1" or another loopback
// address).
func NewServer(t testing.TB, addr string) *Server {
	s := &Server{hosts: make(map[string]http.Handler)}
	hs := httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	ln, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	hs.Listener.Close()
	hs.Listener = ln
	hs.TLS = &tls.Config{Certificates: []tls.Certificate{TestCA(t).Leaf},
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			s.mu.Lock()
			s.keyShares = append(s.keyShares, slices.Clone(hello.SupportedCurves))
			s.mu.Unlock()
			return nil, nil
		}}
	hs.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, s.conns.Add(1))
	}
	hs.EnableHTTP2 = true // the client must still speak HTTP/1.1
	hs.StartTLS()
	t.Cleanup(hs.Close)
	s.Server = hs
	return s
}

// Handle serves host with h.
func (s *Server) Handle(host string, h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hosts[host] = h
}

// HandleFunc serves host with f.
func (s *Server) HandleFunc(host string, f func(http.ResponseWriter, *http.Request)) {
	s.Handle(host, http.HandlerFunc(f))
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	var body []byte
	if r.Body != nil {
		buf := make([]byte, 4096)
		n, _ := r.Body.Read(buf)
		body = buf[:n]
	}
	s.mu.Lock()
	conn, _ := r.Context().Value(connKey{}).(int64)
	s.requests = append(s.requests, Request{Host: host, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		UserAgent: r.UserAgent(), Body: string(body), ProtoMajor: r.ProtoMajor, Header: r.Header.Clone(), Conn: conn})
	h := s.hosts[host]
	s.mu.Unlock()
	if h == nil {
		http.Error(w, "unknown host", http.StatusMisdirectedRequest)
		return
	}
	r.Body = nopBody{strings.NewReader(string(body))}
	h.ServeHTTP(w, r)
}

type nopBody struct{ *strings.Reader }

func (nopBody) Close() error { return nil }

// Requests returns the requests seen so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Paths returns "METHOD host/path" for each request to host, in order.
func (s *Server) Paths(host string) []string {
	var out []string
	for _, r := range s.Requests() {
		if r.Host == host {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// Conns returns how many connections the server accepted.
func (s *Server) Conns() int64 { return s.conns.Load() }

// Overlaps reports the first pair of connections whose use overlapped: a
// request came on one after a request on the other and before that other's
// last request. A client that uses one connection at a time (closing each
// before opening the next) never produces one, whatever the timing, because
// each connection's requests all come before the next connection is made.
func (s *Server) Overlaps() (a, b int64, ok bool) {
	reqs := s.Requests()
	first, last := map[int64]int{}, map[int64]int{}
	for i, r := range reqs {
		if _, seen := first[r.Conn]; !seen {
			first[r.Conn] = i
		}
		last[r.Conn] = i
	}
	for c1, f1 := range first {
		for c2, f2 := range first {
			if c1 != c2 && f1 < f2 && f2 < last[c1] {
				return c1, c2, true
			}
		}
	}
	return 0, 0, false
}

// KeyExchanges are the key exchanges each client hello offered.
func (s *Server) KeyExchanges() [][]tls.CurveID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.keyShares)
}

// Port returns the server's port.
func (s *Server) Port() int {
	return s.Listener.Addr().(*net.TCPAddr).Port
}

// Options returns crawler options that send every host to this server and
// trust the test CA.
//
// Every connection goes to the server, whatever its host and port: port 443
// by the first rule, any other port (a redirect to http:// or to another
// port, which the crawler must not follow) by the catch-all after it, so
// that a regression that follows one reaches this server (and shows up in
// its requests, or fails on its TLS) instead of DNS and the internet. Rules
// a test puts before these take precedence.
func (s *Server) Options(t testing.TB) crawl.Options {
	addr := s.Listener.Addr().(*net.TCPAddr).IP.String()
	return crawl.Options{
		UserAgent:    "TestObserver/0.1 (+https://observer.example.com/)",
		ProductToken: "TestObserver",
		ConnectTo: []crawl.ConnectTo{
			{Port: 443, Addr: addr, AddrPort: s.Port()},
			{Addr: addr, AddrPort: s.Port()}, // any other host:port
		},
		AllowAddrs:   []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		RootCAs:      TestCA(t).Pool,
		CheckTimeout: 20 * time.Second,
	}
}
