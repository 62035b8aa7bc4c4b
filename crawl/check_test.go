package crawl_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/crawl/internal/testnet"
)

func TestAliveMastodon(t *testing.T) {
	e := newEnv(t)
	peers := `["known.social","NEW.social","new.social","new.social.","junk..social","127.0.0.1","x.invalidtld",
		"other.example.com","Known.Social","user@host.social","*.wild.social",""]`
	e.host("alpha.social", instance("alpha.social", "Mastodon", peers))
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	r, tr := e.check("Alpha.Social.", crawl.CheckOptions{Known: known("known.social", "alpha.social"), FetchPeers: true, CheckedAt: at, PassID: "p1"})

	wantOutcome(t, r, observer.OutcomeAlive, "")
	c := r.Check
	if c.Host != "alpha.social" || !c.CheckedAt.Equal(at) || c.PassID != "p1" || c.HTTPStatus != 200 {
		t.Errorf("check header = %q %v %q %d", c.Host, c.CheckedAt, c.PassID, c.HTTPStatus)
	}
	if c.Software != "mastodon" || c.Version != "4.3.1" || c.NodeInfoVersion != "2.0" {
		t.Errorf("software = %q %q %q", c.Software, c.Version, c.NodeInfoVersion)
	}
	if c.Users == nil || *c.Users != 1234 || *c.ActiveMonth != 56 || *c.ActiveHalfyear != 78 || *c.LocalPosts != 9000 {
		t.Errorf("usage = %v %v %v %v", c.Users, c.ActiveMonth, c.ActiveHalfyear, c.LocalPosts)
	}
	if c.OpenRegistrations == nil || !*c.OpenRegistrations {
		t.Errorf("open registrations = %v", c.OpenRegistrations)
	}
	if c.Name != "Test <b>Instance</b>" || c.Description != "A place for tests" {
		t.Errorf("name, description = %q, %q", c.Name, c.Description)
	}
	// 12 entries: known.social twice, new.social three ways, other.example.com
	// valid; junk..social, 127.0.0.1, x.invalidtld, user@…, *.… and "" junk.
	if !c.PeersFetched || c.PeersCount != 6 || c.NewPeersCount != 2 {
		t.Errorf("peers fetched %v count %d new %d", c.PeersFetched, c.PeersCount, c.NewPeersCount)
	}
	got := hostsOf(r.Discoveries)
	want := []string{"new.social<alpha.social", "other.example.com<alpha.social"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("discoveries = %v, want %v", got, want)
	}
	for _, d := range r.Discoveries {
		if !d.DiscoveredAt.Equal(at) {
			t.Errorf("discovered at %v, want %v", d.DiscoveredAt, at)
		}
	}
	if r.Bytes <= 0 {
		t.Errorf("bytes = %d", r.Bytes)
	}
	if !strings.Contains(fmt.Sprint(tr.Steps), "6 valid entries, 2 new, 6 invalid dropped") {
		t.Errorf("trace does not count the junk: %v", tr.Steps)
	}
	wantPaths(t, e.srv, "alpha.social", "GET /robots.txt", "GET /.well-known/nodeinfo", "GET /nodeinfo/2.0", "GET /api/v1/instance/peers")
	for _, req := range e.srv.Requests() {
		if req.UserAgent != "TestObserver/0.1 (+https://observer.example.com/)" {
			t.Errorf("%s sent User-Agent %q", req.Path, req.UserAgent)
		}
		if req.ProtoMajor != 1 {
			t.Errorf("%s used HTTP/%d, want HTTP/1.1", req.Path, req.ProtoMajor)
		}
	}
}

func TestSelfIsNotADiscovery(t *testing.T) {
	e := newEnv(t)
	e.host("alpha.social", instance("alpha.social", "mastodon", `["alpha.social","ALPHA.social","beta.social"]`))
	r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
	if got := hostsOf(r.Discoveries); len(got) != 1 || got[0] != "beta.social<alpha.social" || r.Check.PeersCount != 3 || r.Check.NewPeersCount != 1 {
		t.Errorf("discoveries %v, count %d, new %d", got, r.Check.PeersCount, r.Check.NewPeersCount)
	}
}

func TestPeersNotDue(t *testing.T) {
	e := newEnv(t)
	e.host("alpha.social", instance("alpha.social", "mastodon", `["a.social"]`))
	r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: false})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	if r.Check.PeersFetched || len(r.Discoveries) != 0 {
		t.Errorf("peers fetched although not due: %+v", r)
	}
	wantPaths(t, e.srv, "alpha.social", "GET /robots.txt", "GET /.well-known/nodeinfo", "GET /nodeinfo/2.0")
}

func TestRobots(t *testing.T) {
	full := []string{"GET /robots.txt", "GET /.well-known/nodeinfo", "GET /nodeinfo/2.0"}
	cases := []struct {
		name    string
		status  int
		body    string
		outcome observer.Outcome
		errPart string
		paths   []string
	}{
		{"token disallows", 200, "User-agent: TestObserver\nDisallow: /\n", observer.OutcomeOptedOut, "robots.txt disallows /.well-known/nodeinfo", full[:1]},
		{"token disallows, other case and version", 200, "User-agent: testobserver/2.0\nDisallow: /.well-known/\n", observer.OutcomeOptedOut, "disallows", full[:1]},
		{"star disallows", 200, "User-agent: *\nDisallow: /\n", observer.OutcomeOptedOut, "disallows", full[:1]},
		{"star disallows nodeinfo path only", 200, "User-agent: *\nDisallow: /nodeinfo/\n", observer.OutcomeOptedOut, "disallows /nodeinfo/2.0", full[:2]},
		{"token group overrides star", 200, "User-agent: *\nDisallow: /\n\nUser-agent: TestObserver\nAllow: /\n", observer.OutcomeAlive, "", full},
		{"prefix of token is another agent", 200, "User-agent: Test\nDisallow: /\n", observer.OutcomeAlive, "", full},
		{"other agents only", 200, "User-agent: GPTBot\nDisallow: /\n", observer.OutcomeAlive, "", full},
		{"junk before groups", 200, "Disallow: /\nCrawl-delay: soon\nUser-agent: *\nDisallow: /.well-known/nodeinfo\n", observer.OutcomeOptedOut, "disallows", full[:1]},
		{"404 allows", 404, "", observer.OutcomeAlive, "", full},
		{"403 allows", 403, "User-agent: *\nDisallow: /\n", observer.OutcomeAlive, "", full},
		{"401 allows", 401, "", observer.OutcomeAlive, "", full},
		{"500 disallows this pass", 500, "", observer.OutcomeHTTPError, "robots.txt 500: disallowed for this pass", full[:1]},
		{"503 disallows this pass", 503, "", observer.OutcomeHTTPError, "robots.txt 503: disallowed for this pass", full[:1]},
		{"429 disallows this pass", 429, "", observer.OutcomeHTTPError, "robots.txt 429", full[:1]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", "mastodon", `[]`)
			rt["/robots.txt"] = text(tc.status, tc.body)
			e.host("alpha.social", rt)
			r, _ := e.check("alpha.social", crawl.CheckOptions{})
			wantOutcome(t, r, tc.outcome, tc.errPart)
			if tc.status >= 500 || tc.status == 429 || tc.outcome == observer.OutcomeOptedOut {
				if r.Check.HTTPStatus != tc.status {
					t.Errorf("http status = %d, want %d", r.Check.HTTPStatus, tc.status)
				}
			}
			wantPaths(t, e.srv, "alpha.social", tc.paths...)
		})
	}
}

func TestRobotsDisallowsPeers(t *testing.T) {
	e := newEnv(t)
	rt := instance("alpha.social", "mastodon", `["a.social"]`)
	rt["/robots.txt"] = text(200, "User-agent: *\nDisallow: /api/\n")
	e.host("alpha.social", rt)
	r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	if r.Check.PeersFetched {
		t.Error("peers fetched although robots.txt disallows /api/")
	}
	wantPaths(t, e.srv, "alpha.social", "GET /robots.txt", "GET /.well-known/nodeinfo", "GET /nodeinfo/2.0")
}

func TestWellKnownShapes(t *testing.T) {
	doc := func(v string) string { return nodeInfoDoc(v, "pleroma") }
	cases := []struct {
		name, wellKnown, wantPath, wantVersion string
	}{
		{"array", wellKnownFor("alpha.social", "2.0"), "/nodeinfo/2.0", "2.0"},
		{"single object", `{"links":{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.1","href":"https://alpha.social/nodeinfo/2.1"}}`, "/nodeinfo/2.1", "2.1"},
		{"rel to href object", `{"links":{"https://nodeinfo.diaspora.software/ns/schema/2.0":"https://alpha.social/nodeinfo/2.0"}}`, "/nodeinfo/2.0", "2.0"},
		{"https rel", `{"links":[{"rel":"https://nodeinfo.diaspora.software/ns/schema/2.1","href":"https://alpha.social/nodeinfo/2.1"}]}`, "/nodeinfo/2.1", "2.1"},
		{"highest picked", `{"links":[
			{"rel":"http://nodeinfo.diaspora.software/ns/schema/1.0","href":"https://alpha.social/nodeinfo/1.0"},
			{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.2","href":"https://alpha.social/nodeinfo/2.2"},
			{"rel":"http://nodeinfo.diaspora.software/ns/schema/3.0","href":"https://alpha.social/nodeinfo/3.0"},
			{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.1","href":"https://alpha.social/nodeinfo/2.1"}]}`, "/nodeinfo/2.2", "2.2"},
		{"relative href", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/1.1","href":"/nodeinfo/1.1"}]}`, "/nodeinfo/1.1", "1.1"},
		// Built from a configured scheme of http behind a TLS proxy
		// (GoToSocial's protocol, Lemmy's tls_enabled, Pixelfed's
		// APP_URL): the same host's document is asked for over https.
		{"plain http href", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"http://Alpha.Social/nodeinfo/2.0"}]}`, "/nodeinfo/2.0", "2.0"},
		{"plain http href, port 80", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.1","href":"http://alpha.social:80/nodeinfo/2.1"}]}`, "/nodeinfo/2.1", "2.1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := routes{"/.well-known/nodeinfo": text(200, tc.wellKnown)}
			for _, v := range []string{"1.0", "1.1", "2.0", "2.1", "2.2", "3.0"} {
				rt["/nodeinfo/"+v] = text(200, doc(v))
			}
			e.host("alpha.social", rt)
			r, _ := e.check("alpha.social", crawl.CheckOptions{})
			wantOutcome(t, r, observer.OutcomeAlive, "")
			if r.Check.NodeInfoVersion != tc.wantVersion {
				t.Errorf("nodeinfo version = %q, want %q", r.Check.NodeInfoVersion, tc.wantVersion)
			}
			wantPaths(t, e.srv, "alpha.social", "GET /robots.txt", "GET /.well-known/nodeinfo", "GET "+tc.wantPath)
		})
	}
}

func TestWellKnownRejected(t *testing.T) {
	cases := []struct {
		name, body string
		errPart    string
	}{
		{"other host", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"https://victim.social/nodeinfo/2.0"}]}`, "another host (victim.social)"},
		{"other port", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"https://alpha.social:8443/nodeinfo/2.0"}]}`, "another host"},
		{"IP address", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"https://127.0.0.1/nodeinfo/2.0"}]}`, "another host"},
		{"not http", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"ftp://alpha.social/nodeinfo/2.0"}]}`, "not https (ftp)"},
		{"http on another port", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"http://alpha.social:8080/nodeinfo/2.0"}]}`, "another host"},
		{"http to another host", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"http://victim.social/nodeinfo/2.0"}]}`, "another host (victim.social)"},
		{"credentials", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"https://u:p@alpha.social/nodeinfo/2.0"}]}`, "another host"},
		{"unsupported schema only", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/9.0","href":"https://alpha.social/nodeinfo/9.0"}]}`, "no link to a supported NodeInfo schema"},
		{"no links", `{"subject":"x"}`, "no links"},
		{"HTML", `<html>hello</html>`, "not a JSON object"},
		// The host is the server's text, decoded: it is stored cleaned,
		// without the bidi override.
		{"controls in the host", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"https://%E2%80%AEevil.example/nodeinfo/2.0"}]}`, "another host (evil.example)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.host("alpha.social", routes{"/.well-known/nodeinfo": text(200, tc.body), "/nodeinfo/2.0": text(200, nodeInfoDoc("2.0", "x"))})
			victim := 0
			e.srv.HandleFunc("victim.social", func(w http.ResponseWriter, r *http.Request) { victim++ })
			r, _ := e.check("alpha.social", crawl.CheckOptions{})
			wantOutcome(t, r, observer.OutcomeNotFediverse, tc.errPart)
			wantPaths(t, e.srv, "alpha.social", "GET /robots.txt", "GET /.well-known/nodeinfo")
			if n := len(e.srv.Paths("victim.social")); n != 0 {
				t.Errorf("victim.social got %d requests", n)
			}
		})
	}
}

func TestNodeInfoValidation(t *testing.T) {
	base := func(mod string) string {
		return `{"version":"2.0","software":{"name":"mastodon","version":"4.0"},"protocols":["activitypub"],` + mod + `}`
	}
	// Only what makes a host a Fediverse server is required.
	invalid := []struct{ name, doc, errPart string }{
		{"no software", `{"version":"2.0","protocols":["activitypub"]}`, "software missing"},
		{"empty software name", `{"version":"2.0","software":{"name":"  "},"protocols":["activitypub"]}`, "software.name"},
		{"software name not a string", `{"version":"2.0","software":{"name":42},"protocols":["activitypub"]}`, "software.name"},
		{"not JSON", `nope`, "not a JSON object"},
		{"deep", base(`"metadata":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000)), "nested too deeply"},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", "x", "")
			rt["/nodeinfo/2.0"] = text(200, tc.doc)
			e.host("alpha.social", rt)
			r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, observer.OutcomeNotFediverse, tc.errPart)
			if r.Check.Software != "" {
				t.Errorf("software %q recorded from an invalid document", r.Check.Software)
			}
			wantPaths(t, e.srv, "alpha.social", "GET /robots.txt", "GET /.well-known/nodeinfo", "GET /nodeinfo/2.0")
		})
	}
	// Informational fields are taken when usable, and listed otherwise.
	tolerated := []struct {
		name, doc, software string
		docVersion          string
		unusable            []string
	}{
		{"upper-case name", `{"version":"2.0","software":{"name":"GoToSocial","version":"0.17.0-rc1 git-abc"},"protocols":["activitypub"]}`, "gotosocial", "2.0", nil},
		{"integral floats", base(`"usage":{"users":{"total":12.0,"activeMonth":1e3}}`), "mastodon", "2.0", nil},
		{"1.0 protocols object", `{"version":"2.0","software":{"name":"diaspora"},"protocols":{"inbound":["diaspora"],"outbound":["diaspora"]}}`, "diaspora", "2.0", nil},
		{"nulls", base(`"usage":{"users":{"total":null}},"openRegistrations":null,"metadata":null`), "mastodon", "2.0", nil},
		{"version mismatch", strings.Replace(base(`"openRegistrations":true`), `"2.0"`, `"2.1"`, 1), "mastodon", "2.1", nil},
		{"no version", `{"software":{"name":"x"},"protocols":[]}`, "x", "", nil},
		{"no protocols", `{"version":"2.0","software":{"name":"x"}}`, "x", "2.0", nil},
		{"protocols a string", `{"version":"2.0","software":{"name":"x"},"protocols":"activitypub"}`, "x", "2.0", []string{"protocols"}},
		{"negative users", base(`"usage":{"users":{"total":-1}}`), "mastodon", "2.0", []string{"usage.users.total"}},
		{"fractional users", base(`"usage":{"users":{"activeMonth":1.5}}`), "mastodon", "2.0", []string{"usage.users.activeMonth"}},
		{"users a string", base(`"usage":{"users":{"total":"12"}}`), "mastodon", "2.0", nil},
		{"huge posts", base(`"usage":{"localPosts":1e300}`), "mastodon", "2.0", []string{"usage.localPosts"}},
		{"open registrations a word", base(`"openRegistrations":"maybe"`), "mastodon", "2.0", []string{"openRegistrations"}},
	}
	for _, tc := range tolerated {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", "x", "")
			rt["/nodeinfo/2.0"] = text(200, tc.doc)
			e.host("alpha.social", rt)
			r, _ := e.check("alpha.social", crawl.CheckOptions{})
			wantOutcome(t, r, observer.OutcomeAlive, "")
			if r.Check.Software != tc.software {
				t.Errorf("software = %q, want %q", r.Check.Software, tc.software)
			}
			if r.Check.NodeInfoVersion != "2.0" || r.Check.NodeInfoDocumentVersion != tc.docVersion {
				t.Errorf("versions %q/%q, want 2.0/%q", r.Check.NodeInfoVersion, r.Check.NodeInfoDocumentVersion, tc.docVersion)
			}
			if !slices.Equal(r.Check.UnusableFields, tc.unusable) {
				t.Errorf("unusable %q, want %q", r.Check.UnusableFields, tc.unusable)
			}
		})
	}
}

func TestNodeInfoTexts(t *testing.T) {
	e := newEnv(t)
	rt := instance("alpha.social", "x", "")
	long := strings.Repeat("é", 300)
	rt["/.well-known/nodeinfo"] = text(200, wellKnownFor("alpha.social", "2.2"))
	rt["/nodeinfo/2.2"] = text(200, `{"version":"2.2","software":{"name":"x"},"protocols":["activitypub"],
		"instance":{"name":"Name\u0000 with\u202e NUL","description":"`+long+long+`"},"metadata":{"nodeName":"ignored"}}`)
	e.host("alpha.social", rt)
	r, _ := e.check("alpha.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	if r.Check.Name != "Name with NUL" {
		t.Errorf("name = %q", r.Check.Name)
	}
	if n := len([]rune(r.Check.Description)); n != 500 {
		t.Errorf("description has %d runes, want 500", n)
	}
}

func TestDocumentStatuses(t *testing.T) {
	cases := []struct {
		name      string
		path      string
		status    int
		outcome   observer.Outcome
		errPart   string
		wantPaths int
	}{
		{"nodeinfo 410", "/nodeinfo/2.0", 410, observer.OutcomeOptedOut, "410 Gone", 3},
		{"well-known 410", "/.well-known/nodeinfo", 410, observer.OutcomeOptedOut, "410 Gone", 2},
		{"well-known 404", "/.well-known/nodeinfo", 404, observer.OutcomeNotFediverse, "404", 2},
		{"nodeinfo 404", "/nodeinfo/2.0", 404, observer.OutcomeNotFediverse, "404", 3},
		{"well-known 500", "/.well-known/nodeinfo", 500, observer.OutcomeHTTPError, "HTTP 500", 2},
		{"nodeinfo 403", "/nodeinfo/2.0", 403, observer.OutcomeHTTPError, "HTTP 403", 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", "mastodon", `[]`)
			rt[tc.path] = text(tc.status, "no")
			e.host("alpha.social", rt)
			r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, tc.outcome, tc.errPart)
			if r.Check.HTTPStatus != tc.status {
				t.Errorf("http status = %d, want %d", r.Check.HTTPStatus, tc.status)
			}
			if n := len(e.srv.Paths("alpha.social")); n != tc.wantPaths {
				t.Errorf("%d requests, want %d: %v", n, tc.wantPaths, e.srv.Paths("alpha.social"))
			}
		})
	}
}

func TestPeersUnavailable(t *testing.T) {
	for _, status := range []int{401, 403, 404} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", "mastodon", "")
			rt["/api/v1/instance/peers"] = text(status, `{"error":"no"}`)
			e.host("alpha.social", rt)
			r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, observer.OutcomeAlive, "")
			if r.Check.Error != "" || r.Check.PeersFetched || r.Check.HTTPStatus != 200 {
				t.Errorf("error %q, peers fetched %v, status %d", r.Check.Error, r.Check.PeersFetched, r.Check.HTTPStatus)
			}
		})
	}
}

func TestPeersRejected(t *testing.T) {
	cases := []struct{ name, body, errPart string }{
		{"object", `{"peers":["a.social"]}`, "not a JSON array of strings"},
		{"numbers", `["a.social", 1]`, "not a JSON array of strings"},
		{"nested", `[["a.social"]]`, "not a JSON array of strings"},
		{"truncated", `["a.social", "b.soc`, "not a JSON array of strings"},
		{"trailing", `["a.social"] x`, "not a JSON array of strings"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.host("alpha.social", instance("alpha.social", "mastodon", tc.body))
			r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, observer.OutcomeAlive, tc.errPart)
			if r.Check.PeersFetched || len(r.Discoveries) != 0 {
				t.Errorf("rejected list still used: %+v", r)
			}
		})
	}
}

func TestMisskeyPeers(t *testing.T) {
	e := newEnv(t)
	var bodies []string
	rt := instance("mk.social", "Sharkey", "")
	rt["/api/federation/instances"] = func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Limit, Offset int }
		buf := new(bytes.Buffer)
		buf.ReadFrom(r.Body)
		bodies = append(bodies, r.Method+" "+buf.String())
		fmt.Sscanf(strings.ReplaceAll(buf.String(), `"`, ""), "{limit:%d,offset:%d}", &req.Limit, &req.Offset)
		var items []string
		for i := req.Offset; i < 250 && i < req.Offset+req.Limit; i++ {
			items = append(items, fmt.Sprintf(`{"id":"%d","host":"i%d.social","usersCount":3}`, i, i))
		}
		fmt.Fprint(w, "["+strings.Join(items, ",")+"]")
	}
	e.host("mk.social", rt)
	r, _ := e.check("mk.social", crawl.CheckOptions{FetchPeers: true, Known: known("i0.social")})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	if r.Check.Software != "sharkey" || !r.Check.PeersFetched || r.Check.PeersCount != 250 || r.Check.NewPeersCount != 249 {
		t.Errorf("software %q peers fetched %v count %d new %d", r.Check.Software, r.Check.PeersFetched, r.Check.PeersCount, r.Check.NewPeersCount)
	}
	want := []string{`POST {"limit":100,"offset":0,"blocked":false}`, `POST {"limit":100,"offset":100,"blocked":false}`, `POST {"limit":100,"offset":200,"blocked":false}`}
	if strings.Join(bodies, "|") != strings.Join(want, "|") {
		t.Errorf("requests = %q, want %q", bodies, want)
	}
	if len(e.srv.Paths("mk.social")) != 6 || strings.Contains(strings.Join(e.srv.Paths("mk.social"), " "), "/api/v1/instance/peers") {
		t.Errorf("requests: %v", e.srv.Paths("mk.social"))
	}
}

// Misskey's federation/instances lists the instances its admin blocked
// unless the request says "blocked": false; each entry carries isBlocked.
// Neither a server that honours the parameter nor a fork that ignores it
// may turn a blocklist into discoveries.
func TestMisskeyBlockedNotDiscovered(t *testing.T) {
	for _, honours := range []bool{true, false} {
		t.Run(fmt.Sprintf("honours blocked param %v", honours), func(t *testing.T) {
			e := newEnv(t)
			rt := instance("mk.social", "misskey", "")
			var asked []string
			rt["/api/federation/instances"] = func(w http.ResponseWriter, r *http.Request) {
				var req struct {
					Blocked *bool `json:"blocked"`
				}
				json.NewDecoder(r.Body).Decode(&req)
				asked = append(asked, fmt.Sprint(req.Blocked != nil && !*req.Blocked))
				items := []string{`{"host":"friend.social","isBlocked":false}`}
				if !honours || req.Blocked == nil || *req.Blocked {
					items = append(items, `{"host":"spam.social","isBlocked":true}`)
				}
				fmt.Fprint(w, "["+strings.Join(items, ",")+"]")
			}
			e.host("mk.social", rt)
			r, _ := e.check("mk.social", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, observer.OutcomeAlive, "")
			if got := strings.Join(hostsOf(r.Discoveries), " "); got != "friend.social<mk.social" || r.Check.PeersCount != 1 {
				t.Errorf("discoveries %s (count %d), want only friend.social", got, r.Check.PeersCount)
			}
			if strings.Join(asked, " ") != "true" {
				t.Errorf("requests asked for blocked:false: %v, want one that did", asked)
			}
		})
	}
}

func TestMisskeyPageCap(t *testing.T) {
	e := newEnv(t, func(o *crawl.Options) { o.MaxPeerPages = 2 })
	rt := instance("mk.social", "misskey", "")
	n := 0
	rt["/api/federation/instances"] = func(w http.ResponseWriter, r *http.Request) {
		var items []string
		for i := 0; i < 100; i++ {
			items = append(items, fmt.Sprintf(`{"host":"p%d-%d.social"}`, n, i))
		}
		n++
		fmt.Fprint(w, "["+strings.Join(items, ",")+"]")
	}
	e.host("mk.social", rt)
	r, _ := e.check("mk.social", crawl.CheckOptions{FetchPeers: true})
	if n != 2 || r.Check.PeersCount != 200 {
		t.Errorf("%d pages fetched, %d peers; want 2 and 200", n, r.Check.PeersCount)
	}
}

func TestLemmyPeers(t *testing.T) {
	e := newEnv(t)
	rt := lemmyInstance("lemmy.example.com", "0.19.7")
	rt["/api/v3/federated_instances"] = text(200, `{"federated_instances":{
		"linked":[{"id":1,"domain":"linked.social","software":"mastodon"},{"id":2,"domain":"BAD DOMAIN"},"old-style.social"],
		"blocked":[{"id":3,"domain":"blocked.social"}],
		"allowed":[{"id":4,"domain":"allowed.social"}]}}`)
	e.host("lemmy.example.com", rt)
	r, _ := e.check("lemmy.example.com", crawl.CheckOptions{FetchPeers: true})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	got := strings.Join(hostsOf(r.Discoveries), " ")
	want := "linked.social<lemmy.example.com old-style.social<lemmy.example.com allowed.social<lemmy.example.com"
	if got != want || r.Check.PeersCount != 3 {
		t.Errorf("discoveries = %s (count %d), want %s", got, r.Check.PeersCount, want)
	}
	wantPaths(t, e.srv, "lemmy.example.com", "GET /robots.txt", "GET /.well-known/nodeinfo", "GET /nodeinfo/2.0", "GET /api/v3/federated_instances")
}

// Lemmy 1.0 lists its federated instances only under /api/v4, fifty at a
// time (its largest limit), each page naming the next by a cursor.
// kind=linked leaves out the instances its admin blocked, and an entry
// marked blocked all the same is not a discovery.
func TestLemmy1Peers(t *testing.T) {
	for _, version := range []string{"1.0.0", "v1.0.0-rc.2", "1.1.0-alpha.5"} {
		t.Run(version, func(t *testing.T) {
			e := newEnv(t)
			rt := lemmyInstance("lemmy.example.com", version)
			var queries []string
			rt["/api/v4/federated_instances"] = func(w http.ResponseWriter, r *http.Request) {
				queries = append(queries, r.URL.RawQuery)
				if r.URL.Query().Get("page_cursor") == "" {
					var items []string
					for i := range 50 {
						items = append(items, fmt.Sprintf(`{"instance":{"id":%d,"domain":"p%d.social","software":"lemmy"}}`, i, i))
					}
					fmt.Fprintf(w, `{"items":[%s],"next_page":"Yj10cnVl+/=","prev_page":null}`, strings.Join(items, ","))
					return
				}
				fmt.Fprint(w, `{"items":[{"instance":{"id":60,"domain":"last.social"}},{"instance":{"id":61,"domain":"BAD DOMAIN"}},`+
					`{"instance":{"id":62,"domain":"blocked.social"},"blocked":{"instance_id":62}},{"instance":{"id":63,"domain":"null-blocked.social"},"blocked":null}],"prev_page":"x"}`)
			}
			e.host("lemmy.example.com", rt)
			r, _ := e.check("lemmy.example.com", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, observer.OutcomeAlive, "")
			got := hostsOf(r.Discoveries)
			if len(got) != 52 || got[0] != "p0.social<lemmy.example.com" || got[50] != "last.social<lemmy.example.com" ||
				got[51] != "null-blocked.social<lemmy.example.com" || !r.Check.PeersFetched || r.Check.PeersCount != 52 {
				t.Errorf("discoveries %v (fetched %v, count %d)", got, r.Check.PeersFetched, r.Check.PeersCount)
			}
			want := []string{"kind=linked&limit=50", "kind=linked&limit=50&page_cursor=Yj10cnVl%2B%2F%3D"}
			if !slices.Equal(queries, want) {
				t.Errorf("queries %q, want %q", queries, want)
			}
			wantPaths(t, e.srv, "lemmy.example.com", "GET /robots.txt", "GET /.well-known/nodeinfo", "GET /nodeinfo/2.0",
				"GET /api/v4/federated_instances", "GET /api/v4/federated_instances")
		})
	}
}

// A Lemmy 1.0 server whose cursor never moves, or whose pages never end,
// costs a bounded number of requests.
func TestLemmy1PeersPagingEnds(t *testing.T) {
	page := func(next string) string {
		var items []string
		for i := range 50 {
			items = append(items, fmt.Sprintf(`{"instance":{"domain":"p%d.social"}}`, i))
		}
		return fmt.Sprintf(`{"items":[%s],"next_page":%q}`, strings.Join(items, ","), next)
	}
	t.Run("same cursor", func(t *testing.T) {
		e := newEnv(t)
		rt := lemmyInstance("lemmy.example.com", "1.0.0")
		n := 0
		rt["/api/v4/federated_instances"] = func(w http.ResponseWriter, r *http.Request) {
			n++
			fmt.Fprint(w, page("again"))
		}
		e.host("lemmy.example.com", rt)
		r, _ := e.check("lemmy.example.com", crawl.CheckOptions{FetchPeers: true})
		// The second page's entries count as read; its hosts were new once.
		if n != 2 || !r.Check.PeersFetched || r.Check.PeersCount != 100 || len(r.Discoveries) != 50 {
			t.Errorf("%d requests, fetched %v, %d entries, %d discoveries; want 2, true, 100, 50", n, r.Check.PeersFetched, r.Check.PeersCount, len(r.Discoveries))
		}
	})
	t.Run("endless", func(t *testing.T) {
		e := newEnv(t, func(o *crawl.Options) { o.MaxPeerPages = 4 })
		rt := lemmyInstance("lemmy.example.com", "1.0.0")
		n := 0
		rt["/api/v4/federated_instances"] = func(w http.ResponseWriter, r *http.Request) {
			n++
			fmt.Fprint(w, page(fmt.Sprintf("c%d", n)))
		}
		e.host("lemmy.example.com", rt)
		r, _ := e.check("lemmy.example.com", crawl.CheckOptions{FetchPeers: true})
		if n != 4 || !r.Check.PeersFetched {
			t.Errorf("%d requests (fetched %v), want 4", n, r.Check.PeersFetched)
		}
	})
	t.Run("second page fails", func(t *testing.T) {
		e := newEnv(t)
		rt := lemmyInstance("lemmy.example.com", "1.0.0")
		rt["/api/v4/federated_instances"] = func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("page_cursor") != "" {
				w.WriteHeader(500)
				return
			}
			fmt.Fprint(w, page("next"))
		}
		e.host("lemmy.example.com", rt)
		r, _ := e.check("lemmy.example.com", crawl.CheckOptions{FetchPeers: true})
		if r.Check.PeersFetched || len(r.Discoveries) != 0 || !strings.Contains(r.Check.Error, "HTTP 500") {
			t.Errorf("fetched %v, %d discoveries, error %q", r.Check.PeersFetched, len(r.Discoveries), r.Check.Error)
		}
	})
}

func TestPeerTubePeers(t *testing.T) {
	e := newEnv(t)
	rt := instance("tube.example.net", "peertube", "")
	var queries []string
	page := func(side string, total int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			queries = append(queries, r.URL.Path+"?"+r.URL.RawQuery)
			var start int
			fmt.Sscanf(r.URL.Query().Get("start"), "%d", &start)
			var items []string
			for i := start; i < total && i < start+100; i++ {
				items = append(items, fmt.Sprintf(`{"id":%d,"%s":{"host":"%s%d.social","name":"peertube"},"state":"accepted"}`, i, side, side, i))
			}
			fmt.Fprintf(w, `{"total":%d,"data":[%s]}`, total, strings.Join(items, ","))
		}
	}
	rt["/api/v1/server/followers"] = page("follower", 150)
	rt["/api/v1/server/following"] = page("following", 100)
	e.host("tube.example.net", rt)
	r, _ := e.check("tube.example.net", crawl.CheckOptions{FetchPeers: true})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	if r.Check.PeersCount != 250 || r.Check.NewPeersCount != 250 {
		t.Errorf("peers count %d new %d, want 250", r.Check.PeersCount, r.Check.NewPeersCount)
	}
	want := []string{
		"/api/v1/server/followers?start=0&count=100&state=accepted", "/api/v1/server/followers?start=100&count=100&state=accepted",
		"/api/v1/server/following?start=0&count=100&state=accepted",
	}
	if strings.Join(queries, " ") != strings.Join(want, " ") {
		t.Errorf("queries = %q, want %q", queries, want)
	}
}

// Mbin and kbin have no Mastodon peers endpoint; their list is
// /api/federated. /api/defederated, same shape, is their blocklist and is
// never asked for.
func TestMbinPeers(t *testing.T) {
	for _, software := range []string{"mbin", "kbin"} {
		t.Run(software, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("mbin.example.net", software, "")
			delete(rt, "/api/v1/instance/peers")
			rt["/api/federated"] = text(200, `{"instances":[{"domain":"lemmy.social","software":"lemmy","version":"0.19.7"},{"domain":"BAD DOMAIN"},{"domain":"Kbin.Social","software":null,"version":null}]}`)
			rt["/api/defederated"] = text(200, `{"instances":[{"domain":"blocked.social"}]}`)
			e.host("mbin.example.net", rt)
			r, _ := e.check("mbin.example.net", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, observer.OutcomeAlive, "")
			want := "lemmy.social<mbin.example.net kbin.social<mbin.example.net"
			if got := strings.Join(hostsOf(r.Discoveries), " "); got != want || !r.Check.PeersFetched || r.Check.PeersCount != 2 {
				t.Errorf("discoveries %s (fetched %v, count %d), want %s", got, r.Check.PeersFetched, r.Check.PeersCount, want)
			}
			wantPaths(t, e.srv, "mbin.example.net", "GET /robots.txt", "GET /.well-known/nodeinfo", "GET /nodeinfo/2.0", "GET /api/federated")
		})
	}
}

// PeerTube lists pending and rejected follows too unless asked for
// state=accepted; a rejected follow is no federation and must not become a
// discovery.
func TestPeerTubeRejectedNotDiscovered(t *testing.T) {
	e := newEnv(t)
	rt := instance("tube.example.net", "peertube", "")
	side := func(field, accepted string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			items := []string{fmt.Sprintf(`{"%s":{"host":%q},"state":"accepted"}`, field, accepted)}
			switch r.URL.Query().Get("state") {
			case "accepted":
			case "":
				items = append(items,
					fmt.Sprintf(`{"%s":{"host":"rejected-%s.social"},"state":"rejected"}`, field, field),
					fmt.Sprintf(`{"%s":{"host":"pending-%s.social"},"state":"pending"}`, field, field))
			default:
				items = nil
			}
			fmt.Fprintf(w, `{"total":%d,"data":[%s]}`, len(items), strings.Join(items, ","))
		}
	}
	rt["/api/v1/server/followers"] = side("follower", "fan.social")
	rt["/api/v1/server/following"] = side("following", "idol.social")
	e.host("tube.example.net", rt)
	r, _ := e.check("tube.example.net", crawl.CheckOptions{FetchPeers: true})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	want := "fan.social<tube.example.net idol.social<tube.example.net"
	if got := strings.Join(hostsOf(r.Discoveries), " "); got != want || r.Check.PeersCount != 2 {
		t.Errorf("discoveries %s (count %d), want %s", got, r.Check.PeersCount, want)
	}
}

func TestRedirects(t *testing.T) {
	cases := []struct {
		name      string
		status    int
		to        string
		outcome   observer.Outcome
		movedTo   string
		discovery bool
	}{
		{"301 other host", 301, "https://new.social/.well-known/nodeinfo", observer.OutcomeMoved, "new.social", true},
		{"308 other host", 308, "https://NEW.social./x", observer.OutcomeMoved, "new.social", true},
		{"302 other host", 302, "https://new.social/.well-known/nodeinfo", observer.OutcomeMoving, "new.social", false},
		{"303 other host", 303, "https://new.social/", observer.OutcomeMoving, "new.social", false},
		{"307 other host", 307, "https://new.social/", observer.OutcomeMoving, "new.social", false},
		{"301 to plain http other host", 301, "http://new.social/", observer.OutcomeMoved, "new.social", true},
		{"301 to same host over http", 301, "http://old.social/.well-known/nodeinfo", observer.OutcomeHTTPError, "", false},
		{"301 to an invalid host", 301, "https://localhost/", observer.OutcomeError, "", false},
		{"301 to a public IP", 301, "https://8.8.8.8/", observer.OutcomeError, "", false},
		{"301 to a private IP", 301, "https://10.1.2.3/", observer.OutcomeBlockedAddress, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("old.social", "mastodon", `[]`)
			rt["/.well-known/nodeinfo"] = redirect(tc.status, tc.to)
			e.host("old.social", rt)
			e.host("new.social", instance("new.social", "mastodon", `[]`))
			r, _ := e.check("old.social", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, tc.outcome, "")
			if string(r.Check.MovedTo) != tc.movedTo || r.Check.HTTPStatus != tc.status {
				t.Errorf("moved to %q status %d, want %q %d", r.Check.MovedTo, r.Check.HTTPStatus, tc.movedTo, tc.status)
			}
			if tc.discovery {
				if len(r.Discoveries) != 1 || r.Discoveries[0].Host != "new.social" || r.Discoveries[0].Via != observer.ViaRedirect {
					t.Errorf("discoveries = %v", r.Discoveries)
				}
			} else if len(r.Discoveries) != 0 {
				t.Errorf("unexpected discoveries %v", r.Discoveries)
			}
			if n := len(e.srv.Paths("new.social")); n != 0 {
				t.Errorf("redirect target was requested %d times", n)
			}
			wantPaths(t, e.srv, "old.social", "GET /robots.txt", "GET /.well-known/nodeinfo")
		})
	}
}

func TestMovedKnownTargetNotDiscovered(t *testing.T) {
	e := newEnv(t)
	rt := instance("old.social", "mastodon", `[]`)
	rt["/.well-known/nodeinfo"] = redirect(301, "https://new.social/")
	e.host("old.social", rt)
	r, _ := e.check("old.social", crawl.CheckOptions{Known: known("new.social")})
	wantOutcome(t, r, observer.OutcomeMoved, "")
	if len(r.Discoveries) != 0 {
		t.Errorf("known target discovered again: %v", r.Discoveries)
	}
}

func TestSameHostRedirectFollowed(t *testing.T) {
	e := newEnv(t)
	rt := instance("alpha.social", "mastodon", `[]`)
	rt["/.well-known/nodeinfo"] = redirect(301, "/wk")
	rt["/wk"] = redirect(302, "https://ALPHA.social:443/wk2")
	rt["/wk2"] = text(200, wellKnownFor("alpha.social", "2.0"))
	e.host("alpha.social", rt)
	r, _ := e.check("alpha.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	wantPaths(t, e.srv, "alpha.social", "GET /robots.txt", "GET /.well-known/nodeinfo", "GET /wk", "GET /wk2", "GET /nodeinfo/2.0")
}

func TestRedirectLoop(t *testing.T) {
	e := newEnv(t)
	rt := instance("loop.social", "mastodon", `[]`)
	rt["/.well-known/nodeinfo"] = redirect(302, "/a")
	rt["/a"] = redirect(302, "/.well-known/nodeinfo")
	e.host("loop.social", rt)
	r, _ := e.check("loop.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeError, "too many redirects")
	// robots.txt, then the first request and five redirects followed.
	if n := len(e.srv.Paths("loop.social")); n != 1+1+5 {
		t.Errorf("%d requests, want 7: %v", n, e.srv.Paths("loop.social"))
	}
}

// A listener on 127.0.0.2 stands for a private address: with only
// 127.0.0.1/32 allowed, nothing may connect to it.
func TestBlockedAddresses(t *testing.T) {
	private := testnet.NewServer(t, "127.0.0.2")
	private.HandleFunc("evil.social", instance("evil.social", "mastodon", `[]`).serve)

	t.Run("redirect to its IP", func(t *testing.T) {
		e := newEnv(t, func(o *crawl.Options) { o.AllowAddrs = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} })
		rt := instance("alpha.social", "mastodon", `[]`)
		rt["/.well-known/nodeinfo"] = redirect(302, fmt.Sprintf("https://127.0.0.2:%d/.well-known/nodeinfo", private.Port()))
		e.host("alpha.social", rt)
		r, _ := e.check("alpha.social", crawl.CheckOptions{})
		wantOutcome(t, r, observer.OutcomeBlockedAddress, "non-public address")
	})
	t.Run("host resolving to it", func(t *testing.T) {
		e := newEnv(t, func(o *crawl.Options) {
			o.AllowAddrs = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
			o.ConnectTo = append([]crawl.ConnectTo{{Host: "evil.social", Addr: "127.0.0.2", AddrPort: private.Port()}}, o.ConnectTo...)
		})
		r, _ := e.check("evil.social", crawl.CheckOptions{})
		wantOutcome(t, r, observer.OutcomeBlockedAddress, "address 127.0.0.2 is not public")
	})
	t.Run("loopback without allow list", func(t *testing.T) {
		e := newEnv(t, func(o *crawl.Options) { o.AllowAddrs = nil })
		e.host("alpha.social", instance("alpha.social", "mastodon", `[]`))
		r, _ := e.check("alpha.social", crawl.CheckOptions{})
		wantOutcome(t, r, observer.OutcomeBlockedAddress, "127.0.0.1")
		if n := e.srv.Conns(); n != 0 {
			t.Errorf("guarded server saw %d connections", n)
		}
	})
	if n := private.Conns(); n != 0 {
		t.Errorf("private listener saw %d connections", n)
	}
}

func TestTooLarge(t *testing.T) {
	// 64 MiB of JSON white space after an opening bracket, about 64 KiB
	// compressed: valid as far as it goes, so only the cap can stop it.
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zw.Write([]byte("["))
	spaces := bytes.Repeat([]byte(" "), 1<<20)
	for i := 0; i < 64; i++ {
		zw.Write(spaces)
	}
	zw.Close()
	gzipBomb := func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			t.Errorf("client did not ask for gzip")
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/json")
		w.Write(bomb.Bytes())
	}
	endless := func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"links":[`))
		chunk := []byte(strings.Repeat(`{"rel":"x","href":"y"},`, 1000))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
	cases := []struct {
		name, path string
		h          http.HandlerFunc
		errPart    string
		outcome    observer.Outcome
		maxBytes   int64
	}{
		{"gzip bomb nodeinfo", "/nodeinfo/2.0", gzipBomb, "256 KiB", observer.OutcomeTooLarge, 1 << 20},
		{"endless well-known", "/.well-known/nodeinfo", endless, "64 KiB", observer.OutcomeTooLarge, 1 << 20},
		{"endless robots", "/robots.txt", endless, "500 KiB", observer.OutcomeTooLarge, 1 << 20},
		{"gzip bomb peers", "/api/v1/instance/peers", gzipBomb, "peers: body over 32 MiB cap", observer.OutcomeAlive, 34 << 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", "mastodon", `[]`)
			rt[tc.path] = tc.h
			e.host("alpha.social", rt)
			r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, tc.outcome, tc.errPart)
			if r.Bytes > tc.maxBytes {
				t.Errorf("read %d bytes", r.Bytes)
			}
		})
	}
}

func TestSlowHeadersUnreachable(t *testing.T) {
	e := newEnv(t, func(o *crawl.Options) { o.ResponseHeaderTimeout = 200 * time.Millisecond })
	release := make(chan struct{})
	defer close(release)
	rt := instance("slow.social", "mastodon", `[]`)
	rt["/robots.txt"] = func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	e.host("slow.social", rt)
	r, _ := e.check("slow.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeUnreachable, "timeout")
}

func TestCheckDeadline(t *testing.T) {
	e := newEnv(t, func(o *crawl.Options) { o.CheckTimeout = 300 * time.Millisecond })
	release := make(chan struct{})
	defer close(release)
	rt := instance("slow.social", "mastodon", `[]`)
	rt["/nodeinfo/2.0"] = func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"version":"2.0",`))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	e.host("slow.social", rt)
	r, _ := e.check("slow.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeUnreachable, "timeout")
}

func TestNoProxyFromEnvironment(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var proxied atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			proxied.Add(1)
			c.Close()
		}
	}()
	t.Setenv("HTTPS_PROXY", "http://"+ln.Addr().String())
	t.Setenv("https_proxy", "http://"+ln.Addr().String())
	t.Setenv("ALL_PROXY", "http://"+ln.Addr().String())
	e := newEnv(t)
	e.host("alpha.social", instance("alpha.social", "mastodon", `[]`))
	r, _ := e.check("alpha.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	if n := proxied.Load(); n != 0 {
		t.Errorf("proxy from the environment got %d connections", n)
	}
}

func TestUntrustedCertificate(t *testing.T) {
	e := newEnv(t, func(o *crawl.Options) { o.RootCAs = nil; o.CAFiles = nil })
	e.host("alpha.social", instance("alpha.social", "mastodon", `[]`))
	r, _ := e.check("alpha.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeUnreachable, "tls: failed to verify certificate")
	if strings.Contains(r.Check.Error, "tls: tls:") {
		t.Errorf("error %q says tls twice", r.Check.Error)
	}
}

func TestCAFile(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/ca.pem"
	if err := writeFile(path, testnet.TestCA(t).PEM); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(o *crawl.Options) { o.RootCAs = nil; o.CAFiles = []string{path} })
	e.host("alpha.social", instance("alpha.social", "mastodon", `[]`))
	r, _ := e.check("alpha.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeAlive, "")

	if err := writeFile(dir+"/empty.pem", []byte("nothing here")); err != nil {
		t.Fatal(err)
	}
	if _, err := crawl.New(crawl.Options{CAFiles: []string{dir + "/empty.pem"}}); err == nil || !strings.Contains(err.Error(), "empty.pem") {
		t.Errorf("New with a CA file without certificates: %v", err)
	}
	if _, err := crawl.New(crawl.Options{CAFiles: []string{dir + "/missing.pem"}}); err == nil || !strings.Contains(err.Error(), "missing.pem") {
		t.Errorf("New with a missing CA file: %v", err)
	}
}

func TestUnknownHostUnreachable(t *testing.T) {
	// Nothing listens on port 1 of 127.0.0.1.
	e2 := newTestCrawler(t, crawl.Options{
		ConnectTo:  []crawl.ConnectTo{{Addr: "127.0.0.1", AddrPort: 1}},
		AllowAddrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
	r, _ := e2.Check(context.Background(), "nobody.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeUnreachable, "connection refused")
}

func TestPagedPeersFailures(t *testing.T) {
	t.Run("misskey second page fails", func(t *testing.T) {
		e := newEnv(t)
		rt := instance("mk.social", "misskey", "")
		calls := 0
		rt["/api/federation/instances"] = func(w http.ResponseWriter, r *http.Request) {
			calls++
			if calls > 1 {
				http.Error(w, "oops", 500)
				return
			}
			var items []string
			for i := 0; i < 100; i++ {
				items = append(items, fmt.Sprintf(`{"host":"h%d.social"}`, i))
			}
			fmt.Fprint(w, "["+strings.Join(items, ",")+"]")
		}
		e.host("mk.social", rt)
		r, _ := e.check("mk.social", crawl.CheckOptions{FetchPeers: true})
		wantOutcome(t, r, observer.OutcomeAlive, "peers: ")
		if r.Check.PeersFetched || len(r.Discoveries) != 0 || calls != 2 {
			t.Errorf("peers fetched %v, %d discoveries, %d calls", r.Check.PeersFetched, len(r.Discoveries), calls)
		}
	})
	t.Run("peertube followers hidden", func(t *testing.T) {
		e := newEnv(t)
		rt := instance("tube.example.net", "peertube", "")
		rt["/api/v1/server/followers"] = text(403, `{}`)
		rt["/api/v1/server/following"] = text(200, `{"total":1,"data":[{"following":{"host":"f.social"}}]}`)
		e.host("tube.example.net", rt)
		r, _ := e.check("tube.example.net", crawl.CheckOptions{FetchPeers: true})
		wantOutcome(t, r, observer.OutcomeAlive, "")
		if got := hostsOf(r.Discoveries); !r.Check.PeersFetched || len(got) != 1 || got[0] != "f.social<tube.example.net" {
			t.Errorf("peers fetched %v, discoveries %v", r.Check.PeersFetched, got)
		}
	})
}

// A peers list cut off by the check's deadline is recorded as a timeout,
// not as whatever the parser made of the part it got; the host stays alive.
func TestPeersCutByDeadline(t *testing.T) {
	e := newEnv(t, func(o *crawl.Options) { o.CheckTimeout = 300 * time.Millisecond })
	release := make(chan struct{})
	defer close(release)
	rt := instance("slow.social", "mastodon", `[]`)
	rt["/api/v1/instance/peers"] = func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`["a.example", "b.exa`))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	e.host("slow.social", rt)
	r, _ := e.check("slow.social", crawl.CheckOptions{FetchPeers: true})
	if r.Check.Outcome != observer.OutcomeAlive || r.Check.Error != "peers: timeout" || r.Check.PeersFetched {
		t.Fatalf("outcome %s, error %q, peers fetched %v; want alive, %q, false", r.Check.Outcome, r.Check.Error, r.Check.PeersFetched, "peers: timeout")
	}
}
