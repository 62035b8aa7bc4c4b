package crawl

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl/internal/parse"
	"github.com/fediverse-observer/observer/hostname"
)

// Body caps. Each applies twice: to the bytes of the body as they come off
// the connection (before gzip decoding), so a stream that decodes to little
// or nothing (empty gzip members, forever) is cut off like an endless body,
// and to the decoded bytes, so a compressed bomb is too.
const (
	capRobots    = 500 << 10
	capWellKnown = 64 << 10
	capNodeInfo  = 256 << 10
	capPeers     = 32 << 20
)

// maxRedirects is how many redirects one request follows (RFC 9309 section
// 2.3.1.2 asks for at least five for robots.txt).
const maxRedirects = 5

// TooLargeError reports a response body over its cap, or a check over its
// cap on the bytes read from the network.
type TooLargeError struct {
	URL string
	Cap int64
	// Pages is set when the cap is a paged peers list's, over all its
	// pages.
	Pages bool
	// Wire is set when the cap is the check's, on the bytes read from its
	// connections (Options.MaxCheckWireBytes).
	Wire bool
}

func (e *TooLargeError) Error() string {
	switch {
	case e.Wire:
		return fmt.Sprintf("check over %s cap on bytes read from the network", sizeText(e.Cap))
	case e.Pages:
		return fmt.Sprintf("list over %s cap across its pages", sizeText(e.Cap))
	}
	return fmt.Sprintf("body over %s cap", sizeText(e.Cap))
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// capReader counts bytes and fails once more than max are offered; total,
// if set, adds them up across readers.
type capReader struct {
	r     io.Reader
	n     int64
	max   int64
	url   string
	total *int64
}

func (c *capReader) count(n int) {
	c.n += int64(n)
	if c.total != nil {
		*c.total += int64(n)
	}
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n >= c.max {
		// At the cap: one more byte means too large; EOF means exactly
		// at the cap, which is fine.
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			c.count(n)
			return 0, &TooLargeError{URL: c.url, Cap: c.max}
		}
		return 0, err
	}
	if int64(len(p)) > c.max-c.n {
		p = p[:c.max-c.n]
	}
	n, err := c.r.Read(p)
	c.count(n)
	return n, err
}

// acceptEncoding is what the crawler asks for: the one content coding it
// decodes (decodeBody).
const acceptEncoding = "gzip"

// decodeBody returns the decoded body of a response whose coded body, as
// read off the connection and capped, is raw. The gzip reader is made at
// the first read.
func decodeBody(encoding string, raw io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		return raw, nil
	case "gzip", "x-gzip":
		return &gunzipReader{raw: raw}, nil
	}
	return nil, fmt.Errorf("content encoding %q was not asked for (the crawler decodes gzip only)", clip(encoding, 40))
}

type gunzipReader struct {
	raw io.Reader
	z   *gzip.Reader
	err error
}

func (g *gunzipReader) Read(p []byte) (int, error) {
	if g.z == nil && g.err == nil {
		g.z, g.err = gzip.NewReader(g.raw)
	}
	if g.err != nil {
		return 0, g.err
	}
	return g.z.Read(p)
}

// redirectStop is a redirect the fetcher did not follow: to another host, to
// plain HTTP, to something that is not a valid host, or to a path of this
// host that robots.txt disallows.
type redirectStop struct {
	Status  int
	URL     string        // the Location, resolved
	Host    observer.Host // normalised target host, when valid
	HostErr error         // why the target is not a valid host
	IP      bool          // the target is an IP literal
	Blocked bool          // ... that the address guard would refuse
	HTTP    bool          // the target uses http://
	// Disallowed is the target's path and query when the target is on the
	// checked host and robots.txt disallows it.
	Disallowed string
}

// fetcher makes the requests of one check and records them in its trace.
type fetcher struct {
	c      *Crawler
	client *http.Client
	host   observer.Host // the checked host
	// robots is asked about every redirect target on the checked host
	// before it is followed, so a redirect cannot lead to a path robots.txt
	// disallows. Nil (while robots.txt itself is read) allows everything.
	robots *parse.Robots
	// other is the client for hosts other than the checked one, made when
	// first needed (a robots.txt redirected to another host): the check's
	// client may be pinned to the checked host's address, which is not the
	// other host's. It dials as an unpinned check does, through the address
	// guard.
	other   *http.Client
	otherTr *http.Transport
	steps   []Step
	bytes   int64      // decoded body bytes
	wire    *wireMeter // bytes read from the network, the clients' both
}

// clientFor returns the client for requests to u.
func (f *fetcher) clientFor(u *url.URL) *http.Client {
	if u.Hostname() == string(f.host) {
		return f.client
	}
	if f.other == nil {
		f.other, f.otherTr = f.c.newClient(netip.AddrPort{}, f.wire)
	}
	return f.other
}

// closeOther closes the other hosts' client's idle connection, if any.
func (f *fetcher) closeOther() {
	if f.otherTr != nil {
		f.otherTr.CloseIdleConnections()
	}
}

func (f *fetcher) note(format string, args ...any) {
	f.steps = append(f.steps, Step{Note: fmt.Sprintf(format, args...)})
}

// request describes one logical request.
type request struct {
	method string
	url    *url.URL
	body   []byte // POST body, JSON
	accept string
	cap    int64
	// cond, if set, makes the request conditional and receives the
	// response's validators (see conditional.go).
	cond *validators
	// robotsTxt also follows redirects to /robots.txt on other hosts (RFC
	// 9309 section 2.3.1.2: a robots.txt reached within five redirects, even
	// across hosts, applies to the host asked). Only that path, so a host
	// cannot make the crawler fetch chosen URLs of other hosts.
	robotsTxt bool
}

// do performs r, following same-host redirects to paths robots.txt allows
// (and, for robots.txt, redirects to other hosts' robots.txt). On a 2xx
// response it calls read with the capped body; other statuses are returned
// without reading the body. A redirect that is not followed is returned as a
// *redirectStop.
func (f *fetcher) do(ctx context.Context, r request, read func(io.Reader) error) (int, *redirectStop, error) {
	u := r.url
	method, body := r.method, r.body
	for hop := 0; ; hop++ {
		status, loc, err := f.once(ctx, method, u, body, r, read)
		if err != nil || loc == "" {
			return status, nil, err
		}
		target, perr := u.Parse(loc)
		if perr != nil {
			f.note("unusable Location %q", clip(loc, 200))
			return status, &redirectStop{Status: status, URL: clip(loc, 200), HostErr: errors.New("unparsable Location")}, nil
		}
		host, stop := f.classifyRedirect(status, target, r.robotsTxt)
		if stop != nil {
			return status, stop, nil
		}
		if hop >= maxRedirects {
			return status, nil, errTooManyRedirects
		}
		// Canonical form of the host: no port, lower case.
		target.Host = string(host)
		if p := pathOf(target); host == f.host && !f.robots.Allowed(p) {
			// Ends the fetch as asking for p would; the caller says so.
			stop := &redirectStop{Status: status, URL: clip(target.String(), 300), Host: host, Disallowed: clip(p, 200)}
			return status, stop, nil
		}
		if host == f.host {
			f.note("same-host redirect to %s followed", clip(target.String(), 300))
		} else {
			f.note("robots.txt redirect to %s followed", clip(target.String(), 300))
		}
		if status == http.StatusSeeOther || (status != http.StatusTemporaryRedirect && status != http.StatusPermanentRedirect && method == http.MethodPost) {
			method, body = http.MethodGet, nil
		}
		u = target
	}
}

// classifyRedirect returns the target's normalised host and a nil stop when
// target may be followed: https, the default port, no credentials, and the
// same host, or with robotsTxt another host's /robots.txt.
func (f *fetcher) classifyRedirect(status int, target *url.URL, robotsTxt bool) (observer.Host, *redirectStop) {
	stop := &redirectStop{Status: status, URL: clip(target.Redacted(), 300)}
	h := target.Hostname()
	if ip, err := parseIPLiteral(h); err == nil {
		stop.IP = true
		stop.Blocked = f.c.addrBlocked(ip)
		stop.HostErr = errors.New("is an IP address, not a host name")
		return "", stop
	}
	host, err := hostname.Normalize(h)
	if err != nil {
		stop.HostErr = err
		return "", stop
	}
	stop.Host = host
	if target.Scheme != "https" {
		stop.HTTP = true
		return "", stop
	}
	if (target.Port() != "" && target.Port() != "443") || target.User != nil {
		return "", stop
	}
	otherRobots := robotsTxt && target.EscapedPath() == "/robots.txt" && target.RawQuery == "" && !target.ForceQuery
	if host != f.host && !otherRobots {
		return "", stop
	}
	return host, nil
}

// once sends one request; it returns the status and, for a redirect, the
// Location.
func (f *fetcher) once(ctx context.Context, method string, u *url.URL, body []byte, r request, read func(io.Reader) error) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, f.c.opts.RequestTimeout)
	defer cancel()
	// abort ends the request early: drain uses it to stop waiting on a
	// slow body.
	ctx, abort := context.WithCancel(ctx)
	defer abort()
	us := u.String()
	step := Step{Method: method, URL: us}
	defer func() { f.steps = append(f.steps, step) }()

	var rb io.Reader
	if body != nil {
		rb = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, us, rb)
	if err != nil {
		step.Error = err.Error()
		return 0, "", err
	}
	req.Header.Set("User-Agent", f.c.opts.UserAgent)
	// Set here, the transport leaves the body coded for decodeBody, which
	// decodes it after its coded bytes are capped.
	req.Header.Set("Accept-Encoding", acceptEncoding)
	if r.accept != "" {
		req.Header.Set("Accept", r.accept)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	r.cond.setHeaders(req.Header)
	resp, err := f.clientFor(u).Do(req)
	if err != nil {
		step.Error = errorText(err)
		return 0, "", err
	}
	defer resp.Body.Close()
	step.Status = resp.StatusCode
	if resp.StatusCode < 100 {
		// Go's client takes any three digits; the result's schema (and a
		// sandboxed checker's orchestrator) does not, and no server that
		// means it sends one.
		err := fmt.Errorf("invalid HTTP status %03d", resp.StatusCode)
		step.Error = err.Error()
		return 0, "", err
	}
	if resp.StatusCode < 200 {
		// A 1xx that reaches here is a 101 Switching Protocols, which the
		// crawler never asks for: its body is the raw connection, which no
		// deadline closes, so a server could hold the check on it for as
		// long as it liked. Closing the body (deferred) drops it unread.
		err := fmt.Errorf("unexpected HTTP status %d: no protocol upgrade was asked for", resp.StatusCode)
		step.Error = err.Error()
		return resp.StatusCode, "", err
	}
	r.cond.keep(resp)
	raw := &capReader{r: resp.Body, max: r.cap, url: us}
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		if loc := resp.Header.Get("Location"); loc != "" {
			drain(raw, abort)
			step.Note = "redirect to " + clip(loc, 300)
			return resp.StatusCode, loc, nil
		}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		drain(raw, abort)
		return resp.StatusCode, "", nil
	}
	decoded, err := decodeBody(resp.Header.Get("Content-Encoding"), raw)
	if err != nil {
		step.Error = errorText(err)
		return resp.StatusCode, "", err
	}
	cr := &capReader{r: decoded, max: r.cap, url: us, total: &f.bytes}
	defer func() { step.Bytes = cr.n }()
	err = read(cr)
	if ctx.Err() != nil {
		// A body cut off by the deadline can end in what looks like a clean
		// EOF: never take it for the whole document, nor take what the
		// reader made of its first part (a parse error) for the cause.
		err = context.Cause(ctx)
	}
	if err != nil {
		step.Error = errorText(err)
		return resp.StatusCode, "", err
	}
	return resp.StatusCode, "", nil
}

// drainWait is how long drain waits for an unwanted body.
const drainWait = time.Second

// drain reads a little of an unwanted body so the connection can be reused,
// without waiting on a slow or endless one: past drainWait it calls abort,
// which cancels the request (and so the read) and loses the connection.
func drain(r io.Reader, abort context.CancelFunc) {
	t := time.AfterFunc(drainWait, abort)
	defer t.Stop()
	_, _ = io.Copy(io.Discard, io.LimitReader(r, 4<<10))
}

// getBytes fetches a small document whole with a GET (r.method is ignored).
func (f *fetcher) getBytes(ctx context.Context, r request) (int, []byte, *redirectStop, error) {
	r.method = http.MethodGet
	var body []byte
	status, stop, err := f.do(ctx, r, func(r io.Reader) error {
		var err error
		body, err = io.ReadAll(r)
		return err
	})
	return status, body, stop, err
}

func (f *fetcher) url(pathAndQuery string) *url.URL {
	u, err := url.Parse("https://" + string(f.host) + pathAndQuery)
	if err != nil {
		// Paths are constants of this package and hosts are validated.
		panic(err)
	}
	return u
}

// classify maps a request error to an outcome and a short text.
func classify(err error) (outcome observer.Outcome, text string) {
	var blocked *BlockedAddressError
	var tooLarge *TooLargeError
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	var authErr x509.UnknownAuthorityError
	var invalidErr x509.CertificateInvalidError
	var alertErr tls.AlertError
	var recordErr tls.RecordHeaderError
	var opErr *net.OpError
	var netErr net.Error
	switch {
	case errors.As(err, &blocked):
		return observer.OutcomeBlockedAddress, blocked.Error()
	case errors.As(err, &tooLarge):
		return observer.OutcomeTooLarge, tooLarge.Error()
	case errors.Is(err, errTooManyRedirects):
		return observer.OutcomeError, "too many redirects"
	case errors.Is(err, context.Canceled):
		return observer.OutcomeError, "canceled"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return observer.OutcomeUnreachable, "timeout"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return observer.OutcomeUnreachable, "dns: no such host"
		}
		return observer.OutcomeUnreachable, "dns: " + clip(dnsErr.Err, 100)
	case errors.As(err, &certErr), errors.As(err, &hostErr), errors.As(err, &authErr),
		errors.As(err, &invalidErr), errors.As(err, &alertErr), errors.As(err, &recordErr):
		// crypto/tls's own errors already say "tls: ".
		return observer.OutcomeUnreachable, "tls: " + clip(strings.TrimPrefix(innermost(err), "tls: "), 150)
	case errors.Is(err, syscall.ECONNREFUSED):
		return observer.OutcomeUnreachable, "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return observer.OutcomeUnreachable, "connection closed"
	case errors.As(err, &opErr):
		return observer.OutcomeUnreachable, clip(innermost(err), 150)
	}
	return observer.OutcomeError, clip(innermost(err), 150)
}

// innermost drops url.Error's "Get \"https://…\":" prefix, which repeats
// what the trace already says.
func innermost(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

func errorText(err error) string {
	_, text := classify(err)
	return text
}

// clip bounds a text taken from a response, and makes it valid UTF-8.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

func parseIPLiteral(h string) (netip.Addr, error) {
	return netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
}
