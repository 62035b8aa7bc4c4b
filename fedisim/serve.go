package fedisim

import (
	"bufio"
	"io"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// node is one host as served: the instance's facts plus how it presents
// them.
type node struct {
	inf    Info
	fam    *family
	style  uint64 // picks the shape of the well-known document
	robots string // robots.txt body; "" answers 404
	peers  iter.Seq[string]
	// etag validates the single-GET peers lists (Mastodon's, Lemmy's): the
	// list is a function of the instance and the day, so is its tag.
	etag string
}

// hostOf is the host a request is for: the Host header, else the SNI name.
func hostOf(r *http.Request) string {
	h := r.Host
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		h = h[:i]
	}
	if h == "" && r.TLS != nil {
		h = r.TLS.ServerName
	}
	return canonicalHost(h)
}

// canonicalHost is the name the simulator files a host under: lower case,
// without a root dot.
func canonicalHost(h string) string { return strings.ToLower(strings.TrimSuffix(h, ".")) }

// abort drops the connection without a response: to the client the host
// is unreachable.
func abort() { panic(http.ErrAbortHandler) }

// ServeHTTP answers as whichever host the request names.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	host := hostOf(r)
	if s.cfg.RecordRequests {
		s.record(host, r.Method+" "+r.URL.RequestURI())
	}
	if h, ok := s.hostile[host]; ok {
		h.serve(w, r)
		return
	}
	if serve, ok := s.flood[host]; ok {
		serve(w, r)
		return
	}
	if c, ok := s.captured[host]; ok {
		c.serve(w, r)
		return
	}
	if s.spread != nil {
		s.serveSpread(w, r, host)
		return
	}
	wd := s.w
	k, ok := wd.number(host)
	if !ok {
		abort()
	}
	day := s.Day()
	if k >= wd.n {
		i := k - wd.n
		if wd.timeline(i).targetState(day) != StateAlive {
			abort()
		}
		s.serveNode(w, r, s.nodeFor(i, host, day, false))
		return
	}
	t := wd.timeline(k)
	switch st := t.state(day); st {
	case StateNotBorn:
		abort()
	case StateDown:
		mode := pick(wd.hash(k, saltMode), []string{DownUnreachable, DownUnreachable, Down500, Down502, Down503})
		if mode == DownUnreachable {
			abort()
		}
		code, _ := strconv.Atoi(mode)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(code)
		io.WriteString(w, "<html><body><h1>"+strconv.Itoa(code)+" "+http.StatusText(code)+"</h1><hr>nginx</body></html>\n")
	case StateMoved, StateMoving:
		codes := []int{301, 308}
		if st == StateMoving {
			codes = []int{302, 307}
		}
		code := pick(wd.hash(k, saltMode+1), codes)
		w.Header().Set("Location", "https://"+wd.hostFor(wd.n+k)+r.URL.RequestURI())
		w.WriteHeader(code)
	default:
		s.serveNode(w, r, s.nodeFor(k, host, day, st == StateOptedOut))
	}
}

// handshakes reports whether a TLS handshake with name succeeds at offset
// at from Day0: hostile hosts, flooders and captured documents always
// answer, the world's hosts when they are reachable today.
func (s *Sim) handshakes(name string, at time.Duration) bool {
	if _, ok := s.hostile[name]; ok {
		return true
	}
	if _, ok := s.flood[name]; ok {
		return true
	}
	return s.isCaptured(name) || s.reachable(name, s.Day(), at)
}

// reachable reports whether a TLS handshake with name succeeds on day, or
// at offset at from Day0 under the spread model.
func (s *Sim) reachable(name string, day int, at time.Duration) bool {
	wd := s.w
	k, ok := wd.number(name)
	if !ok {
		return false
	}
	if s.spread != nil {
		return k < wd.n && s.spread.alive(k, at)
	}
	if k >= wd.n {
		return wd.timeline(k-wd.n).targetState(day) == StateAlive
	}
	switch wd.timeline(k).state(day) {
	case StateNotBorn:
		return false
	case StateDown:
		return pick(wd.hash(k, saltMode), []string{DownUnreachable, DownUnreachable, Down500, Down502, Down503}) != DownUnreachable
	}
	return true
}

// nodeFor is generated instance i served as host on day.
func (s *Sim) nodeFor(i uint64, host string, day int, optedOut bool) *node {
	wd := s.w
	inf := wd.info(i)
	if host != inf.Host && inf.Name == inf.Host {
		inf.Name = host
	}
	inf.Host = host
	n := &node{inf: inf, fam: wd.family(i), style: wd.hash(i, saltStyle+2)}
	if inf.Hub {
		n.style = 0 // one link, in an array, with the usual http rel
	}
	if optedOut {
		n.robots = inf.OptOutRule
	} else {
		n.robots = pick(wd.hash(i, saltRobots+1), robotsAllow)
	}
	n.peers = s.peersOf(i, day)
	n.etag = `W/"peers-` + strconv.FormatUint(i, 36) + "-" + strconv.Itoa(day) + `"`
	return n
}

// peersOf is instance i's peers list on day: born instances under their
// current names, some junk in a few lists, and the hostile hosts in hubs'
// lists when they are on.
func (s *Sim) peersOf(i uint64, day int) iter.Seq[string] {
	wd := s.w
	junk := wd.unit(i, saltJunk) < s.cfg.JunkLists
	hub := wd.isHub(i)
	return func(yield func(string) bool) {
		count := uint64(0)
		ok := true
		wd.eachPeer(i, day, func(j uint64) bool {
			count++
			if junk && wd.hash(i^count, saltJunkPick)%13 == 0 {
				if !yield(pick(wd.hash(i+count, saltJunkPick), junkPeers)) {
					ok = false
					return false
				}
			}
			if !yield(wd.currentHost(j, day)) {
				ok = false
				return false
			}
			return true
		})
		if !ok || !hub || s.hostile == nil {
			return
		}
		for _, h := range s.hostileListed {
			if !yield(h) {
				return
			}
		}
	}
}

// junkPeers are entries real peers lists contain that are not host names.
var junkPeers = []string{
	"192.0.2.1", "198.51.100.7:8443", "[2001:db8::1]", "with-port.social:443",
	"example.social/path", "UPPER-CASE.Social", "trailing-dot.social.", "🦣.social",
	"unknown-tld.notarealtld", "localhost", "", " ", "a..b.social", "-bad-.social",
	"https://scheme.social", "user@at.social", "under_score.social", "mastodon",
	strings.Repeat("x", 300) + ".social", "xn--.social", "127.0.0.1", "fe80::1",
}

func (s *Sim) serveNode(w http.ResponseWriter, r *http.Request, n *node) {
	path := r.URL.Path
	switch {
	case path == "/robots.txt":
		if n.robots == "" {
			notFound(w)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, n.robots)
	case path == "/.well-known/nodeinfo":
		writeJSON(w, 200, appendWellKnown(nil, n))
	case path == "/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		b := []byte("<!DOCTYPE html><html><head><title>")
		b = appendHTML(b, n.inf.Name)
		b = append(b, "</title></head><body><p>"...)
		b = appendHTML(b, n.inf.Description)
		b = append(b, "</p></body></html>\n"...)
		w.Write(b)
	default:
		if v, ok := n.docVersion(path); ok {
			writeJSON(w, 200, appendNodeInfo(nil, n, v))
			return
		}
		if n.servesPeers(path) {
			s.servePeers(w, r, n)
			return
		}
		notFound(w)
	}
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, 404, []byte(`{"error":"Record not found"}`))
}

func writeJSON(w http.ResponseWriter, code int, b []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	w.Write(b)
}

// links are the schema versions the well-known document names, highest
// (Info.NodeInfoVersion) first.
func (n *node) links() []string {
	main := n.inf.NodeInfoVersion
	out := []string{main}
	if main >= "2.0" && (n.fam.alsoOld || n.style%20 == 7) {
		out = append(out, "1.0")
	}
	if main > "2.0" && n.fam.peers == peersMisskey {
		out = append(out, "2.0")
	}
	return out
}

func (n *node) docPath(v string) string {
	if !strings.Contains(n.fam.docPath, "%s") {
		return n.fam.docPath
	}
	return strings.Replace(n.fam.docPath, "%s", v, 1)
}

func (n *node) docVersion(path string) (string, bool) {
	for _, v := range n.links() {
		if n.docPath(v) == path {
			return v, true
		}
	}
	return "", false
}

func appendWellKnown(b []byte, n *node) []byte {
	rel := "http://nodeinfo.diaspora.software/ns/schema/"
	if n.style%10 == 3 {
		rel = "https://nodeinfo.diaspora.software/ns/schema/"
	}
	links := n.links()
	// Some servers send one link object instead of an array.
	asObject := len(links) == 1 && n.style%10 == 5
	b = append(b, `{"links":`...)
	if !asObject {
		b = append(b, '[')
	}
	for k, v := range links {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"rel":`...)
		b = appendJSONString(b, rel+v)
		b = append(b, `,"href":`...)
		b = appendJSONString(b, "https://"+n.inf.Host+n.docPath(v))
		b = append(b, '}')
	}
	if !asObject {
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendNodeInfo(b []byte, n *node, v string) []byte {
	inf := &n.inf
	b = append(b, `{"version":`...)
	b = appendJSONString(b, v)
	b = append(b, `,"software":{"name":`...)
	b = appendJSONString(b, inf.NodeInfoName)
	b = append(b, `,"version":`...)
	b = appendJSONString(b, inf.Version)
	if v >= "2.1" && n.fam.repo != "" {
		b = append(b, `,"repository":`...)
		b = appendJSONString(b, n.fam.repo)
	}
	b = append(b, '}')
	if v < "2.0" {
		b = append(b, `,"protocols":{"inbound":["activitypub"],"outbound":["activitypub"]}`...)
	} else {
		b = append(b, `,"protocols":["activitypub"]`...)
	}
	b = append(b, `,"services":{"inbound":[],"outbound":[]},"openRegistrations":`...)
	b = strconv.AppendBool(b, inf.Open)
	b = append(b, `,"usage":{"users":{"total":`...)
	b = strconv.AppendInt(b, inf.Users, 10)
	b = append(b, `,"activeMonth":`...)
	b = strconv.AppendInt(b, inf.ActiveMonth, 10)
	b = append(b, `,"activeHalfyear":`...)
	b = strconv.AppendInt(b, inf.ActiveHalfyear, 10)
	b = append(b, `},"localPosts":`...)
	b = strconv.AppendInt(b, inf.LocalPosts, 10)
	b = append(b, `},"metadata":{"nodeName":`...)
	b = appendJSONString(b, inf.Name)
	b = append(b, `,"nodeDescription":`...)
	b = appendJSONString(b, inf.Description)
	b = append(b, '}')
	if v == "2.2" {
		b = append(b, `,"instance":{"name":`...)
		b = appendJSONString(b, inf.Name)
		b = append(b, `,"description":`...)
		b = appendJSONString(b, inf.Description)
		b = append(b, '}')
	}
	return append(b, '}')
}

func (n *node) servesPeers(path string) bool {
	switch n.fam.peers {
	case peersMastodon:
		return path == pathMastodonPeers
	case peersMisskey:
		return path == pathMisskeyPeers
	case peersLemmy:
		return path == n.inf.PeersPath
	case peersPeerTube:
		return path == pathPTFollowers || path == pathPTFollowing
	case peersMbin:
		return path == pathMbinPeers || path == pathMbinBlocked
	}
	return false
}

func (s *Sim) servePeers(w http.ResponseWriter, r *http.Request, n *node) {
	if n.inf.PeersStatus != 200 {
		code := n.inf.PeersStatus
		writeJSON(w, code, []byte(`{"error":"`+http.StatusText(code)+`"}`))
		return
	}
	switch n.fam.peers {
	case peersMisskey:
		serveMisskey(w, r, n)
	case peersLemmy:
		s.serveLemmy(w, r, n)
	case peersMbin:
		s.serveMbin(w, r, n)
	case peersPeerTube:
		servePeerTube(w, r, n)
	default:
		s.serveMastodon(w, r, n)
	}
}

// notModified sets the list's ETag and answers 304 when the request's
// If-None-Match names it, as Mastodon (Rails) and Lemmy do.
func (s *Sim) notModified(w http.ResponseWriter, r *http.Request, n *node) bool {
	if n.etag == "" {
		return false
	}
	w.Header().Set("ETag", n.etag)
	if r.Header.Get("If-None-Match") != n.etag {
		return false
	}
	s.notModifiedCount.Add(1)
	w.WriteHeader(http.StatusNotModified)
	return true
}

// streamJSON writes a 200 JSON response produced incrementally, so that a
// peers list of any length costs a fixed buffer.
func streamJSON(w http.ResponseWriter, body func(*bufio.Writer)) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(200)
	bw := bufio.NewWriterSize(w, 16<<10)
	body(bw)
	bw.Flush()
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s for JSON. Bytes >= 0x80 are copied as they are,
// valid UTF-8 or not: the hostile hosts rely on that.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendHTML(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '&':
			b = append(b, "&amp;"...)
		case '"':
			b = append(b, "&#34;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}
