package crawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl/internal/parse"
	"github.com/fediverse-observer/observer/hostname"
)

// CheckOptions are the per-check inputs besides the host.
type CheckOptions struct {
	// Known holds the hosts known before this check; it is only read, and
	// may be shared by concurrent checks. Nil means none.
	Known *KnownSet
	// FetchPeers asks for the peers list (the schedule fetches it at most
	// every crawl.peers_interval).
	FetchPeers bool
	// PeersValidators are the validators the peers list was last served
	// with (from the derived state); when given, a single-GET list
	// (Mastodon's, Lemmy's before 1.0, Mbin's) is asked for conditionally,
	// and a 304 Not Modified costs no parsing (see Check.PeersNotModified).
	// Invalid values are not sent.
	observer.PeersValidators
	// Addr, when valid, is the address every connection to the checked
	// host goes to (the pass resolved it and holds it for this check; see
	// Crawler.Resolve). The address guard still applies to it. A robots.txt
	// redirected to another host is fetched from that host's own address,
	// through the guard (the request still counts against Addr's budget).
	// The zero value resolves the host at each dial, through ConnectTo.
	Addr netip.AddrPort
	// CheckedAt is recorded as the check's time and its discoveries';
	// zero means now.
	CheckedAt time.Time
	// PassID is copied into the check row.
	PassID string
	// Prelude, when set, carries a check's reading of the host before its
	// peers list (robots.txt, NodeInfo, the decision that the host is
	// alive and not opted out) to a later check of the host: a check given
	// an empty one that reaches the peers list keeps its reading there,
	// and a check given one that holds a reading starts from it, at the
	// peers list, without asking for robots.txt and NodeInfo again. Only
	// for a caller that knows those answers of the host have not changed
	// since: the in-process model of the Fediverse
	// (testsupport.FastModelChecker, whose test holds its checks equal to
	// the crawler's). Nil, as in production, reads them at every check.
	Prelude *Prelude
}

// Prelude is a check's reading of a host before its peers list (see
// CheckOptions.Prelude). The zero value holds none; once it holds one it
// is only read, and may be shared by checks of the host.
type Prelude struct {
	kept   bool
	res    observer.Result
	robots *parse.Robots
	steps  []Step
	bytes  int64
	wire   int64
}

// Kept says whether p holds a reading.
func (p *Prelude) Kept() bool { return p.kept }

// Check checks one host and returns what it learnt, with a trace of what it
// did. It depends only on its arguments, the Crawler's configuration and the
// network, so it can as well run in a separate sandboxed process.
func (c *Crawler) Check(ctx context.Context, host observer.Host, opts CheckOptions) (observer.Result, Trace) {
	start := time.Now()
	at := opts.CheckedAt
	if at.IsZero() {
		at = start
	}
	res := observer.Result{Check: observer.Check{Host: host, CheckedAt: at.UTC(), PassID: opts.PassID}}

	ctx, cancel := context.WithTimeout(ctx, c.opts.CheckTimeout)
	defer cancel()
	wire := &wireMeter{max: c.opts.MaxCheckWireBytes}
	client, tr := c.newClient(opts.Addr, wire)
	if tr != nil {
		defer tr.CloseIdleConnections()
	}
	f := &fetcher{c: c, client: client, host: host, wire: wire}
	defer f.closeOther()
	ck := &check{c: c, f: f, res: &res, opts: opts}
	ck.run(ctx)

	// An error text can quote a server (a certificate's names, a
	// Location): it is stored as any other untrusted text is.
	res.Check.Error = observer.CleanText(res.Check.Error, observer.MaxErrorRunes)
	res.Bytes = f.bytes
	res.Check.WireBytes = wire.Bytes()
	res.Check.DurationMS = time.Since(start).Milliseconds()
	c.opts.Logger.Debug("check done", "host", host, "outcome", res.Check.Outcome, "error", res.Check.Error,
		"steps", len(f.steps), "bytes", res.Bytes, "ms", res.Check.DurationMS)
	return res, Trace{Steps: f.steps}
}

// maxDecisionBytes bounds the text of a check's decision (set), as the
// trace shows it too; being under observer.MaxErrorRunes, a decision is
// never cut twice.
const maxDecisionBytes = 300

// check is the state of one check in progress.
type check struct {
	c    *Crawler
	f    *fetcher
	res  *observer.Result
	opts CheckOptions
	// robotsStatus is the status of a robots.txt that was read, which is
	// the deciding response when it opts the host out.
	robotsStatus int
	// peersLeft is what the peers list may still read, over all its
	// requests (see peersRequest).
	peersLeft int64
	// peersRequests counts the peers list's requests, redirects included,
	// which a paged list may make at most MaxPeerPages of.
	peersRequests int
}

func (k *check) set(o observer.Outcome, status int, format string, args ...any) {
	k.res.Check.Outcome = o
	k.res.Check.HTTPStatus = status
	k.res.Check.Error = clip(fmt.Sprintf(format, args...), maxDecisionBytes)
	if k.res.Check.Error != "" {
		k.f.note("decided %s: %s", o, k.res.Check.Error)
	} else {
		k.f.note("decided %s", o)
	}
}

// fail records a request error's outcome.
func (k *check) fail(what string, err error) {
	o, text := classify(err)
	k.set(o, 0, "%s: %s", what, text)
}

func (k *check) run(ctx context.Context) {
	switch p := k.opts.Prelude; {
	case p != nil && p.kept:
		k.resume(p)
	case !k.prelude(ctx):
		return
	case p != nil:
		k.keep(p)
	}
	if k.opts.FetchPeers {
		k.peers(ctx)
	} else {
		k.f.note("peers not due in this pass")
	}
}

// prelude reads what a check reads before the peers list, and says
// whether the check goes on to it: the host is alive, allowed and not
// opted out.
func (k *check) prelude(ctx context.Context) bool {
	if !k.readRobots(ctx) {
		return false
	}
	if !k.allowed("/.well-known/nodeinfo") {
		return false
	}
	links, status, ok := k.wellKnown(ctx)
	if !ok {
		return false
	}
	if !k.nodeInfo(ctx, links, status) {
		return false
	}
	return !k.optedOut(ctx)
}

// keep keeps the check's reading so far in p, unless it discovered a host
// (a redirect), which the known hosts decide and the check's time dates.
func (k *check) keep(p *Prelude) {
	if len(k.res.Discoveries) > 0 || k.res.Check.MovedTo != "" {
		return
	}
	*p = Prelude{kept: true, res: *k.res, robots: k.f.robots, steps: slices.Clone(k.f.steps), bytes: k.f.bytes, wire: k.f.wire.Bytes()}
}

// resume takes p's reading as this check's so far: its time and pass
// stay the check's own.
func (k *check) resume(p *Prelude) {
	at, pass := k.res.Check.CheckedAt, k.res.Check.PassID
	*k.res = p.res
	k.res.Check.CheckedAt, k.res.Check.PassID = at, pass
	k.f.robots = p.robots
	k.f.steps = slices.Clone(p.steps)
	k.f.bytes = p.bytes
	k.f.wire.n.Add(p.wire)
}

// readRobots applies RFC 9309: 2xx is parsed, 4xx (no robots.txt) allows
// everything, 5xx and 429 disallow everything for this pass, and an
// unreachable robots.txt means the host is not checked. Redirects are
// followed, to another host's /robots.txt too (section 2.3.1.2), and what
// they lead to applies to this host. A redirect that is not followed
// disallows everything for this pass, as 5xx does: the robots.txt is there
// but may not be read, and it may well be an opt-out.
func (k *check) readRobots(ctx context.Context) bool {
	status, body, stop, err := k.f.getBytes(ctx, request{url: k.f.url("/robots.txt"), accept: "text/plain", cap: capRobots, robotsTxt: true})
	// robots.txt is the only request that may go to another host: close
	// that connection now rather than at the end of the check.
	k.f.closeOther()
	switch {
	case errors.Is(err, errTooManyRedirects):
		k.f.note("robots.txt: too many redirects; treated as unavailable, so all allowed (RFC 9309)")
		k.f.robots = parse.AllowAll
	case err != nil:
		k.fail("robots.txt", err)
		return false
	case stop != nil && stop.IP && stop.Blocked:
		// Recorded as a redirect to such an address is anywhere else.
		k.set(observer.OutcomeBlockedAddress, status, "robots.txt redirects to a non-public address (%s), not followed", stop.URL)
		return false
	case stop != nil:
		// Not https, not a host name, or another host's path other than
		// /robots.txt: following it would let a host steer the crawler to
		// URLs of its choosing, and taking it for a missing robots.txt
		// would ignore an opt-out served from behind a CDN's redirect.
		k.set(observer.OutcomeHTTPError, status, "robots.txt redirects to %s, not followed: disallowed for this pass", stop.URL)
		return false
	case status >= 200 && status <= 299:
		k.f.robots = parse.ParseRobots(body, k.c.opts.ProductToken)
		k.robotsStatus = status
	case status == http.StatusTooManyRequests || status >= 500:
		k.set(observer.OutcomeHTTPError, status, "robots.txt %d: disallowed for this pass", status)
		return false
	default:
		k.f.note("robots.txt %d: no robots.txt, all allowed", status)
		k.f.robots = parse.AllowAll
	}
	return true
}

func (k *check) allowed(path string) bool {
	if k.f.robots.Allowed(path) {
		k.f.note("robots.txt allows %s", clip(path, 200))
		return true
	}
	k.set(observer.OutcomeOptedOut, k.robotsStatus, "robots.txt disallows %s for %s", clip(path, 200), k.c.opts.ProductToken)
	return false
}

func pathOf(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}

// wellKnown fetches the NodeInfo discovery document and returns its links
// in order of preference, with the status it was served with.
func (k *check) wellKnown(ctx context.Context) ([]parse.Link, int, bool) {
	u := k.f.url("/.well-known/nodeinfo")
	status, body, stop, err := k.f.getBytes(ctx, request{url: u, accept: "application/json", cap: capWellKnown})
	if !k.documentStatus("/.well-known/nodeinfo", status, stop, err) {
		return nil, status, false
	}
	links, err := parse.ParseWellKnown(body)
	if err != nil {
		k.set(observer.OutcomeNotFediverse, status, "/.well-known/nodeinfo: %v", err)
		return nil, status, false
	}
	return links, status, true
}

// linkURL resolves a NodeInfo link against the discovery document's URL
// and holds it to the rules a link must meet to be fetched; otherwise it
// says why not.
func (k *check) linkURL(link parse.Link) (*url.URL, string) {
	href, err := k.f.url("/.well-known/nodeinfo").Parse(link.Href)
	if err != nil {
		return nil, fmt.Sprintf("nodeinfo href %q is not a URL", clip(link.Href, 200))
	}
	// A plain http link to this host is asked for over https: servers
	// that build it from their configured scheme (GoToSocial's protocol,
	// Lemmy's tls_enabled, Pixelfed's APP_URL) send one when that is set
	// to http behind a TLS proxy, and the well-known itself came over https.
	upgraded := false
	if href.Scheme == "http" && (href.Port() == "" || href.Port() == "80") {
		href.Scheme, href.Host, upgraded = "https", href.Hostname(), true
	}
	// A rule carried over from the reference crawler of the design document
	// (../shared/seeds/architecture.md), against CNAME and redirect tricks: the document must
	// be on the host we were asked about, or the host counts as dead.
	if h, err := hostname.Normalize(href.Hostname()); err != nil || h != k.f.host ||
		(href.Port() != "" && href.Port() != "443") || href.User != nil {
		return nil, fmt.Sprintf("nodeinfo href points to another host (%s), not fetched", clip(href.Host, 200))
	}
	if href.Scheme != "https" {
		return nil, fmt.Sprintf("nodeinfo href is not https (%s), not fetched", clip(href.Scheme, 20))
	}
	if upgraded {
		k.f.note("nodeinfo href is plain http; asked for over https")
	}
	// Canonical form of the host, as for a followed redirect: the fetcher
	// knows the checked host (and its pinned address) by that form alone.
	href.Host = string(k.f.host)
	return href, ""
}

// documentStatus decides what a failed fetch of robots-allowed NodeInfo
// documents means; it reports whether there is a 2xx body to parse.
func (k *check) documentStatus(what string, status int, stop *redirectStop, err error) bool {
	switch {
	case err != nil:
		k.fail(what, err)
		return false
	case stop != nil:
		k.redirected(what, stop)
		return false
	case status == http.StatusGone:
		k.set(observer.OutcomeOptedOut, status, "%s: 410 Gone", what)
		return false
	case status == http.StatusNotFound:
		k.set(observer.OutcomeNotFediverse, status, "%s: 404 Not Found", what)
		return false
	case status < 200 || status > 299:
		k.set(observer.OutcomeHTTPError, status, "%s: HTTP %d", what, status)
		return false
	}
	return true
}

// redirected records a redirect that was not followed.
func (k *check) redirected(what string, s *redirectStop) {
	switch {
	case s.Disallowed != "":
		// As if the target had been asked for directly.
		k.set(observer.OutcomeOptedOut, k.robotsStatus, "robots.txt disallows %s for %s (%s redirects there)", s.Disallowed, k.c.opts.ProductToken, what)
	case s.IP && s.Blocked:
		k.set(observer.OutcomeBlockedAddress, s.Status, "%s redirects to a non-public address (%s), not followed", what, s.URL)
	case s.HostErr != nil:
		k.set(observer.OutcomeError, s.Status, "%s redirects to an invalid host (%s: %v), not followed", what, s.URL, s.HostErr)
	case s.Host == k.f.host && s.HTTP:
		k.set(observer.OutcomeHTTPError, s.Status, "%s redirects to plain http (%s), not followed", what, s.URL)
	case s.Host == k.f.host:
		k.set(observer.OutcomeError, s.Status, "%s redirects to another port or with credentials (%s), not followed", what, s.URL)
	case s.Status == http.StatusMovedPermanently || s.Status == http.StatusPermanentRedirect:
		k.res.Check.MovedTo = s.Host
		k.set(observer.OutcomeMoved, s.Status, "%s: %d to %s", what, s.Status, s.URL)
		if !k.opts.Known.Has(s.Host) {
			k.res.Discoveries = append(k.res.Discoveries, observer.Discovery{
				Host: s.Host, DiscoveredAt: k.res.Check.CheckedAt, Via: observer.ViaRedirect,
			})
		}
	default:
		k.res.Check.MovedTo = s.Host
		k.set(observer.OutcomeMoving, s.Status, "%s: %d to %s", what, s.Status, s.URL)
	}
}

// RecordedSchemaVersion reports whether v is a NodeInfo schema version a
// check can record as nodeinfo_version: "" (no NodeInfo read) or a version
// the crawler understands, as that is the schema of the link it followed.
// The sandbox refuses a checker that reports another.
func RecordedSchemaVersion(v string) bool {
	return v == "" || slices.Contains(parse.SchemaVersions, v)
}

// RecordedDocumentVersion reports whether v is a NodeInfo document's own
// version as a check records it: clean text of at most
// parse.MaxDocumentVersionRunes.
func RecordedDocumentVersion(v string) bool {
	return observer.CleanText(v, parse.MaxDocumentVersionRunes) == v
}

// RecordedUnusableFields reports whether fields is a list of unusable
// NodeInfo fields as a check records it: known field paths, each once, in
// parse.UnusableFields' order.
func RecordedUnusableFields(fields []string) bool {
	next := 0
	for _, f := range fields {
		i := slices.Index(parse.UnusableFields[next:], f)
		if i < 0 {
			return false
		}
		next += i + 1
	}
	return true
}

// maxNodeInfoLinks bounds the NodeInfo documents one check asks for: a
// discovery document may list a link per schema version, and a check tries
// them in order of preference only until one yields a usable document.
const maxNodeInfoLinks = 3

// nodeInfo reads the first usable NodeInfo document the links lead to. A
// link that cannot be followed (another host, not https), a document that
// is not there (404, another status that cannot be used) or not usable
// (no software name) passes on to the next link; what says more about the
// host than about one document ends the check: an opt-out (robots.txt,
// 410 Gone), a redirect off the document, a network failure, an oversized
// body. When no link yields a document, the first link's failure is
// recorded: it is the one the host prefers.
func (k *check) nodeInfo(ctx context.Context, links []parse.Link, wellKnownStatus int) bool {
	var first *observer.Check
	requests := 0
	for i, link := range links {
		if i > 0 {
			if first == nil {
				saved := k.res.Check
				first = &saved
			}
			if requests == maxNodeInfoLinks {
				k.f.note("nodeinfo: %d links tried; the other %d are not", requests, len(links)-i)
				break
			}
			k.f.note("trying the next nodeinfo link")
		}
		href, why := k.linkURL(link)
		if why != "" {
			k.set(observer.OutcomeNotFediverse, wellKnownStatus, "%s", why)
			continue
		}
		k.f.note("NodeInfo %s at %s", link.Version, clip(href.String(), 300))
		if !k.allowed(pathOf(href)) {
			return false
		}
		requests++
		status, body, stop, err := k.f.getBytes(ctx, request{url: href, accept: "application/json", cap: capNodeInfo})
		if !k.documentStatus("nodeinfo", status, stop, err) {
			if o := k.res.Check.Outcome; o != observer.OutcomeNotFediverse && o != observer.OutcomeHTTPError {
				return false
			}
			continue
		}
		ni, err := parse.ParseNodeInfo(body)
		if err != nil {
			k.set(observer.OutcomeNotFediverse, status, "invalid nodeinfo: %v", err)
			continue
		}
		k.record(link, ni)
		k.set(observer.OutcomeAlive, status, "")
		return true
	}
	if first != nil {
		k.res.Check.Outcome, k.res.Check.HTTPStatus, k.res.Check.Error = first.Outcome, first.HTTPStatus, first.Error
		k.f.note("no nodeinfo link yielded a usable document; recorded the first link's: %s", first.Outcome)
	}
	return false
}

// record keeps what a usable NodeInfo document said.
func (k *check) record(link parse.Link, ni parse.NodeInfo) {
	c := &k.res.Check
	c.Software, c.Version = ni.Software, ni.SoftwareVersion
	c.NodeInfoVersion, c.NodeInfoDocumentVersion = link.Version, ni.Version
	if ni.Version != "" && ni.Version != link.Version {
		k.f.note("nodeinfo says version %q, its link schema %s: both recorded", ni.Version, link.Version)
	}
	c.Users, c.ActiveMonth, c.ActiveHalfyear, c.LocalPosts = ni.Users, ni.ActiveMonth, ni.ActiveHalfyear, ni.LocalPosts
	c.OpenRegistrations = ni.OpenRegistrations
	c.Name, c.Description = ni.Name, ni.Description
	c.UnusableFields = ni.Unusable
	if len(ni.Unusable) > 0 {
		k.f.note("nodeinfo fields not usable, recorded as unknown: %s", strings.Join(ni.Unusable, ", "))
	}
}

// Peers list families. The Mastodon endpoint is the default: many servers
// implement it whatever they are called.
type family int

const (
	familyMastodon family = iota
	familyMisskey
	familyLemmy
	familyPeerTube
	familyMbin
)

var families = map[string]family{
	"misskey": familyMisskey, "sharkey": familyMisskey, "firefish": familyMisskey,
	"iceshrimp": familyMisskey, "cherrypick": familyMisskey, "foundkey": familyMisskey,
	"calckey": familyMisskey, "meisskey": familyMisskey, "catodon": familyMisskey,
	"lemmy":    familyLemmy,
	"peertube": familyPeerTube,
	// Mbin (and kbin, which it forked) has no /api/v1/instance/peers; its
	// list is /api/federated (MbinOrg/mbin config/mbin_routes/instance_api.yaml).
	"mbin": familyMbin, "kbin": familyMbin,
}

const pageSize = 100

// peers fetches the peers list. Whatever happens, the host stays alive: a
// missing or broken list only means no peers were recorded.
func (k *check) peers(ctx context.Context) {
	pl := NewPeerList(k.opts.Known, k.c.opts.MaxNewPeers)
	k.peersLeft = capPeers
	// A host listing itself is not a discovery, even when the caller's
	// known set does not have it (observer check).
	pl.seen.Add(k.f.host)
	var fetched bool
	var status int
	var err error
	// Paged lists (Misskey's POST, PeerTube's and Lemmy 1.0's pages) are not asked
	// conditionally: their pages have no validators worth keeping.
	var cond *validators
	switch families[k.res.Check.Software] {
	case familyMisskey:
		fetched, status, err = k.misskeyPeers(ctx, pl)
	case familyLemmy:
		if lemmyAPIv4(k.res.Check.Version) {
			fetched, status, err = k.lemmyPeers(ctx, pl)
			break
		}
		cond = newValidators(k.opts.PeersValidators)
		fetched, status, err = k.simplePeers(ctx, pl, "/api/v3/federated_instances", pl.ReadLemmy, cond)
	case familyPeerTube:
		fetched, status, err = k.peerTubePeers(ctx, pl)
	case familyMbin:
		cond = newValidators(k.opts.PeersValidators)
		fetched, status, err = k.simplePeers(ctx, pl, "/api/federated", pl.ReadMbin, cond)
	default:
		cond = newValidators(k.opts.PeersValidators)
		fetched, status, err = k.simplePeers(ctx, pl, "/api/v1/instance/peers", pl.ReadMastodon, cond)
	}
	c := &k.res.Check
	switch {
	case err == nil && status == http.StatusNotModified:
		// Unchanged since the validators were issued: nothing read,
		// nothing discovered. PeersFetched stays false because PeersCount
		// describes no list read in this check.
		c.PeersNotModified = true
		c.PeersValidators = cond.kept
		k.f.note("peers list not modified (304); not read")
		return
	case err != nil:
		_, text := classify(err)
		c.Error = "peers: " + text
		k.f.note("peers list rejected (%s); host stays alive", text)
		return
	case !fetched:
		if status != 0 {
			k.f.note("no peers list available (HTTP %d)", status)
		}
		return
	}
	c.PeersFetched = true
	if cond != nil {
		// Only a list that was read whole may be skipped next time.
		c.PeersValidators = cond.kept
	}
	c.PeersCount = pl.Valid
	c.NewPeersCount = int64(len(pl.New))
	for _, h := range pl.New {
		k.res.Discoveries = append(k.res.Discoveries, observer.Discovery{Host: h, DiscoveredAt: c.CheckedAt, Via: string(c.Host)})
	}
	k.f.note("peers: %d valid entries, %d new, %d invalid dropped", pl.Valid, len(pl.New), pl.Junk)
	if pl.Unseen > int64(len(pl.New)) {
		k.res.OverListCap = pl.Unseen - int64(len(pl.New))
		k.f.note("peers: %d further new entries (repeats included) beyond the cap of %d were not kept", pl.Unseen-int64(len(pl.New)), len(pl.New))
	}
}

// peersStatus interprets a peers endpoint's answer: a 2xx means there is a
// list; 401/403/404/410 (and redirects off the host) mean none is offered.
func (k *check) peersStatus(path string, status int, stop *redirectStop, err error) (bool, error) {
	switch {
	case err != nil:
		return false, err
	case stop != nil && stop.Disallowed != "":
		k.f.note("robots.txt disallows %s (%s redirects there); peers not fetched", stop.Disallowed, path)
		return false, nil
	case stop != nil:
		k.f.note("%s redirects to %s, not followed", path, stop.URL)
		return false, nil
	case status >= 200 && status <= 299:
		return true, nil
	case status == 401 || status == 403 || status == 404 || status == 410:
		return false, nil
	}
	return false, fmt.Errorf("%s: HTTP %d", path, status)
}

// peersRequest makes one request for the peers list. All of the list's
// requests share its one cap, so a paged list (up to MaxPeerPages pages,
// each of which could be near the cap) cannot make a check read, parse and
// remember more than a single list could; over the cap, the list is too
// large, as a single list is.
func (k *check) peersRequest(ctx context.Context, r request, read func(io.Reader) error) (int, *redirectStop, error) {
	r.cap = max(k.peersLeft, 0)
	before, steps := k.f.bytes, len(k.f.steps)
	status, stop, err := k.f.do(ctx, r, read)
	k.peersLeft -= k.f.bytes - before
	k.peersRequests += len(k.f.steps) - steps
	var tooLarge *TooLargeError
	if errors.As(err, &tooLarge) && r.cap < capPeers {
		// Name the list's cap, not what was left of it for this page.
		tooLarge.Cap, tooLarge.Pages = capPeers, true
	}
	return status, stop, err
}

func (k *check) peersAllowed(path string) bool {
	if k.f.robots.Allowed(path) {
		return true
	}
	k.f.note("robots.txt disallows %s; peers not fetched", path)
	return false
}

func (k *check) simplePeers(ctx context.Context, pl *PeerList, path string, read func(io.Reader) error, cond *validators) (bool, int, error) {
	if !k.peersAllowed(path) {
		return false, 0, nil
	}
	status, stop, err := k.peersRequest(ctx, request{method: http.MethodGet, url: k.f.url(path), accept: "application/json", cond: cond}, read)
	if err == nil && stop == nil && status == http.StatusNotModified {
		if cond.sent == (observer.PeersValidators{}) {
			return false, status, fmt.Errorf("%s: HTTP 304 to an unconditional request", path)
		}
		return false, status, nil
	}
	ok, err := k.peersStatus(path, status, stop, err)
	return ok, status, err
}

// pagedList is a peers list read a page at a time.
type pagedList struct {
	path string // the list's path, for messages
	// page gives the path and query of page i (from 0), which robots.txt
	// is asked about as each page is fetched ("Disallow: /*?" is common),
	// and the body of its POST (nil: a GET).
	page func(i int) (target string, body []byte)
	// read reads one page into the peer list and says whether it was the
	// last.
	read func(r io.Reader) (last bool, err error)
	name func(i int) string // "page 2", for messages
}

// pagedPeers reads a paged list until its last page, or until the check
// has made MaxPeerPages requests for peers. Redirects count against that
// cap: a host that redirects every page five times must not multiply the
// requests a list costs. A first page that is disallowed or unavailable
// means no list (false, no error); a later one, a list not read whole (an
// error). Reaching the cap before the first page (another list of the
// same host spent it) is no list either.
func (k *check) pagedPeers(ctx context.Context, l pagedList) (bool, int, error) {
	status := 0
	for i := 0; ; i++ {
		if k.peersRequests >= k.c.opts.MaxPeerPages {
			if i == 0 {
				return false, 0, nil
			}
			k.f.note("peers: stopped after %d requests", k.peersRequests)
			return true, status, nil
		}
		target, body := l.page(i)
		if !k.peersAllowed(target) {
			if i == 0 {
				return false, 0, nil
			}
			return false, status, fmt.Errorf("%s: %s disallowed by robots.txt", l.path, l.name(i))
		}
		r := request{method: http.MethodGet, url: k.f.url(target), accept: "application/json"}
		if body != nil {
			r.method, r.body = http.MethodPost, body
		}
		var last bool
		var stop *redirectStop
		var err error
		status, stop, err = k.peersRequest(ctx, r, func(r io.Reader) error {
			var err error
			last, err = l.read(r)
			return err
		})
		ok, err := k.peersStatus(l.path, status, stop, err)
		switch {
		case err != nil:
			return false, status, err
		case !ok && i == 0:
			return false, status, nil
		case !ok:
			return false, status, fmt.Errorf("%s: %s unavailable (HTTP %d)", l.path, l.name(i), status)
		case last:
			return true, status, nil
		}
	}
}

// pageNumber names page i as Misskey's and Lemmy's lists count them.
func pageNumber(i int) string { return "page " + strconv.Itoa(i+1) }

func (k *check) misskeyPeers(ctx context.Context, pl *PeerList) (bool, int, error) {
	const path = "/api/federation/instances"
	return k.pagedPeers(ctx, pagedList{path: path, name: pageNumber,
		page: func(i int) (string, []byte) {
			// Without "blocked": false, Misskey lists the instances its
			// admin blocked too (federation/instances.ts filters only when
			// blocked is a boolean); the parser also drops entries marked
			// isBlocked, for forks that ignore the parameter.
			return path, []byte(`{"limit":` + strconv.Itoa(pageSize) + `,"offset":` + strconv.Itoa(i*pageSize) + `,"blocked":false}`)
		},
		read: func(r io.Reader) (bool, error) {
			n, err := pl.ReadMisskeyPage(r)
			return n < pageSize, err
		},
	})
}

// lemmyAPIv4 reports whether a Lemmy version (NodeInfo's software.version,
// "1.0.0-alpha.5", "v0.19.8-beta.1") is 1.0 or later, which lists its
// federated instances only under /api/v4.
func lemmyAPIv4(version string) bool {
	major, _, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	n, err := strconv.Atoi(major)
	return err == nil && n >= 1
}

// lemmyPeers reads Lemmy 1.0's federated instances, a page of at most 50
// (Lemmy's FETCH_LIMIT_MAX) at a time, each page naming the next by a
// cursor. kind=linked leaves out the instances the admin blocked.
func (k *check) lemmyPeers(ctx context.Context, pl *PeerList) (bool, int, error) {
	const path, limit = "/api/v4/federated_instances", 50
	var cursor string
	return k.pagedPeers(ctx, pagedList{path: path, name: pageNumber,
		page: func(int) (string, []byte) {
			q := path + "?kind=linked&limit=" + strconv.Itoa(limit)
			if cursor != "" {
				q += "&page_cursor=" + url.QueryEscape(cursor)
			}
			return q, nil
		},
		read: func(r io.Reader) (bool, error) {
			n, next, err := pl.ReadLemmyPage(r)
			// A page shorter than asked is the last (Lemmy then sends no
			// next_page); a cursor that does not move would loop.
			last := n < limit || next == "" || next == cursor
			cursor = next
			return last, err
		},
	})
}

// peerTubePeers reads PeerTube's followers and then its following, each a
// paged list; either may be hidden.
func (k *check) peerTubePeers(ctx context.Context, pl *PeerList) (bool, int, error) {
	got := false
	status := 0
	for _, side := range []struct{ path, field string }{
		{"/api/v1/server/followers", "follower"},
		{"/api/v1/server/following", "following"},
	} {
		var start int
		ok, st, err := k.pagedPeers(ctx, pagedList{path: side.path,
			name: func(i int) string { return "page at " + strconv.Itoa(i*pageSize) },
			page: func(i int) (string, []byte) {
				start = i * pageSize
				// Without state=accepted PeerTube lists pending and
				// rejected follows too
				// (server/core/controllers/api/server/follows.ts); a
				// rejected follow is no federation.
				return fmt.Sprintf("%s?start=%d&count=%d&state=accepted", side.path, start, pageSize), nil
			},
			read: func(r io.Reader) (bool, error) {
				n, total, err := pl.ReadPeerTubePage(r, side.field)
				return n < pageSize || int64(start+n) >= total, err
			},
		})
		if err != nil {
			return false, st, err
		}
		got = got || ok
		if st != 0 {
			status = st
		}
	}
	return got, status, nil
}
