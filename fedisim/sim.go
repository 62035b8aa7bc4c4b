// Package fedisim is a simulated Fediverse for tests, benchmarks and the
// offline demo: one TLS server on loopback, with its own CA, that answers as
// any number of generated instances chosen by SNI and Host header. Every
// instance is a pure function of (seed, index), so a million instances cost
// no memory; a simulated day decides who is born, dies, moves, revives or
// opts out; optional hostile hosts attack the crawler. Production code never
// imports this package.
//
// A crawler reaches it with
//
//	--connect-to '*:443:127.0.0.1:PORT' --allow-addr 127.0.0.0/8 --ca-cert ca.pem
//
// so that every host name resolves to the simulator; with a --connect-to
// rule per host first (ConnectToEach), each host is at an address of its
// own, as on the Internet (see MaxAddresses).
package fedisim

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"iter"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes a simulated Fediverse. Zero values take the documented
// defaults; for the fractions, a negative value means none.
type Config struct {
	Seed      uint64
	Instances int       // number of generated instances; default 1000
	Day0      time.Time // the date of day 0, for SetNow; default 2026-01-01 UTC
	Horizon   int       // days over which life events fall; default 30

	HostileHosts   bool // serve the hostile hosts (see Hostile) and list them in hubs' peers
	RecordRequests bool // keep a per-host request log and connection count (for tests; memory grows with traffic)

	BornLater float64 // fraction of instances born after day 0; default 0.2
	Dies      float64 // fraction that die for good within the horizon; default 0.04
	Revives   float64 // fraction that die and come back 2-7 days later; default 0.02
	Moves     float64 // fraction that move permanently (301/308); default 0.03
	Moving    float64 // fraction that redirect temporarily (302/307) for 2-5 days; default 0.02
	OptsOut   float64 // fraction that opt out via robots.txt; default 0.03

	HubFraction float64 // fraction of instances that are hubs (stable, Mastodon, big peers lists); default 0.01
	HubDegree   int     // peers-list length of a hub; default 3000
	MinDegree   int     // smallest peers list of an ordinary instance; default 20
	MaxDegree   int     // largest peers list of an ordinary instance; default 1000
	JunkLists   float64 // fraction of peers lists with junk entries; default 0.1
	PeersDenied float64 // fraction answering 401/403/404 on their peers endpoint; default 0.04

	// Spread, when set, replaces the day-by-day world with the spread
	// model (see Spread): instances born and dying to the second, set by
	// SetNow. Hostile hosts are unchanged.
	Spread *Spread
	// Captured are instances served from captured documents (see
	// Captured), beside the generated ones.
	Captured []Captured

	SpamFarmSize int // subdomains in the spam farm (with HostileHosts); default 50
	// Flooders are alive hosts (Flooders()) whose peers lists each name
	// FloodPeers new valid names, each its own registrable domain, new
	// ones every day, none of which answers; default none, and 200 000.
	Flooders, FloodPeers int
	CertCacheSize        int // leaf certificates kept; default 4096

	Logger *slog.Logger // default: discard
}

func (c *Config) defaults() error {
	if c.Instances == 0 {
		c.Instances = 1000
	}
	if c.Instances < 1 || c.Instances > 1<<40 {
		return fmt.Errorf("fedisim: instances must be between 1 and 2^40, got %d", c.Instances)
	}
	if c.Spread != nil && c.Instances > 1<<32 {
		// The spread model's index of links numbers instances in 32 bits.
		return fmt.Errorf("fedisim: the spread model holds at most 2^32 instances, got %d", c.Instances)
	}
	if c.Day0.IsZero() {
		c.Day0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if c.Horizon <= 0 {
		c.Horizon = 30
	}
	frac := func(p *float64, def float64) {
		switch {
		case *p == 0:
			*p = def
		case *p < 0:
			*p = 0
		}
	}
	frac(&c.BornLater, 0.2)
	frac(&c.Dies, 0.04)
	frac(&c.Revives, 0.02)
	frac(&c.Moves, 0.03)
	frac(&c.Moving, 0.02)
	frac(&c.OptsOut, 0.03)
	frac(&c.HubFraction, 0.01)
	frac(&c.JunkLists, 0.1)
	frac(&c.PeersDenied, 0.04)
	if c.Dies+c.Revives+c.Moves+c.Moving+c.OptsOut > 1 {
		return errors.New("fedisim: the life-event fractions add up to more than 1")
	}
	if c.HubDegree <= 0 {
		c.HubDegree = 3000
	}
	if c.MinDegree <= 0 {
		c.MinDegree = 20
	}
	if c.MaxDegree <= 0 {
		c.MaxDegree = 1000
	}
	if c.MaxDegree < c.MinDegree {
		c.MaxDegree = c.MinDegree
	}
	if c.SpamFarmSize <= 0 {
		c.SpamFarmSize = 50
	}
	if c.FloodPeers <= 0 {
		c.FloodPeers = DefaultFloodPeers
	}
	if c.CertCacheSize <= 0 {
		c.CertCacheSize = 4096
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}

// Sim is a running (or ready to run) simulated Fediverse. Its methods are
// safe for concurrent use.
type Sim struct {
	w   *world
	cfg Config
	day atomic.Int64
	// at is the simulated time as an offset from Day0 (SetNow; SetDay
	// sets the start of the day), which the spread model answers for.
	at      atomic.Int64
	spread  *spreadWorld
	certs   *certAuthority
	hostile map[string]hostileHost
	flood   map[string]http.HandlerFunc
	// captured are the instances served from captured documents, by host.
	captured map[string]Captured
	// hostileListed are the hostile hosts named in hubs' peers lists.
	hostileListed []string
	bomb          func() (*bomb, error)

	requests         atomic.Int64
	connections      atomic.Int64
	notModifiedCount atomic.Int64
	peersBytes       atomic.Int64 // body bytes of peers lists served (spread model)
	// mbinBlockedReads counts requests for an Mbin block list, which no
	// crawler should make.
	mbinBlockedReads atomic.Int64
	mu               sync.Mutex
	log              map[string][]string // host -> "METHOD /path", only with RecordRequests
	conns            map[string]int64    // SNI -> handshakes, only with RecordRequests
	// gzipMembersSent counts the bytes hostile-gzip-members.social wrote.
	gzipMembersSent atomic.Int64

	// others numbers the hosts served beside the generated instances, for
	// their addresses (see AddrOf).
	others    map[string]int
	addresses int // how many addresses the hosts are at (MaxAddresses at most)

	ln   net.Listener
	each []net.Listener // on the hosts' addresses (see AddrOf)
	srv  *http.Server
}

// New builds a simulator; it generates the CA but does not listen yet.
func New(cfg Config) (*Sim, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	ca, err := newCertAuthority(cfg.CertCacheSize)
	if err != nil {
		return nil, fmt.Errorf("fedisim: %w", err)
	}
	s := &Sim{
		w:     &world{cfg: cfg, n: uint64(cfg.Instances)},
		cfg:   cfg,
		certs: ca,
		log:   map[string][]string{},
		conns: map[string]int64{},
	}
	if cfg.Spread != nil {
		s.spread = newSpreadWorld(s.w, *cfg.Spread)
	}
	s.bomb = sync.OnceValues(func() (*bomb, error) { return makeBomb(GzipBombSize >> 20) })
	if cfg.HostileHosts {
		s.hostile = s.hostileHosts()
	}
	s.flood = s.floodHosts()
	if s.captured, err = capturedHosts(cfg.Captured); err != nil {
		return nil, err
	}
	s.others = s.otherHosts()
	s.addresses = max(1, min(cfg.Instances+len(s.others), MaxAddresses))
	return s, nil
}

// Start listens on addr (a loopback address such as "127.0.0.1:0"), and on
// the hosts' addresses at the same port (see AddrOf), and serves TLS in the
// background until Close.
func (s *Sim) Start(addr string) error {
	if err := CheckLoopback(addr); err != nil {
		return err
	}
	ln, each, err := s.listenAll(addr)
	if err != nil {
		return err
	}
	if s.hostile != nil {
		// Built before serving, not on the first request: the build is
		// about a second of CPU (several on a loaded machine), which would
		// count against the deadline of the check that asked, and a
		// deadline is not what that host tests.
		if _, err := s.gzipBomb(); err != nil {
			ln.Close()
			for _, l := range each {
				l.Close()
			}
			return err
		}
	}
	s.ln, s.each = ln, each
	s.srv = &http.Server{
		Handler: s,
		TLSConfig: &tls.Config{
			GetCertificate: s.getCertificate,
			NextProtos:     []string{"http/1.1"},
			MinVersion:     tls.VersionTLS12,
		},
		// HTTP/1.1 only: a dead host must be able to drop the connection.
		TLSNextProto:      map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		// Refused handshakes are the simulation working, not news.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	for _, l := range append([]net.Listener{ln}, each...) {
		go func() {
			if err := s.srv.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.cfg.Logger.Error("fedisim serve", "err", err)
			}
		}()
	}
	return nil
}

// CheckLoopback returns an error unless addr ("host:port") is on a loopback
// address: the simulator must never be reachable from outside the machine.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("fedisim: address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("fedisim: refusing to listen on %q: only loopback addresses (127.0.0.0/8, ::1) are allowed", addr)
	}
	return nil
}

// Addr is the host:port actually bound ("" before Start).
func (s *Sim) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Port is the TCP port actually bound (0 before Start).
func (s *Sim) Port() int {
	if s.ln == nil {
		return 0
	}
	return s.ln.Addr().(*net.TCPAddr).Port
}

// ConnectTo is the crawler's --connect-to value sending every host's port 443
// to the simulator.
func (s *Sim) ConnectTo() string {
	host := "127.0.0.1"
	if s.ln != nil {
		host = s.ln.Addr().(*net.TCPAddr).IP.String()
	}
	return "*:443:" + host + ":" + strconv.Itoa(s.Port())
}

// CAPEM is the PEM of the CA certificate that signs every host's certificate.
func (s *Sim) CAPEM() []byte { return append([]byte(nil), s.certs.caPEM...) }

// WriteCA writes CAPEM to path.
func (s *Sim) WriteCA(path string) error {
	if err := os.WriteFile(path, s.certs.caPEM, 0o644); err != nil {
		return fmt.Errorf("fedisim: write CA: %w", err)
	}
	return nil
}

// Close stops the server and ends every connection, including hostile
// responses still streaming.
func (s *Sim) Close() error {
	if s.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		// Long-running hostile handlers do not finish by themselves.
		if err := s.srv.Close(); err != nil {
			return fmt.Errorf("fedisim: close: %w", err)
		}
	}
	return nil
}

// SetDay changes the simulated day every instance serves.
func (s *Sim) SetDay(d int) {
	s.day.Store(int64(d))
	s.at.Store(int64(time.Duration(d) * 24 * time.Hour))
}

// now is the simulated time as an offset from Day0.
func (s *Sim) now() time.Duration { return time.Duration(s.at.Load()) }

// Day is the current simulated day.
func (s *Sim) Day() int { return int(s.day.Load()) }

// SetNow sets the day from a time: whole days since Config.Day0 (rounded
// down).
func (s *Sim) SetNow(t time.Time) {
	s.day.Store(int64(s.DayOf(t)))
	s.at.Store(int64(t.Sub(s.cfg.Day0)))
}

// DayOf is the simulated day containing t.
func (s *Sim) DayOf(t time.Time) int {
	d := t.Sub(s.cfg.Day0)
	days := int(d / (24 * time.Hour))
	if d < 0 && d%(24*time.Hour) != 0 {
		days--
	}
	return days
}

// Date is the start of simulated day d.
func (s *Sim) Date(d int) time.Time { return s.cfg.Day0.Add(time.Duration(d) * 24 * time.Hour) }

// Config is the configuration in effect, defaults filled in.
func (s *Sim) Config() Config { return s.cfg }

// Seeds returns n well-connected hosts that are alive on day 0 and stay
// alive: hubs first, then other stable instances, in index order.
func (s *Sim) Seeds(n int) []string {
	var out []string
	w := s.w
	if s.spread != nil {
		// The spread model's hubs, which every new instance federates with.
		for i := uint64(0); i < uint64(s.spread.c.Hubs) && len(out) < n; i++ {
			out = append(out, w.hostFor(i))
		}
		return out
	}
	for pass := 0; pass < 2 && len(out) < n; pass++ {
		for i := uint64(0); i < w.n && len(out) < n; i++ {
			hub := w.isHub(i)
			if (pass == 0) != hub {
				continue
			}
			if pass == 1 && (w.fate(i) != fateStable || w.born(i) != 0 || w.family(i).peers != peersMastodon) {
				continue
			}
			out = append(out, w.hostFor(i))
		}
	}
	return out
}

// Hosts yields, in index order, the current name of every instance that
// exists on day: born, not down, under its new name once it has moved for
// good (opted-out and temporarily moving ones included). Hostile and spam
// farm hosts are not included.
func (s *Sim) Hosts(day int) iter.Seq[string] {
	return func(yield func(string) bool) {
		w := s.w
		for i := uint64(0); i < w.n; i++ {
			t := w.timeline(i)
			var host string
			switch t.state(day) {
			case StateNotBorn, StateDown:
				continue
			case StateMoved:
				host = w.hostFor(w.n + i)
			default:
				host = w.hostFor(i)
			}
			if !yield(host) {
				return
			}
		}
	}
}

// Host is the name of instance i (0 <= i < Config.Instances), whatever its
// state.
func (s *Sim) Host(i int) string {
	if i < 0 || uint64(i) >= s.w.n {
		return ""
	}
	return s.w.hostFor(uint64(i))
}

// Instance returns the ground truth about host: a generated instance, its
// redirect target, a hostile host or a spam-farm host.
func (s *Sim) Instance(host string) (Info, bool) {
	if h, ok := s.hostile[host]; ok {
		return h.info, true
	}
	k, ok := s.w.number(host)
	if !ok {
		return Info{}, false
	}
	if k < s.w.n {
		return s.w.info(k), true
	}
	inf := s.w.info(k - s.w.n)
	if inf.MovesTo == "" && inf.MovingTo == "" {
		return Info{}, false // no such redirect target
	}
	inf.MoveTargetOf = inf.Host
	inf.Host = host
	return inf, true
}

// PeersOn yields the entries host's peers endpoint lists on day (all pages,
// junk included; PeerTube serves the even ones as followers and the odd ones
// as following, and as asked with state=accepted, so without rejected
// follows; Misskey as asked with "blocked": false, so without the instances
// its admin blocked), or nothing when host serves no peers list that
// day (not alive, no endpoint, 401/403/404). Only generated instances and
// their redirect targets are covered, not hostile hosts.
func (s *Sim) PeersOn(host string, day int) iter.Seq[string] {
	none := func(func(string) bool) {}
	k, ok := s.w.number(host)
	if !ok {
		return none
	}
	i := k
	st := s.StateOn(host, day).State
	if k >= s.w.n {
		i = k - s.w.n
	}
	if st != StateAlive && st != StateOptedOut {
		return none
	}
	if inf := s.w.info(i); inf.PeersStatus != 200 {
		return none
	}
	return s.peersOf(i, day)
}

// StateOn tells what host serves on day.
func (s *Sim) StateOn(host string, day int) Status {
	if _, ok := s.hostile[host]; ok {
		return Status{State: StateAlive}
	}
	k, ok := s.w.number(host)
	if !ok {
		return Status{State: StateUnknown}
	}
	w := s.w
	if k >= w.n {
		t := w.timeline(k - w.n)
		if t.moves == NoDay && t.moving == NoDay {
			return Status{State: StateUnknown}
		}
		return Status{State: t.targetState(day)}
	}
	st := w.timeline(k).state(day)
	switch st {
	case StateMoved, StateMoving:
		return Status{State: st, Target: w.hostFor(w.n + k)}
	}
	return Status{State: st}
}

// Requests returns the requests host received, as "METHOD /path?query", in
// order (only with Config.RecordRequests).
func (s *Sim) Requests(host string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log[host]...)
}

// Connections returns the TLS handshakes started with SNI host (only with
// Config.RecordRequests).
func (s *Sim) Connections(host string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[host]
}

// Stats are the simulator's counters.
type Stats struct {
	Day         int   `json:"day"`
	Requests    int64 `json:"requests"`     // HTTP requests served
	Connections int64 `json:"connections"`  // TLS handshakes started
	NotModified int64 `json:"not_modified"` // peers lists answered 304 Not Modified
	// MbinBlockedReads counts requests for an Mbin block list
	// (/api/defederated), which a crawler must never read.
	MbinBlockedReads int64 `json:"mbin_blocked_reads"`
	Instances        int   `json:"instances"`
	// PeersBytes counts the body bytes of the peers lists served under the
	// spread model (304s and refusals count nothing).
	PeersBytes int64 `json:"peers_bytes,omitempty"`
}

// Stats returns the counters so far.
func (s *Sim) Stats() Stats {
	return Stats{Day: s.Day(), Requests: s.requests.Load(), Connections: s.connections.Load(), NotModified: s.notModifiedCount.Load(), MbinBlockedReads: s.mbinBlockedReads.Load(), Instances: s.cfg.Instances, PeersBytes: s.peersBytes.Load()}
}

// ResetRequests forgets the request log and connection counts (not the totals).
func (s *Sim) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.log)
	clear(s.conns)
}

func (s *Sim) record(host, entry string) {
	s.mu.Lock()
	s.log[host] = append(s.log[host], entry)
	s.mu.Unlock()
}
