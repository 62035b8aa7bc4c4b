package crawl_test

import (
	"strings"
	"testing"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
)

const (
	statusNetPath = "/api/statusnet/config.json"
	siteInfoPath  = "/siteinfo.json"
)

var base = []string{"GET /robots.txt", "GET /.well-known/nodeinfo", "GET /nodeinfo/2.0"}

func paths(extra ...string) []string { return append(append([]string(nil), base...), extra...) }

func TestOptOutFlags(t *testing.T) {
	cases := []struct {
		name, software, path, doc string
		outcome                   observer.Outcome
		errPart                   string
		want                      []string
	}{
		{"friendica private", "friendica", statusNetPath, `{"site":{"name":"F","private":true}}`,
			observer.OutcomeOptedOut, statusNetPath + ": site.private is set", paths("GET " + statusNetPath)},
		{"gnusocial private", "gnusocial", statusNetPath, `{"site":{"private":"1"}}`,
			observer.OutcomeOptedOut, "site.private", paths("GET " + statusNetPath)},
		{"friendica public", "friendica", statusNetPath, `{"site":{"private":false}}`,
			observer.OutcomeAlive, "", paths("GET "+statusNetPath, "GET /api/v1/instance/peers")},
		{"hubzilla hidden", "hubzilla", siteInfoPath, `{"url":"x","hide_in_statistics":true}`,
			observer.OutcomeOptedOut, siteInfoPath + ": hide_in_statistics is set", paths("GET " + siteInfoPath)},
		{"redmatrix hidden", "redmatrix", siteInfoPath, `{"hide_in_statistics":"1"}`,
			observer.OutcomeOptedOut, "hide_in_statistics", paths("GET " + siteInfoPath)},
		{"zap hidden", "zap", siteInfoPath, `{"hide_in_statistics":1}`,
			observer.OutcomeOptedOut, "hide_in_statistics", paths("GET " + siteInfoPath)},
		{"hubzilla listed", "hubzilla", siteInfoPath, `{"hide_in_statistics":false}`,
			observer.OutcomeAlive, "", paths("GET "+siteInfoPath, "GET /api/v1/instance/peers")},
		// Software that does not publish the flag is not asked, whatever it
		// would answer.
		{"mastodon not asked", "mastodon", statusNetPath, `{"site":{"private":true}}`,
			observer.OutcomeAlive, "", paths("GET /api/v1/instance/peers")},
		{"misskey not asked", "akkoma", siteInfoPath, `{"hide_in_statistics":true}`,
			observer.OutcomeAlive, "", paths("GET /api/v1/instance/peers")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", tc.software, `["new.social"]`)
			rt[tc.path] = text(200, tc.doc)
			e.host("alpha.social", rt)
			r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, tc.outcome, tc.errPart)
			wantPaths(t, e.srv, "alpha.social", tc.want...)
			c := r.Check
			if tc.outcome == observer.OutcomeOptedOut {
				// Nothing the site said about itself is kept, and its peers
				// are not asked for.
				if c.HTTPStatus != 200 || c.Software != "" || c.Users != nil || c.Name != "" || c.PeersFetched || len(r.Discoveries) != 0 {
					t.Errorf("opted-out check keeps %+v, discoveries %v", c, r.Discoveries)
				}
			} else if c.Software != tc.software || !c.PeersFetched || len(r.Discoveries) != 1 {
				t.Errorf("alive check: software %q, peers %v, discoveries %v", c.Software, c.PeersFetched, r.Discoveries)
			}
		})
	}
}

// A flag that cannot be read leaves the outcome alone.
func TestOptOutFlagUnreadable(t *testing.T) {
	cases := []struct {
		name   string
		handle func(rt routes)
		ask    bool // whether the flag's document is requested
		note   string
	}{
		{"missing", func(rt routes) {}, true, "HTTP 404"},
		{"server error", func(rt routes) { rt[statusNetPath] = text(500, "oops") }, true, "HTTP 500"},
		{"not JSON", func(rt routes) { rt[statusNetPath] = text(200, "<html>private</html>") }, true, "not a JSON object"},
		{"no site", func(rt routes) { rt[statusNetPath] = text(200, `{"private":true}`) }, true, "no site object"},
		{"too large", func(rt routes) {
			rt[statusNetPath] = text(200, `{"site":{"private":true,"pad":"`+strings.Repeat("x", 70<<10)+`"}}`)
		}, true, "over 64 KiB cap"},
		{"redirect off host", func(rt routes) { rt[statusNetPath] = redirect(302, "https://other.social/c.json") }, true, "not followed"},
		{"robots disallows", func(rt routes) {
			rt["/robots.txt"] = text(200, "User-agent: *\nDisallow: /api/statusnet/\n")
			rt[statusNetPath] = text(200, `{"site":{"private":true}}`)
		}, false, "robots.txt disallows /api/statusnet/config.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", "friendica", `[]`)
			tc.handle(rt)
			e.host("alpha.social", rt)
			r, tr := e.check("alpha.social", crawl.CheckOptions{})
			wantOutcome(t, r, observer.OutcomeAlive, "")
			if r.Check.Software != "friendica" {
				t.Errorf("software = %q", r.Check.Software)
			}
			want := base
			if tc.ask {
				want = paths("GET " + statusNetPath)
			}
			wantPaths(t, e.srv, "alpha.social", want...)
			if !strings.Contains(traceText(tr), tc.note) {
				t.Errorf("trace does not say %q:\n%s", tc.note, traceText(tr))
			}
		})
	}
}

func traceText(tr crawl.Trace) string {
	var b strings.Builder
	for _, s := range tr.Steps {
		b.WriteString(s.Method + " " + s.URL + " " + s.Error + " " + s.Note + "\n")
	}
	return b.String()
}
