package crawl_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/crawl/internal/testnet"

	"github.com/fediverse-observer/observer/hostname"
)

// routes is one made-up instance: path → handler.
type routes map[string]http.HandlerFunc

func (rt routes) serve(w http.ResponseWriter, r *http.Request) {
	if h, ok := rt[r.URL.Path]; ok {
		h(w, r)
		return
	}
	http.NotFound(w, r)
}

func text(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

func redirect(status int, to string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", to)
		w.WriteHeader(status)
	}
}

func wellKnownFor(host, version string) string {
	return fmt.Sprintf(`{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/%s","href":"https://%s/nodeinfo/%s"}]}`, version, host, version)
}

func nodeInfoDoc(version, software string) string {
	return fmt.Sprintf(`{"version":%q,"software":{"name":%q,"version":"4.3.1"},"protocols":["activitypub"],
"usage":{"users":{"total":1234,"activeMonth":56,"activeHalfyear":78},"localPosts":9000},
"openRegistrations":true,"metadata":{"nodeName":"Test <b>Instance</b>","nodeDescription":"A place\nfor tests"}}`, version, software)
}

// instance returns the routes of a healthy instance of software whose
// Mastodon-style peers list is peers (a JSON text).
func instance(host, software, peers string) routes {
	return routes{
		"/robots.txt":            text(404, "not found"),
		"/.well-known/nodeinfo":  text(200, wellKnownFor(host, "2.0")),
		"/nodeinfo/2.0":          text(200, nodeInfoDoc("2.0", software)),
		"/api/v1/instance/peers": text(200, peers),
	}
}

// lemmyInstance returns the routes of a healthy Lemmy instance of version
// (which decides its peers endpoint), without a peers list.
func lemmyInstance(host, version string) routes {
	rt := instance(host, "lemmy", "")
	delete(rt, "/api/v1/instance/peers")
	rt["/nodeinfo/2.0"] = text(200, strings.Replace(nodeInfoDoc("2.0", "lemmy"), `"4.3.1"`, strconv.Quote(version), 1))
	return rt
}

type env struct {
	t   *testing.T
	srv *testnet.Server
	c   *crawl.Crawler
}

func newEnv(t *testing.T, tweak ...func(*crawl.Options)) *env {
	t.Helper()
	srv := testnet.NewServer(t, "127.0.0.1")
	opts := srv.Options(t)
	for _, f := range tweak {
		f(&opts)
	}
	c := newTestCrawler(t, opts)
	return &env{t: t, srv: srv, c: c}
}

// newTestCrawler is crawl.New for tests: the crawler cannot connect outside
// loopback, whatever its guard lets through (a test that does fails).
func newTestCrawler(t *testing.T, opts crawl.Options) *crawl.Crawler {
	t.Helper()
	c, err := crawl.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	crawl.OnlyLoopback(c, func(addr string) { t.Errorf("the crawler was about to connect to %s, outside loopback", addr) })
	return c
}

func (e *env) host(name string, rt routes) {
	e.srv.HandleFunc(name, rt.serve)
}

// check checks host as a caller at the trust boundary would: the name
// normalised first.
func (e *env) check(name string, opts crawl.CheckOptions) (observer.Result, crawl.Trace) {
	e.t.Helper()
	host, err := hostname.Normalize(name)
	if err != nil {
		e.t.Fatalf("check %q: %v", name, err)
	}
	r, tr := e.c.Check(context.Background(), host, opts)
	if e.t.Failed() || testing.Verbose() {
		var b strings.Builder
		crawl.WriteText(&b, r, tr)
		e.t.Log("\n" + b.String())
	}
	return r, tr
}

func wantOutcome(t *testing.T, r observer.Result, want observer.Outcome, errPart string) {
	t.Helper()
	if r.Check.Outcome != want {
		t.Errorf("outcome = %s (%q), want %s", r.Check.Outcome, r.Check.Error, want)
	}
	if !strings.Contains(r.Check.Error, errPart) {
		t.Errorf("error = %q, want it to mention %q", r.Check.Error, errPart)
	}
}

func wantPaths(t *testing.T, srv *testnet.Server, host string, want ...string) {
	t.Helper()
	got := srv.Paths(host)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests to %s:\n  got  %q\n  want %q", host, got, want)
	}
}

func known(hosts ...string) *crawl.KnownSet {
	k := crawl.NewKnownSet(len(hosts))
	for _, h := range hosts {
		k.Add(observer.Host(h))
	}
	return k
}

func hostsOf(ds []observer.Discovery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, string(d.Host)+"<"+d.Via)
	}
	return out
}

// asHosts types names the test knows to be valid as hosts.
func asHosts(names []string) []observer.Host {
	hosts := make([]observer.Host, len(names))
	for i, n := range names {
		hosts[i] = observer.Host(n)
	}
	return hosts
}

// blockedAmong stands for duck's blocklist match (DueList.AdmitDiscovered's
// blocked): these hosts exactly are blocked.
func blockedAmong(blocked ...observer.Host) func([]observer.Host) map[observer.Host]bool {
	return func(hosts []observer.Host) map[observer.Host]bool {
		out := map[observer.Host]bool{}
		for _, h := range hosts {
			if slices.Contains(blocked, h) {
				out[h] = true
			}
		}
		return out
	}
}
