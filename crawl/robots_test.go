package crawl_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/crawl/internal/testnet"
)

// A same-host redirect into a path robots.txt disallows is not followed, and
// ends the fetch as if that path had been asked for: for the NodeInfo
// documents the host is opted out.
func TestRedirectIntoDisallowedDocument(t *testing.T) {
	cases := []struct {
		name, from, to string
		want           []string
	}{
		{"well-known", "/.well-known/nodeinfo", "/private/wk", []string{"GET /robots.txt", "GET /.well-known/nodeinfo"}},
		{"nodeinfo", "/nodeinfo/2.0", "/private/ni?v=2", []string{"GET /robots.txt", "GET /.well-known/nodeinfo", "GET /nodeinfo/2.0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", "mastodon", `[]`)
			rt["/robots.txt"] = text(200, "User-agent: *\nDisallow: /private/\n")
			rt[tc.from] = redirect(301, tc.to)
			rt["/private/wk"] = text(200, wellKnownFor("alpha.social", "2.0"))
			rt["/private/ni"] = text(200, nodeInfoDoc("2.0", "mastodon"))
			e.host("alpha.social", rt)
			r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, observer.OutcomeOptedOut, "robots.txt disallows "+tc.to)
			if r.Check.HTTPStatus != 200 || r.Check.Software != "" {
				t.Errorf("http status %d (want robots.txt's 200), software %q", r.Check.HTTPStatus, r.Check.Software)
			}
			wantPaths(t, e.srv, "alpha.social", tc.want...)
		})
	}
}

// A peers list that redirects into a disallowed path is not fetched, as a
// disallowed peers list is not: the host stays alive without peers.
func TestPeersRedirectIntoDisallowedPath(t *testing.T) {
	e := newEnv(t)
	rt := instance("alpha.social", "mastodon", `[]`)
	rt["/robots.txt"] = text(200, "User-agent: *\nDisallow: /secret\n")
	rt["/api/v1/instance/peers"] = redirect(302, "/secret/peers")
	rt["/secret/peers"] = text(200, `["b.social"]`)
	e.host("alpha.social", rt)
	r, tr := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	if r.Check.PeersFetched || len(r.Discoveries) != 0 {
		t.Errorf("peers fetched %v, discoveries %v", r.Check.PeersFetched, hostsOf(r.Discoveries))
	}
	wantPaths(t, e.srv, "alpha.social", append(base, "GET /api/v1/instance/peers")...)
	if !strings.Contains(traceText(tr), "robots.txt disallows /secret/peers") {
		t.Errorf("trace does not name the disallowed target:\n%s", traceText(tr))
	}
}

// An opt-out flag behind a redirect into a disallowed path is not read, as
// a disallowed flag is not.
func TestOptOutFlagRedirectIntoDisallowedPath(t *testing.T) {
	e := newEnv(t)
	rt := instance("alpha.social", "friendica", `[]`)
	rt["/robots.txt"] = text(200, "User-agent: *\nDisallow: /private\n")
	rt[statusNetPath] = redirect(307, "/private/config.json")
	rt["/private/config.json"] = text(200, `{"site":{"private":true}}`)
	e.host("alpha.social", rt)
	r, _ := e.check("alpha.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	wantPaths(t, e.srv, "alpha.social", paths("GET "+statusNetPath)...)
}

// PeerTube's pages carry a query string, and robots.txt is asked about the
// path as it is fetched, query included.
func TestPeerTubePagesCheckedWithQuery(t *testing.T) {
	cases := []struct {
		name, robots string
		want         []string // peers requests made
		fetched      bool
		errPart      string
	}{
		{"every query disallowed", "User-agent: *\nDisallow: /*?\n", nil, false, ""},
		// A later page that may not be fetched leaves the list incomplete,
		// as a later page that is unavailable does.
		{"later pages disallowed", "User-agent: *\nDisallow: /*start=100&\n",
			[]string{"/api/v1/server/followers?start=0&count=100&state=accepted"}, false, "page at 100 disallowed by robots.txt"},
		{"allowed", "User-agent: *\nDisallow: /private\n",
			[]string{"/api/v1/server/followers?start=0&count=100&state=accepted", "/api/v1/server/followers?start=100&count=100&state=accepted",
				"/api/v1/server/following?start=0&count=100&state=accepted"}, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("tube.example.net", "peertube", "")
			rt["/robots.txt"] = text(200, tc.robots)
			var queries []string
			rt["/api/v1/server/followers"] = func(w http.ResponseWriter, r *http.Request) {
				queries = append(queries, r.URL.RequestURI())
				var items []string
				for i := range 100 {
					items = append(items, fmt.Sprintf(`{"follower":{"host":"f%s-%d.social"}}`, r.URL.Query().Get("start"), i))
				}
				fmt.Fprintf(w, `{"total":150,"data":[%s]}`, strings.Join(items, ","))
			}
			rt["/api/v1/server/following"] = func(w http.ResponseWriter, r *http.Request) {
				queries = append(queries, r.URL.RequestURI())
				fmt.Fprint(w, `{"total":1,"data":[{"following":{"host":"a.social"}}]}`)
			}
			e.host("tube.example.net", rt)
			r, _ := e.check("tube.example.net", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, observer.OutcomeAlive, tc.errPart)
			if strings.Join(queries, " ") != strings.Join(tc.want, " ") {
				t.Errorf("peers requests %q, want %q", queries, tc.want)
			}
			if r.Check.PeersFetched != tc.fetched || !tc.fetched && len(r.Discoveries) != 0 {
				t.Errorf("peers fetched %v (want %v), discoveries %v", r.Check.PeersFetched, tc.fetched, hostsOf(r.Discoveries))
			}
		})
	}
}

// RFC 9309 lets a line end in CR, LF or CR LF.
func TestRobotsLineEndingsOptOut(t *testing.T) {
	for name, body := range map[string]string{
		"CR":    "User-agent: *\rDisallow: /\r",
		"LF":    "User-agent: *\nDisallow: /\n",
		"CR LF": "User-agent: *\r\nDisallow: /\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", "mastodon", `[]`)
			rt["/robots.txt"] = text(200, body)
			e.host("alpha.social", rt)
			r, _ := e.check("alpha.social", crawl.CheckOptions{})
			wantOutcome(t, r, observer.OutcomeOptedOut, "robots.txt disallows")
			wantPaths(t, e.srv, "alpha.social", "GET /robots.txt")
		})
	}
}

// A robots.txt that redirects to another host is read there and applies to
// the host asked (RFC 9309 section 2.3.1.2), within the same limits as any
// fetch.
func TestRobotsRedirectToAnotherHost(t *testing.T) {
	endless := func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("# padding\n", 1000))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
	full := []string{"GET /robots.txt", "GET /.well-known/nodeinfo", "GET /nodeinfo/2.0"}
	cases := []struct {
		name    string
		to      string       // alpha.social's robots.txt redirects here
		there   http.Handler // www.example.com's robots.txt
		outcome observer.Outcome
		errPart string
		alpha   []string // requests to alpha.social
		www     []string // requests to www.example.com
	}{
		{name: "opted out there", to: "https://www.example.com/robots.txt",
			there: text(200, "User-agent: *\nDisallow: /\n"), outcome: observer.OutcomeOptedOut, errPart: "robots.txt disallows /.well-known/nodeinfo",
			alpha: full[:1], www: []string{"GET /robots.txt"}},
		{name: "allowed there", to: "https://www.example.com/robots.txt",
			there: text(200, "User-agent: *\nDisallow: /private/\n"), outcome: observer.OutcomeAlive,
			alpha: full, www: []string{"GET /robots.txt"}},
		{name: "missing there", to: "https://www.example.com/robots.txt",
			there: text(404, "no"), outcome: observer.OutcomeAlive, alpha: full, www: []string{"GET /robots.txt"}},
		{name: "chain through the host", to: "https://www.example.com/robots.txt",
			there: redirect(302, "https://alpha.social/robots-www.txt"), outcome: observer.OutcomeOptedOut, errPart: "disallows",
			alpha: []string{"GET /robots.txt", "GET /robots-www.txt"}, www: []string{"GET /robots.txt"}},
		{name: "server error there", to: "https://www.example.com/robots.txt",
			there: text(503, "busy"), outcome: observer.OutcomeHTTPError, errPart: "robots.txt 503: disallowed for this pass",
			alpha: full[:1], www: []string{"GET /robots.txt"}},
		{name: "capped there", to: "https://www.example.com/robots.txt",
			there: http.HandlerFunc(endless), outcome: observer.OutcomeTooLarge, errPart: "500 KiB",
			alpha: full[:1], www: []string{"GET /robots.txt"}},
		// Another host is asked for its robots.txt only: a redirect to any
		// other path there is not followed, so a host cannot make the
		// crawler fetch chosen URLs of others. What it hides may be an
		// opt-out, so the host is not checked in this pass.
		{name: "another path there", to: "https://www.example.com/",
			there: text(200, "User-agent: *\nDisallow: /\n"), outcome: observer.OutcomeHTTPError, errPart: "not followed: disallowed for this pass",
			alpha: full[:1]},
		{name: "query there", to: "https://www.example.com/robots.txt?x=1",
			there: text(200, "User-agent: *\nDisallow: /\n"), outcome: observer.OutcomeHTTPError, errPart: "not followed: disallowed for this pass",
			alpha: full[:1]},
		{name: "plain http", to: "http://www.example.com/robots.txt",
			there: text(200, "User-agent: *\nDisallow: /\n"), outcome: observer.OutcomeHTTPError, errPart: "not followed: disallowed for this pass",
			alpha: full[:1]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", "mastodon", `[]`)
			rt["/robots.txt"] = redirect(301, tc.to)
			rt["/robots-www.txt"] = text(200, "User-agent: TestObserver\nDisallow: /.well-known/\n")
			e.host("alpha.social", rt)
			e.srv.Handle("www.example.com", tc.there)
			r, _ := e.check("alpha.social", crawl.CheckOptions{})
			wantOutcome(t, r, tc.outcome, tc.errPart)
			wantPaths(t, e.srv, "alpha.social", tc.alpha...)
			wantPaths(t, e.srv, "www.example.com", tc.www...)
		})
	}
}

// A moved host that redirects every path to the same path at its new home
// is recorded as moved: its robots.txt is read there, and the NodeInfo
// redirect, not being robots.txt, is not followed. One that sends every
// path to its new home's front page hides its robots.txt, so it is not
// checked in this pass, as with any robots.txt redirect not followed.
func TestRobotsRedirectOfMovedHost(t *testing.T) {
	t.Run("same path", func(t *testing.T) {
		e := newEnv(t)
		e.srv.HandleFunc("old.social", func(w http.ResponseWriter, r *http.Request) {
			redirect(301, "https://new.social"+r.URL.RequestURI())(w, r)
		})
		e.host("new.social", instance("new.social", "mastodon", `[]`))
		r, _ := e.check("old.social", crawl.CheckOptions{})
		wantOutcome(t, r, observer.OutcomeMoved, "")
		if r.Check.MovedTo != "new.social" {
			t.Errorf("moved to %q", r.Check.MovedTo)
		}
		wantPaths(t, e.srv, "old.social", "GET /robots.txt", "GET /.well-known/nodeinfo")
		wantPaths(t, e.srv, "new.social", "GET /robots.txt")
	})
	t.Run("front page", func(t *testing.T) {
		e := newEnv(t)
		e.srv.HandleFunc("old.social", redirect(301, "https://new.social/"))
		e.host("new.social", instance("new.social", "mastodon", `[]`))
		r, _ := e.check("old.social", crawl.CheckOptions{})
		wantOutcome(t, r, observer.OutcomeHTTPError, "robots.txt redirects to https://new.social/, not followed: disallowed for this pass")
		wantPaths(t, e.srv, "old.social", "GET /robots.txt")
		wantPaths(t, e.srv, "new.social")
	})
}

// A robots.txt behind a redirect the crawler does not follow may be an
// opt-out (a CDN's copy, a versioned URL): it is unavailable, as on 5xx, so
// nothing else is fetched from the host in this pass, and the target is
// not asked either.
func TestRobotsRedirectNotFollowed(t *testing.T) {
	optOut := text(200, "User-agent: *\nDisallow: /\n")
	cases := []struct {
		name, to string
		status   int
		outcome  observer.Outcome
		errPart  string
	}{
		{"another host's path", "https://cdn.example.net/robots/site.txt", 301, observer.OutcomeHTTPError, "disallowed for this pass"},
		{"another host with a query", "https://cdn.example.net/robots.txt?v=2", 302, observer.OutcomeHTTPError, "disallowed for this pass"},
		{"another host's port", "https://cdn.example.net:8443/robots.txt", 307, observer.OutcomeHTTPError, "disallowed for this pass"},
		{"same path over http", "http://alpha.social/robots.txt", 301, observer.OutcomeHTTPError, "disallowed for this pass"},
		{"same host over http with a query", "http://alpha.social/robots.txt?v=2", 308, observer.OutcomeHTTPError, "disallowed for this pass"},
		{"same host with credentials", "https://u:p@alpha.social/robots.txt", 302, observer.OutcomeHTTPError, "disallowed for this pass"},
		{"invalid host", "https://-bad-.example/robots.txt", 302, observer.OutcomeHTTPError, "disallowed for this pass"},
		{"public IP literal", "https://127.0.0.1/robots.txt", 302, observer.OutcomeHTTPError, "disallowed for this pass"},
		{"non-public IP literal", "https://10.0.0.1/robots.txt", 302, observer.OutcomeBlockedAddress, "non-public address"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", "mastodon", `["b.social"]`)
			rt["/robots.txt"] = func(w http.ResponseWriter, r *http.Request) {
				if r.URL.RawQuery != "" {
					optOut(w, r)
					return
				}
				redirect(tc.status, tc.to)(w, r)
			}
			e.host("alpha.social", rt)
			e.host("cdn.example.net", routes{"/robots.txt": optOut, "/robots/site.txt": optOut})
			r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, tc.outcome, "robots.txt redirects to ")
			wantOutcome(t, r, tc.outcome, tc.errPart)
			if r.Check.HTTPStatus != tc.status || len(r.Discoveries) != 0 {
				t.Errorf("http status %d (want the redirect's %d), discoveries %v", r.Check.HTTPStatus, tc.status, hostsOf(r.Discoveries))
			}
			wantPaths(t, e.srv, "alpha.social", "GET /robots.txt")
			wantPaths(t, e.srv, "cdn.example.net")
		})
	}
}

// A redirect to robots.txt with a query on the same host is followed, as
// any same-host redirect is, and what it serves applies.
func TestRobotsRedirectSameHostQuery(t *testing.T) {
	e := newEnv(t)
	rt := instance("alpha.social", "mastodon", `["b.social"]`)
	rt["/robots.txt"] = func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery == "v=2" {
			text(200, "User-agent: *\nDisallow: /\n")(w, r)
			return
		}
		redirect(301, "/robots.txt?v=2")(w, r)
	}
	e.host("alpha.social", rt)
	r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
	wantOutcome(t, r, observer.OutcomeOptedOut, "robots.txt disallows /.well-known/nodeinfo")
	wantPaths(t, e.srv, "alpha.social", "GET /robots.txt", "GET /robots.txt") // the second with ?v=2
}

// Five redirects are followed, across hosts; a sixth is not, and robots.txt
// is then unavailable (RFC 9309 section 2.3.1.2).
func TestRobotsRedirectChainBounded(t *testing.T) {
	for _, hops := range []int{5, 6} {
		t.Run(fmt.Sprint(hops), func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", "mastodon", `[]`)
			rt["/robots.txt"] = redirect(301, "https://r1.social/robots.txt")
			e.host("alpha.social", rt)
			for i := 1; i < hops; i++ {
				e.host(fmt.Sprintf("r%d.social", i), routes{"/robots.txt": redirect(302, fmt.Sprintf("https://r%d.social/robots.txt", i+1))})
			}
			e.host(fmt.Sprintf("r%d.social", hops), routes{"/robots.txt": text(200, "User-agent: *\nDisallow: /\n")})
			r, _ := e.check("alpha.social", crawl.CheckOptions{})
			if hops == 5 {
				wantOutcome(t, r, observer.OutcomeOptedOut, "disallows")
			} else {
				wantOutcome(t, r, observer.OutcomeAlive, "")
				if n := len(e.srv.Paths(fmt.Sprintf("r%d.social", hops))); n != 0 {
					t.Errorf("the sixth redirect was followed")
				}
			}
		})
	}
}

// A robots.txt on another host goes through the address guard, and a
// pinned check fetches it from that host's own address, not the pin.
func TestRobotsRedirectToAnotherHostGuarded(t *testing.T) {
	t.Run("non-public address", func(t *testing.T) {
		private := testnet.NewServer(t, "127.0.0.2")
		private.HandleFunc("evil.social", routes{"/robots.txt": text(404, "")}.serve)
		e := newEnv(t, func(o *crawl.Options) {
			o.AllowAddrs = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
			o.ConnectTo = append([]crawl.ConnectTo{{Host: "evil.social", Addr: "127.0.0.2", AddrPort: private.Port()}}, o.ConnectTo...)
		})
		rt := instance("alpha.social", "mastodon", `[]`)
		rt["/robots.txt"] = redirect(302, "https://evil.social/robots.txt")
		e.host("alpha.social", rt)
		r, _ := e.check("alpha.social", crawl.CheckOptions{})
		wantOutcome(t, r, observer.OutcomeBlockedAddress, "address 127.0.0.2 is not public")
		if n := private.Conns(); n != 0 {
			t.Errorf("private listener saw %d connections", n)
		}
	})
	t.Run("pinned", func(t *testing.T) {
		srvA, srvB, c := twoAddresses(t)
		rt := instance("alpha.social", "mastodon", `[]`)
		rt["/robots.txt"] = redirect(301, "https://one.example.net/robots.txt")
		srvA.HandleFunc("alpha.social", rt.serve)
		srvB.HandleFunc("one.example.net", routes{"/robots.txt": text(200, "User-agent: *\nDisallow: /\n")}.serve)
		pin := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(srvA.Port()))
		r, _ := c.Check(context.Background(), "alpha.social", crawl.CheckOptions{Addr: pin})
		wantOutcome(t, r, observer.OutcomeOptedOut, "disallows")
		wantPaths(t, srvA, "alpha.social", "GET /robots.txt")
		wantPaths(t, srvB, "one.example.net", "GET /robots.txt")
		if n := len(srvA.Paths("one.example.net")); n != 0 {
			t.Errorf("the other host's robots.txt was asked at the pinned address")
		}
	})
}

// "Disallow: *" is a blanket opt-out (RFC 9309: '*' matches any path), for
// "*" as for our product token: nothing past robots.txt is fetched.
func TestRobotsDisallowStarOptsOut(t *testing.T) {
	for name, body := range map[string]string{
		"for all":            "User-agent: *\nDisallow: *\n",
		"for our token":      "User-agent: TestObserver\nDisallow: *\n\nUser-agent: *\nAllow: /\n",
		"with an allow rule": "User-agent: *\nDisallow: /api/\nAllow: /.well-known/*/x\nDisallow: *\n",
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", "mastodon", `["b.social"]`)
			rt["/robots.txt"] = text(200, body)
			e.host("alpha.social", rt)
			r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, observer.OutcomeOptedOut, "robots.txt disallows /.well-known/nodeinfo")
			wantPaths(t, e.srv, "alpha.social", "GET /robots.txt")
		})
	}
}
