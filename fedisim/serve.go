package fedisim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strconv"
	"strings"
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
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

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

// reachable reports whether a TLS handshake with name succeeds on day.
func (s *Sim) reachable(name string, day int) bool {
	wd := s.w
	k, ok := wd.number(name)
	if !ok {
		return false
	}
	if s.spread != nil {
		return k < wd.n && s.spread.alive(k, s.now())
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
		if r.Method != http.MethodPost {
			writeJSON(w, 405, []byte(`{"error":{"message":"Unsupported HTTP method.","code":"METHOD_NOT_ALLOWED"}}`))
			return
		}
		var q struct {
			Limit   *int  `json:"limit"`
			Offset  int   `json:"offset"`
			Blocked *bool `json:"blocked"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&q); err != nil && err != io.EOF {
			writeJSON(w, 400, []byte(`{"error":{"message":"Invalid param.","code":"INVALID_PARAM"}}`))
			return
		}
		limit := 30
		if q.Limit != nil {
			limit = *q.Limit
		}
		if limit < 1 || limit > 100 || q.Offset < 0 {
			writeJSON(w, 400, []byte(`{"error":{"message":"Invalid param.","code":"INVALID_PARAM"}}`))
			return
		}
		streamJSON(w, func(bw *bufio.Writer) { writeMisskey(bw, n, q.Blocked, q.Offset, limit) })
	case peersLemmy:
		if n.inf.PeersPath == pathLemmyPeersV4 {
			serveLemmyV4(w, r, n)
			return
		}
		if s.notModified(w, r, n) {
			return
		}
		streamJSON(w, func(bw *bufio.Writer) { writeLemmy(bw, n) })
	case peersMbin:
		if r.URL.Path == pathMbinBlocked {
			// Its block list: a crawler that read it would take the
			// hosts an admin cut off for peers.
			s.mbinBlockedReads.Add(1)
			streamJSON(w, func(bw *bufio.Writer) { writeMbin(bw, mbinBlockedHosts(n)) })
			return
		}
		if s.notModified(w, r, n) {
			return
		}
		streamJSON(w, func(bw *bufio.Writer) { writeMbin(bw, n.peers) })
	case peersPeerTube:
		start, _ := strconv.Atoi(r.URL.Query().Get("start"))
		count := 15
		if c := r.URL.Query().Get("count"); c != "" {
			count, _ = strconv.Atoi(c)
		}
		if start < 0 || count < 0 || count > 100 {
			writeJSON(w, 400, []byte(`{"type":"about:blank","title":"Bad Request","status":400}`))
			return
		}
		state := r.URL.Query().Get("state")
		if state != "" && state != "accepted" && state != "pending" && state != "rejected" {
			writeJSON(w, 400, []byte(`{"type":"about:blank","title":"Bad Request","status":400}`))
			return
		}
		followers := r.URL.Path == pathPTFollowers
		streamJSON(w, func(bw *bufio.Writer) { writePeerTube(bw, n, followers, state, start, count) })
	default:
		if s.notModified(w, r, n) {
			return
		}
		streamJSON(w, func(bw *bufio.Writer) { writeMastodon(bw, n.peers) })
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

// writeMbin writes Mbin's {"instances":[{"domain":...}]} (MbinOrg/mbin,
// InstanceRetrieveFederationApi).
func writeMbin(bw *bufio.Writer, hosts iter.Seq[string]) {
	var scratch []byte
	bw.WriteString(`{"instances":[`)
	first := true
	for h := range hosts {
		if !first {
			bw.WriteByte(',')
		}
		first = false
		scratch = append(scratch[:0], `{"domain":`...)
		scratch = appendJSONString(scratch, h)
		scratch = append(scratch, `,"software":null,"version":null}`...)
		bw.Write(scratch)
	}
	bw.WriteString("]}")
}

// mbinBlockedHosts are the hosts a simulated Mbin admin defederated: names
// in no peers list, so one discovered can only have come from the block
// list.
func mbinBlockedHosts(n *node) iter.Seq[string] {
	return func(yield func(string) bool) {
		for k := range 3 {
			if !yield(fmt.Sprintf("defederated-%d.%s", k, n.inf.Host)) {
				return
			}
		}
	}
}

func writeMastodon(bw *bufio.Writer, peers iter.Seq[string]) {
	var scratch []byte
	bw.WriteByte('[')
	first := true
	for h := range peers {
		if !first {
			bw.WriteByte(',')
		}
		first = false
		scratch = appendJSONString(scratch[:0], h)
		bw.Write(scratch)
	}
	bw.WriteString("]")
}

// misskeyBlocked is how many instances each simulated Misskey admin has
// blocked, at most: one ahead of the first peer, then one after every 50th.
const misskeyBlocked = 3

// MisskeyBlockedHost is the name of the k-th instance host's admin blocked
// (k from 0): a valid name, never an instance of the world nor on any peers
// list, so a crawler that records one read the blocklist.
func MisskeyBlockedHost(host string, k int) string {
	label, _, _ := strings.Cut(host, ".")
	return "blocked-" + label + "-x" + strconv.Itoa(k) + ".social"
}

// misskeyEntries yields a Misskey node's instances as federation/instances
// lists them: its peers with a few blocked instances among them. blocked
// filters as Misskey does: nil lists both, false only the unblocked, true
// only the blocked.
func misskeyEntries(n *node, blocked *bool) iter.Seq2[string, bool] {
	return func(yield func(string, bool) bool) {
		want := func(isBlocked bool) bool { return blocked == nil || *blocked == isBlocked }
		k, b := 0, 0
		for h := range n.peers {
			if k%50 == 0 && b < misskeyBlocked {
				if want(true) && !yield(MisskeyBlockedHost(n.inf.Host, b), true) {
					return
				}
				b++
			}
			if want(false) && !yield(h, false) {
				return
			}
			k++
		}
	}
}

func writeMisskey(bw *bufio.Writer, n *node, blocked *bool, offset, limit int) {
	var b []byte
	bw.WriteByte('[')
	k := 0
	for h, isBlocked := range misskeyEntries(n, blocked) {
		if k >= offset+limit {
			break
		}
		if k >= offset {
			if k > offset {
				bw.WriteByte(',')
			}
			b = append(b[:0], `{"id":"`...)
			b = strconv.AppendUint(b, mix(uint64(k)+uint64(len(h)))%1e12, 36)
			b = append(b, `","firstRetrievedAt":"2024-03-01T12:00:00.000Z","host":`...)
			b = appendJSONString(b, h)
			b = append(b, `,"usersCount":0,"notesCount":0,"followingCount":0,"followersCount":0,"isNotResponding":false,"isSuspended":false,"isBlocked":`...)
			b = strconv.AppendBool(b, isBlocked)
			b = append(b, `,"softwareName":null,"softwareVersion":null,"openRegistrations":null,"name":null,"description":null,"maintainerName":null,"maintainerEmail":null,"iconUrl":null,"faviconUrl":null,"themeColor":null,"infoUpdatedAt":null}`...)
			bw.Write(b)
		}
		k++
	}
	bw.WriteByte(']')
}

func writeLemmy(bw *bufio.Writer, n *node) {
	// Lemmy before 0.18 listed bare strings; later versions list objects.
	old := strings.HasPrefix(n.inf.Version, "0.17")
	var b []byte
	bw.WriteString(`{"federated_instances":{"linked":[`)
	k := 0
	var blocked []string
	for h := range n.peers {
		if k > 0 {
			bw.WriteByte(',')
		}
		if old {
			b = appendJSONString(b[:0], h)
		} else {
			b = append(b[:0], `{"id":`...)
			b = strconv.AppendInt(b, int64(k+1), 10)
			b = append(b, `,"domain":`...)
			b = appendJSONString(b, h)
			b = append(b, `,"published":"2023-07-01T10:00:00.000000Z","updated":null}`...)
		}
		bw.Write(b)
		if k%50 == 49 && len(blocked) < 3 {
			blocked = append(blocked, h)
		}
		k++
	}
	bw.WriteString(`],"allowed":[],"blocked":[`)
	for k, h := range blocked {
		if k > 0 {
			bw.WriteByte(',')
		}
		if old {
			b = appendJSONString(b[:0], h)
		} else {
			b = append(b[:0], `{"id":`...)
			b = strconv.AppendInt(b, int64(100000+k), 10)
			b = append(b, `,"domain":`...)
			b = appendJSONString(b, h)
			b = append(b, `,"published":"2023-07-01T10:00:00.000000Z","updated":null}`...)
		}
		bw.Write(b)
	}
	bw.WriteString(`]}}`)
}

// lemmyPageLimit is Lemmy's FETCH_LIMIT_MAX: a larger limit is refused.
const lemmyPageLimit = 50

// serveLemmyV4 answers Lemmy 1.0's GET /api/v4/federated_instances: one
// page of at most limit instance views (default 20, 1 to 50), from the
// place page_cursor names, with the next page's cursor while the page is
// full. kind=linked leaves out the blocked instances (LemmyBlockedHosts),
// which kind=all (the default) lists with a "blocked" object; allowed and
// blocked list only those.
func serveLemmyV4(w http.ResponseWriter, r *http.Request, n *node) {
	q := r.URL.Query()
	bad := func(kind string) {
		writeJSON(w, 400, []byte(`{"error":"`+kind+`"}`))
	}
	limit := 20
	if l := q.Get("limit"); l != "" {
		var err error
		if limit, err = strconv.Atoi(l); err != nil || limit < 1 || limit > lemmyPageLimit {
			bad("invalid_fetch_limit")
			return
		}
	}
	kind := q.Get("kind")
	if kind == "" {
		kind = "all"
	}
	if kind != "all" && kind != "linked" && kind != "allowed" && kind != "blocked" {
		bad("invalid_query")
		return
	}
	// The cursor is opaque to clients; here it is the place to start at.
	start := 0
	if c := q.Get("page_cursor"); c != "" {
		v, err := strconv.Atoi(strings.TrimPrefix(c, "I"))
		if !strings.HasPrefix(c, "I") || err != nil || v < 0 {
			bad("couldnt_parse_pagination_token")
			return
		}
		start = v
	}
	type entry struct {
		host    string
		blocked bool
	}
	entries := func(yield func(entry) bool) {
		if kind == "all" || kind == "linked" {
			for h := range n.peers {
				if !yield(entry{h, false}) {
					return
				}
			}
		}
		if kind == "all" || kind == "blocked" {
			for h := range LemmyBlockedHosts(n.inf.Host) {
				if !yield(entry{h, true}) {
					return
				}
			}
		}
	}
	streamJSON(w, func(bw *bufio.Writer) {
		var b []byte
		bw.WriteString(`{"items":[`)
		k, written := 0, 0
		for e := range entries {
			if written == limit {
				break
			}
			if k >= start {
				if written > 0 {
					bw.WriteByte(',')
				}
				b = append(b[:0], `{"instance":{"id":`...)
				b = strconv.AppendInt(b, int64(k+1), 10)
				b = append(b, `,"domain":`...)
				b = appendJSONString(b, e.host)
				b = append(b, `,"published_at":"2025-07-01T10:00:00.000000Z","software":"lemmy","version":"1.0.0"}`...)
				if e.blocked {
					b = append(b, `,"blocked":{"instance_id":`...)
					b = strconv.AppendInt(b, int64(k+1), 10)
					b = append(b, `,"published_at":"2025-08-01T10:00:00.000000Z"}`...)
				}
				b = append(b, '}')
				bw.Write(b)
				written++
			}
			k++
		}
		bw.WriteString(`]`)
		if written == limit {
			bw.WriteString(`,"next_page":"I` + strconv.Itoa(start+limit) + `"`)
		}
		bw.WriteString(`}`)
	})
}

// LemmyBlockedHosts are the instances a simulated Lemmy 1.0 admin blocked:
// names in no peers list, so one discovered can only have come from the
// blocked entries.
func LemmyBlockedHosts(host string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for k := range 3 {
			if !yield(fmt.Sprintf("lemmy-blocked-%d.%s", k, host)) {
				return
			}
		}
	}
}

// PeerTubeRejectedHost is the name of the server whose follow host
// rejected (followers true: it asked to follow host; false: host asked to
// follow it): a valid name, never an instance of the world nor on any peers
// list, so a crawler that records one read follows that were rejected.
func PeerTubeRejectedHost(host string, followers bool) string {
	label, _, _ := strings.Cut(host, ".")
	side := "following"
	if followers {
		side = "follower"
	}
	return "rejected-" + side + "-" + label + "-x0.social"
}

// peerTubeEntries yields one side of a PeerTube node's follows, with their
// states: the peers list splits into even entries following this instance
// and odd ones followed by it, all accepted, and one rejected follow comes
// first on each side. state filters as PeerTube's state parameter does (""
// lists every state).
func peerTubeEntries(n *node, followers bool, state string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		if state == "" || state == "rejected" {
			if !yield(PeerTubeRejectedHost(n.inf.Host, followers), "rejected") {
				return
			}
		}
		if state != "" && state != "accepted" {
			return
		}
		want := 1
		if followers {
			want = 0
		}
		k := 0
		for h := range n.peers {
			if k%2 == want && !yield(h, "accepted") {
				return
			}
			k++
		}
	}
}

func writePeerTube(bw *bufio.Writer, n *node, followers bool, state string, start, count int) {
	total := 0
	var b []byte
	b = append(b, `{"data":[`...)
	written := 0
	for h, st := range peerTubeEntries(n, followers, state) {
		if total >= start && written < count {
			if written > 0 {
				b = append(b, ',')
			}
			follower, following := n.inf.Host, h
			if followers {
				follower, following = h, n.inf.Host
			}
			b = append(b, `{"id":`...)
			b = strconv.AppendInt(b, int64(total+1), 10)
			b = append(b, `,"follower":{"name":"peertube","host":`...)
			b = appendJSONString(b, follower)
			b = append(b, `},"following":{"name":"peertube","host":`...)
			b = appendJSONString(b, following)
			b = append(b, `},"state":"`...)
			b = append(b, st...)
			b = append(b, `","score":20,"createdAt":"2024-01-15T08:00:00.000Z","updatedAt":"2024-01-15T08:00:00.000Z"}`...)
			written++
		}
		total++
	}
	b = append(b, `],"total":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	b = append(b, '}')
	bw.Write(b)
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
