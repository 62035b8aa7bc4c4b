package fedisim

import (
	"net/http"
	"strconv"
	"time"
)

// How each software family serves its peers list, as the spread model
// serves it: how long the list it serves may be old, and with which
// validators and caching headers.
//
//   - Mastodon (and its forks Hometown and glitch-soc) caches the list for a
//     day on the server: app/controllers/api/v1/instances/peers_controller.rb
//     renders it with render_with_cache(expires_in: 1.day), which keeps the
//     rendered list in the Rails cache for a day and sends
//     "Cache-Control: max-age=86400, public". A list fetched within the day
//     is the same list, whatever federated since. Rails' Rack::ETag gives
//     the body a weak ETag and Rack::ConditionalGet answers a matching
//     If-None-Match with 304, so a conditional fetch of an unchanged list
//     costs no body. Each server's cache day starts at its own time.
//   - Pleroma and Akkoma answer /api/v1/instance/peers with
//     json(conn, Pleroma.Stats.get_peers()) (InstanceController.peers): a
//     list their Stats process recomputes on a timer of minutes, sent with
//     Plug's default "cache-control: max-age=0, private, must-revalidate"
//     and no ETag. The model serves it as of the moment asked.
//   - Misskey and its forks list peers only through POST
//     /api/federation/instances, paged: a POST answer is not cached and has
//     no validators. Served as of the moment asked.
//   - Every other family (GoToSocial, Lemmy, PeerTube, Mbin, Friendica, ...)
//     is served as of the moment asked, without validators or caching
//     headers: the model does not claim more about them.
const mastodonPeersCache = 24 * time.Hour

// peersCachedSince is the offset as of which instance i's list is served
// at offset d, and whether the family caches it (Mastodon's day).
func (s *spreadWorld) peersCachedSince(i uint64, d time.Duration) (time.Duration, bool) {
	if s.w.family(i).niName != "mastodon" && !s.isHub(i) {
		return d, false
	}
	phase := time.Duration(s.w.hash(i, saltSpreadCachePhase) % uint64(mastodonPeersCache))
	k := (d - phase) / mastodonPeersCache
	if d-phase < 0 && (d-phase)%mastodonPeersCache != 0 {
		k--
	}
	return phase + k*mastodonPeersCache, true
}

// serveSpread answers as host under the spread model, at the simulator's
// current time or the request's own (WithNow).
func (s *Sim) serveSpread(w http.ResponseWriter, r *http.Request, host string) {
	sw := s.spread
	k, ok := s.w.number(host)
	if !ok || k >= sw.n {
		abort()
	}
	d := s.nowFor(r)
	if !sw.alive(k, d) {
		abort()
	}
	n, cached := s.spreadServed(r, k, host, d)
	if cached {
		if n.servesPeers(r.URL.Path) {
			w.Header().Set("Cache-Control", "max-age=86400, public")
		}
	} else if n.servesPeers(r.URL.Path) && (n.inf.Family == "pleroma" || n.inf.Family == "akkoma") {
		w.Header().Set("Cache-Control", "max-age=0, private, must-revalidate")
	}
	if n.servesPeers(r.URL.Path) {
		cw := &countingWriter{ResponseWriter: w}
		defer func() { s.peersBytes.Add(cw.n) }()
		w = cw
	}
	s.serveNode(w, r, n)
}

// spreadServed is instance k as host serves it at offset d, its peers
// list as of since (cached: as of the start of its cache day, with an
// ETag). The node is made once for the requests of one WithNow.
func (s *Sim) spreadServed(r *http.Request, k uint64, host string, d time.Duration) (n *node, cached bool) {
	sw := s.spread
	since, cached := sw.peersCachedSince(k, d)
	at := servedAtOf(r)
	if at != nil {
		if last := at.last.Load(); last != nil && last.host == host {
			return last.n, cached
		}
	}
	n = s.spreadNode(k, host)
	n.peers = sw.peersAt(k, since)
	if cached {
		n.etag = spreadETag(k, since)
	}
	if at != nil {
		at.last.Store(&servedNode{host: host, n: n})
	}
	return n, cached
}

// spreadETag is the ETag of instance k's cached peers list as of since.
func spreadETag(k uint64, since time.Duration) string {
	return `W/"spread-` + strconv.FormatUint(k, 36) + "-" + strconv.FormatInt(int64(since/time.Second), 36) + `"`
}

// SpreadServes is what of host's answers under the spread model changes
// with the time t: whether it answers at all, and its peers list's ETag
// ("" when its family sends none). All else it serves (robots.txt, the
// NodeInfo documents, which peers endpoint it has and with what status,
// the caching headers) is the same at every time it answers; only the
// list's body and ETag move. ok is false without the spread model and for
// the hosts it does not answer (hostile, flooding and captured ones).
// A caller may so take a check's answers that do not read a list's body
// as the same at two times with the same alive and etag
// (internal/testsupport.FastModelChecker).
func (s *Sim) SpreadServes(host string, t time.Time) (alive bool, etag string, ok bool) {
	if s.spread == nil {
		return false, "", false
	}
	host = canonicalHost(host)
	_, hostile := s.hostile[host]
	_, flood := s.flood[host]
	if hostile || flood || s.isCaptured(host) {
		return false, "", false
	}
	d := t.Sub(s.cfg.Day0)
	k, known := s.w.number(host)
	if !known || k >= s.spread.n || !s.spread.alive(k, d) {
		return false, "", true
	}
	if since, cached := s.spread.peersCachedSince(k, d); cached {
		etag = spreadETag(k, since)
	}
	return true, etag, true
}

// AddNotModified counts n peers lists as answered 304 Not Modified (Stats)
// by a caller that answered them without asking: the model checker that
// reuses the crawler's reading of a host's unchanged list.
func (s *Sim) AddNotModified(n int64) { s.notModifiedCount.Add(n) }

// countingWriter counts the body bytes written through it.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

// spreadNode is instance k of the spread model as served: the day world's
// faces (software, name, NodeInfo) with the spread model's hubs, which are
// conventional Mastodon servers that show their peers, and no opt-out.
func (s *Sim) spreadNode(k uint64, host string) *node {
	wd := s.w
	inf := wd.info(k)
	fam := wd.family(k)
	n := &node{fam: fam, style: wd.hash(k, saltStyle+2), robots: pick(wd.hash(k, saltRobots+1), robotsAllow)}
	if s.spread.isHub(k) {
		n.fam = &families[0]
		inf.Family, inf.Software, inf.NodeInfoName = "mastodon", "mastodon", "mastodon"
		inf.NodeInfoVersion, inf.Version = families[0].schema, families[0].versions[0]
		inf.PeersPath, inf.PeersStatus = pathMastodonPeers, 200
		inf.Hub = true
		n.style = 0
	}
	inf.Host = host
	n.inf = inf
	return n
}

// Spread reports whether the simulator runs the spread model.
func (s *Sim) Spread() bool { return s.spread != nil }

// Truth is the spread model's ground truth about instance i (0 <= i <
// Config.Instances); ok is false without the spread model.
func (s *Sim) Truth(i int) (Truth, bool) {
	if s.spread == nil || i < 0 || uint64(i) >= s.spread.n {
		return Truth{}, false
	}
	return s.spread.truth(uint64(i)), true
}

// SpreadPeersAt yields the names instance i's peers list serves at t under
// the spread model, its cache included (nothing when it does not answer
// then, or without the spread model).
func (s *Sim) SpreadPeersAt(i int, t time.Time) func(func(string) bool) {
	if s.spread == nil || i < 0 || uint64(i) >= s.spread.n {
		return func(func(string) bool) {}
	}
	d := t.Sub(s.cfg.Day0)
	k := uint64(i)
	if !s.spread.alive(k, d) || s.spreadNode(k, s.w.hostFor(k)).inf.PeersStatus != 200 {
		return func(func(string) bool) {}
	}
	since, _ := s.spread.peersCachedSince(k, d)
	return s.spread.peersAt(k, since)
}

// FirstNamed is when instance i's name is first in a peers list as served
// by an instance alive then that shows its list, its cache included: the
// earliest moment any crawler could read the name (ok false: never by
// until, or without the spread model). Birth to FirstNamed is the world's
// share of a discovery's latency; FirstNamed to a listing, the observer's.
func (s *Sim) FirstNamed(i int, until time.Time) (time.Time, bool) {
	if s.spread == nil || i < 0 || uint64(i) >= s.spread.n {
		return time.Time{}, false
	}
	sw, k, end := s.spread, uint64(i), until.Sub(s.cfg.Day0)
	best, found := time.Duration(0), false
	named := func(l uint64, at time.Duration) {
		if since, ok := s.servedFrom(l, at, end); ok && (!found || since < best) {
			best, found = since, true
		}
	}
	sw.links(k, func(l link) bool {
		named(l.to, l.at)
		return true
	})
	// Only links formed before the best so far can do better; instances
	// are born in index order, so this bounds the scan.
	by := end
	if found {
		by = best
	}
	sw.incoming(k, by, func(l uint64, at time.Duration) bool {
		named(l, at)
		return true
	})
	if !found {
		return time.Time{}, false
	}
	return s.spread.at(best), true
}

// NamedBy calls yield with each instance whose peers list names instance i
// by until, as FirstNamed reads lists, and the moment it first serves the
// name: where a crawler could have read it first, for telling the
// observer's share of a latency apart by list.
func (s *Sim) NamedBy(i int, until time.Time, yield func(l int, from time.Time)) {
	if s.spread == nil || i < 0 || uint64(i) >= s.spread.n {
		return
	}
	sw, k, end := s.spread, uint64(i), until.Sub(s.cfg.Day0)
	named := func(l uint64, at time.Duration) {
		if since, ok := s.servedFrom(l, at, end); ok {
			yield(int(l), sw.at(since))
		}
	}
	sw.links(k, func(l link) bool {
		named(l.to, l.at)
		return true
	})
	sw.incoming(k, end, func(l uint64, at time.Duration) bool {
		named(l, at)
		return true
	})
}

// servedFrom is the offset from which instance l's peers list, as served,
// names a host it linked with at offset at (its cache renewed since), if
// that is by end and l is alive and shows its list then.
func (s *Sim) servedFrom(l uint64, at, end time.Duration) (time.Duration, bool) {
	sw := s.spread
	if s.spreadNode(l, s.w.hostFor(l)).inf.PeersStatus != 200 {
		return 0, false
	}
	since, cached := sw.peersCachedSince(l, at)
	if cached && since < at {
		since += mastodonPeersCache
	}
	return since, since <= end && sw.alive(l, since)
}
