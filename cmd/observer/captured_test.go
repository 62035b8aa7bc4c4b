package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/fedisim"
)

// corpusDir holds the NodeInfo documents captured from real servers, with
// their provenance (crawl/internal/parse/testdata/corpus/MANIFEST.tsv).
const corpusDir = "../../crawl/internal/parse/testdata/corpus"

func corpusFile(t *testing.T, kind, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, kind, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// capturedHost is the host a corpus NodeInfo file is served as: a
// registrable domain of its own, as the crawl checks few hosts of one domain
// in a pass.
func capturedHost(file string) string {
	return strings.ReplaceAll(strings.TrimSuffix(file, ".json"), ".", "-") + ".social"
}

// TestCapturedDocumentsMakeLiveInstances crawls every captured NodeInfo
// document of the corpus, each served by fedisim as an instance of its own,
// and the captured discovery documents with the document their own server
// sent beside them; then derives the state and reads the live list. Every
// one is a working server, so every one must be listed as live, with what
// its documents said: Akkoma's openRegistrations "FALSE", a localPosts
// that is an object, a preferred link that answers 404, documents whose
// version is not their link's.
func TestCapturedDocumentsMakeLiveInstances(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(corpusDir, "nodeinfo"))
	if err != nil {
		t.Fatal(err)
	}
	var captured []fedisim.Captured
	var hosts []string
	for _, e := range entries {
		// Every document is linked as schema 2.1, whatever version it
		// gives itself: a mismatch is recorded, not refused.
		h := capturedHost(e.Name())
		captured = append(captured, fedisim.CapturedNodeInfo(h, "2.1", corpusFile(t, "nodeinfo", e.Name())))
		hosts = append(hosts, h)
	}
	// Captured discovery documents, served by the host they name, with the
	// NodeInfo document that host sent at the path they link to.
	pairs := []struct{ host, wellKnown, path, doc string }{
		{"banana.dog", "banana.dog.json", "/nodeinfo/2.1", "corgidon-banana.dog.json"},
		{"asonix.dog", "asonix.dog.json", "/nodeinfo/2.0", "mastodon-asonix.dog.json"},
		{"masto.asonix.dog", "masto.asonix.dog.json", "/nodeinfo/2.0", "mastodon-masto.asonix.dog.json"},
		{"relay.asonix.dog", "relay.asonix.dog.json", "/nodeinfo/2.0.json", "aoderelay-relay.asonix.dog.json"},
		// The 2.1 link, preferred, answers 404: the 2.0 link is tried next.
		{"soc.hyena.network", "soc.hyena.network.json", "/nodeinfo/2.0.json", "akkoma-soc.hyena.network.json"},
	}
	for _, p := range pairs {
		captured = append(captured, fedisim.Captured{Host: p.host, Routes: map[string][]byte{
			"/.well-known/nodeinfo": corpusFile(t, "wellknown", p.wellKnown),
			p.path:                  corpusFile(t, "nodeinfo", p.doc),
		}})
		hosts = append(hosts, p.host)
	}
	s := newSimSite(t, fedisim.Config{Instances: 1, Captured: captured, RecordRequests: true})
	if err := os.WriteFile(filepath.Join(s.dir, "seeds.txt"), []byte(strings.Join(hosts, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := s.crawl(t, crawl1); code != exitOK {
		t.Fatalf("crawl exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	// observer sql derives the state from the pass's checks and answers
	// from it.
	query := func(q string) []string { t.Helper(); return s.csvColumn(t, q) }

	// Every captured instance is alive and listed as live.
	if got := query("SELECT host || ' ' || outcome || ' ' || coalesce(error, '') FROM checks WHERE outcome <> 'alive' ORDER BY host"); len(got) != 0 {
		t.Errorf("captured instances not alive:\n%s", strings.Join(got, "\n"))
	}
	live := query("SELECT host FROM live ORDER BY host")
	for _, h := range hosts {
		if !slices.Contains(live, h) {
			t.Errorf("%s is not in the live list", h)
		}
	}
	if len(live) != len(hosts) {
		t.Errorf("live list has %d hosts, want the %d captured ones", len(live), len(hosts))
	}

	// What the checks kept, for the documents the issue names and the
	// link rules.
	row := func(host string) string {
		t.Helper()
		got := query("SELECT concat_ws(' ', software, nodeinfo_version || '/' || coalesce(nodeinfo_document_version, '-'), " +
			"coalesce(users::VARCHAR, '-'), coalesce(local_posts::VARCHAR, '-'), coalesce(open_registrations::VARCHAR, '-'), " +
			"'[' || coalesce(array_to_string(unusable_fields, ','), '') || ']') FROM checks WHERE host = '" + host + "'")
		if len(got) != 1 {
			t.Fatalf("%s: %d checks", host, len(got))
		}
		return got[0]
	}
	for host, want := range map[string]string{
		// openRegistrations "FALSE" is false.
		capturedHost("akkoma-soc.hyena.network.json"): "akkoma 2.1/2.0 1 7 false []",
		"soc.hyena.network":                           "akkoma 2.0/2.0 1 7 false []",
		// usage.localPosts an object: unknown, and listed.
		capturedHost("pleroma-localposts-object.json"):               "pleroma 2.1/2.1 348 - true [usage.localPosts]",
		capturedHost("schema-example-1.0.json"):                      "diaspora 2.1/1.0 123 500 true []",
		capturedHost("gotosocial-gts.superseriousbusiness.org.json"): "gotosocial 2.1/2.0 - - false []",
		"banana.dog": "corgidon 2.1/2.1 203 28856 true []",
	} {
		if got := row(host); got != want {
			t.Errorf("%s: %q, want %q", host, got, want)
		}
	}
	if got, want := s.sim.Requests("soc.hyena.network"), []string{"GET /robots.txt", "GET /.well-known/nodeinfo",
		"GET /nodeinfo/2.1.json", "GET /nodeinfo/2.0.json", "GET /api/v1/instance/peers"}; !slices.Equal(got, want) {
		t.Errorf("requests to soc.hyena.network:\n got  %q\n want %q", got, want)
	}
}
