package crawl_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
)

// wellKnownLinks is a discovery document linking each version to its href,
// in the order given.
func wellKnownLinks(pairs ...string) string {
	var links []string
	for i := 0; i+1 < len(pairs); i += 2 {
		links = append(links, fmt.Sprintf(`{"rel":"http://nodeinfo.diaspora.software/ns/schema/%s","href":%q}`, pairs[i], pairs[i+1]))
	}
	return `{"links":[` + strings.Join(links, ",") + `]}`
}

// TestNodeInfoLinksTriedInOrder: the links of a discovery document are
// tried best first until one yields a usable document; the check records
// the schema of the link it followed.
func TestNodeInfoLinksTriedInOrder(t *testing.T) {
	cases := []struct {
		name      string
		wellKnown string
		docs      map[string]string // path → body; a missing path answers 404
		outcome   observer.Outcome
		errPart   string
		schema    string
		paths     []string // after robots.txt and the discovery document
	}{
		{"preferred link 404", wellKnownLinks("2.1", "https://alpha.social/nodeinfo/2.1", "2.0", "https://alpha.social/nodeinfo/2.0"),
			map[string]string{"/nodeinfo/2.0": nodeInfoDoc("2.0", "mastodon")},
			observer.OutcomeAlive, "", "2.0", []string{"GET /nodeinfo/2.1", "GET /nodeinfo/2.0"}},
		{"preferred document without a software name", wellKnownLinks("2.0", "https://alpha.social/nodeinfo/2.0", "2.1", "https://alpha.social/nodeinfo/2.1"),
			map[string]string{"/nodeinfo/2.1": `{"version":"2.1","software":{}}`, "/nodeinfo/2.0": nodeInfoDoc("2.0", "mastodon")},
			observer.OutcomeAlive, "", "2.0", []string{"GET /nodeinfo/2.1", "GET /nodeinfo/2.0"}},
		{"preferred link on another host, not fetched", wellKnownLinks("2.1", "https://other.example/nodeinfo/2.1", "2.0", "/nodeinfo/2.0"),
			map[string]string{"/nodeinfo/2.0": nodeInfoDoc("2.0", "mastodon")},
			observer.OutcomeAlive, "", "2.0", []string{"GET /nodeinfo/2.0"}},
		{"no link usable: the preferred one's failure", wellKnownLinks("2.1", "https://alpha.social/nodeinfo/2.1", "2.0", "https://alpha.social/nodeinfo/2.0"),
			map[string]string{"/nodeinfo/2.0": `{"version":"2.0"}`},
			observer.OutcomeNotFediverse, "nodeinfo: 404 Not Found", "", []string{"GET /nodeinfo/2.1", "GET /nodeinfo/2.0"}},
		{"no link on this host", wellKnownLinks("2.1", "https://other.example/nodeinfo/2.1", "2.0", "https://evil.example/nodeinfo/2.0"),
			nil, observer.OutcomeNotFediverse, "another host (other.example)", "", nil},
		{"an opt-out ends the check", wellKnownLinks("2.1", "https://alpha.social/gone", "2.0", "https://alpha.social/nodeinfo/2.0"),
			map[string]string{"/nodeinfo/2.0": nodeInfoDoc("2.0", "mastodon")},
			observer.OutcomeOptedOut, "410 Gone", "", []string{"GET /gone"}},
		{"a server error passes on", wellKnownLinks("2.1", "https://alpha.social/broken", "2.0", "https://alpha.social/nodeinfo/2.0"),
			map[string]string{"/nodeinfo/2.0": nodeInfoDoc("2.0", "mastodon")},
			observer.OutcomeAlive, "", "2.0", []string{"GET /broken", "GET /nodeinfo/2.0"}},
		{"at most three documents asked for", wellKnownLinks("2.2", "/a", "2.1", "/b", "2.0", "/c", "1.1", "/d", "1.0", "/e"),
			map[string]string{"/d": nodeInfoDoc("1.1", "mastodon")},
			observer.OutcomeNotFediverse, "nodeinfo: 404", "", []string{"GET /a", "GET /b", "GET /c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := routes{
				"/robots.txt":           text(404, ""),
				"/.well-known/nodeinfo": text(200, tc.wellKnown),
				"/gone":                 text(410, ""),
				"/broken":               text(500, ""),
			}
			for p, body := range tc.docs {
				rt[p] = text(200, body)
			}
			e.host("alpha.social", rt)
			r, _ := e.check("alpha.social", crawl.CheckOptions{})
			wantOutcome(t, r, tc.outcome, tc.errPart)
			if r.Check.NodeInfoVersion != tc.schema {
				t.Errorf("nodeinfo_version %q, want %q", r.Check.NodeInfoVersion, tc.schema)
			}
			wantPaths(t, e.srv, "alpha.social", append([]string{"GET /robots.txt", "GET /.well-known/nodeinfo"}, tc.paths...)...)
		})
	}
}

// TestNodeInfoVersionMismatchRecordsBoth: a document whose own version is
// not its link's schema is used, and both versions are recorded.
func TestNodeInfoVersionMismatchRecordsBoth(t *testing.T) {
	e := newEnv(t)
	rt := instance("alpha.social", "x", "")
	rt["/.well-known/nodeinfo"] = text(200, wellKnownFor("alpha.social", "2.1"))
	rt["/nodeinfo/2.1"] = text(200, nodeInfoDoc("2.0", "pleroma"))
	e.host("alpha.social", rt)
	r, tr := e.check("alpha.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	if r.Check.Software != "pleroma" || r.Check.NodeInfoVersion != "2.1" || r.Check.NodeInfoDocumentVersion != "2.0" || *r.Check.Users != 1234 {
		t.Errorf("check %+v", r.Check)
	}
	var b strings.Builder
	crawl.WriteText(&b, r, tr)
	if !strings.Contains(b.String(), `nodeinfo says version "2.0", its link schema 2.1`) {
		t.Errorf("trace does not say so:\n%s", b.String())
	}
}
