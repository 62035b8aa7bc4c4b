package crawl_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/crawl/internal/testnet"
)

const (
	peersPath = "/api/v1/instance/peers"
	lastMod   = "Wed, 21 Oct 2026 07:28:00 GMT"
)

// peersHeaders returns the conditional headers of the requests for path.
func peersHeaders(srv *testnet.Server, host, path string) []string {
	var out []string
	for _, r := range srv.Requests() {
		if r.Host == host && r.Path == path {
			out = append(out, r.Header.Get("If-None-Match")+"|"+r.Header.Get("If-Modified-Since"))
		}
	}
	return out
}

// notModified answers 304 the way a sloppy server might: with a body that
// is not JSON at all, written on the raw connection because net/http will
// not send a body with a 304. A client that read it would fail.
func notModified(etag string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		head := "HTTP/1.1 304 Not Modified\r\nContent-Length: 12\r\nConnection: close\r\n"
		if etag != "" {
			head += "ETag: " + etag + "\r\n"
		}
		buf.WriteString(head + "\r\n[\"junk\",{]]]")
		buf.Flush()
	}
}

func TestPeersValidatorsRecorded(t *testing.T) {
	e := newEnv(t)
	rt := instance("alpha.social", "mastodon", "")
	rt[peersPath] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `W/"v1"`)
		w.Header().Set("Last-Modified", lastMod)
		fmt.Fprint(w, `["new.social"]`)
	}
	e.host("alpha.social", rt)
	r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	c := r.Check
	if !c.PeersFetched || c.PeersNotModified || c.PeersETag != `W/"v1"` || c.PeersLastModified != lastMod || len(r.Discoveries) != 1 {
		t.Errorf("check = %+v, discoveries %v", c, r.Discoveries)
	}
	// Nothing to be conditional on: no conditional headers.
	if got := peersHeaders(e.srv, "alpha.social", peersPath); len(got) != 1 || got[0] != "|" {
		t.Errorf("conditional headers = %q", got)
	}
}

func TestPeersNotModified(t *testing.T) {
	cases := []struct {
		name, etag, lastModified string // sent
		served                   string // the 304's ETag
		wantETag, wantLM         string // recorded
		wantSent                 string
	}{
		{"etag", `"v1"`, "", `"v1"`, `"v1"`, "", `"v1"|`},
		{"both, 304 without validators", `W/"v1"`, lastMod, "", `W/"v1"`, lastMod, `W/"v1"|` + lastMod},
		{"last-modified only, 304 with new etag", "", lastMod, `"v2"`, `"v2"`, lastMod, "|" + lastMod},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("alpha.social", "mastodon", "")
			rt[peersPath] = notModified(tc.served)
			e.host("alpha.social", rt)
			r, tr := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true, PeersValidators: observer.PeersValidators{PeersETag: tc.etag, PeersLastModified: tc.lastModified}})
			wantOutcome(t, r, observer.OutcomeAlive, "")
			c := r.Check
			if !c.PeersNotModified || c.PeersFetched || c.PeersCount != 0 || c.NewPeersCount != 0 || len(r.Discoveries) != 0 {
				t.Errorf("check = %+v, discoveries %v", c, r.Discoveries)
			}
			if c.PeersETag != tc.wantETag || c.PeersLastModified != tc.wantLM {
				t.Errorf("validators = %q %q, want %q %q", c.PeersETag, c.PeersLastModified, tc.wantETag, tc.wantLM)
			}
			if got := peersHeaders(e.srv, "alpha.social", peersPath); len(got) != 1 || got[0] != tc.wantSent {
				t.Errorf("conditional headers = %q, want %q", got, tc.wantSent)
			}
			if !strings.Contains(traceText(tr), "not modified (304); not read") {
				t.Errorf("trace:\n%s", traceText(tr))
			}
			var text strings.Builder
			crawl.WriteText(&text, r, tr)
			if !strings.Contains(text.String(), "peers: not modified since the last fetch (304)") {
				t.Errorf("text:\n%s", text.String())
			}
		})
	}
}

// Lemmy's list is one GET too, and is asked conditionally as well.
func TestLemmyPeersNotModified(t *testing.T) {
	e := newEnv(t)
	rt := lemmyInstance("lemmy.social", "0.19.7")
	rt["/api/v3/federated_instances"] = notModified(`"l1"`)
	e.host("lemmy.social", rt)
	r, _ := e.check("lemmy.social", crawl.CheckOptions{FetchPeers: true, PeersValidators: observer.PeersValidators{PeersETag: `"l1"`}})
	if !r.Check.PeersNotModified || r.Check.PeersFetched || r.Check.Error != "" || r.Check.PeersETag != `"l1"` {
		t.Errorf("check = %+v", r.Check)
	}
}

func TestPeersValidatorsSanitised(t *testing.T) {
	e := newEnv(t)
	rt := instance("alpha.social", "mastodon", "")
	rt[peersPath] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"`+strings.Repeat("e", 300)+`"`) // too long to keep
		w.Header().Set("Last-Modified", "yesterday")             // not an HTTP date
		fmt.Fprint(w, `["new.social"]`)
	}
	e.host("alpha.social", rt)
	// Stored validators are untrusted too: these are not sent.
	r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true, PeersValidators: observer.PeersValidators{PeersETag: "\"a\x01\"", PeersLastModified: "2026-10-21"}})
	c := r.Check
	if !c.PeersFetched || c.PeersETag != "" || c.PeersLastModified != "" || len(r.Discoveries) != 1 {
		t.Errorf("check = %+v", c)
	}
	if got := peersHeaders(e.srv, "alpha.social", peersPath); len(got) != 1 || got[0] != "|" {
		t.Errorf("conditional headers = %q", got)
	}
}

// The validators of a list that was not read whole are not kept, or the
// next check would be told "not modified" for a list never read.
func TestPeersRejectedKeepsNoValidators(t *testing.T) {
	e := newEnv(t)
	rt := instance("alpha.social", "mastodon", "")
	rt[peersPath] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		fmt.Fprint(w, `{"not":"a list"}`)
	}
	e.host("alpha.social", rt)
	r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
	wantOutcome(t, r, observer.OutcomeAlive, "peers:")
	if r.Check.PeersFetched || r.Check.PeersETag != "" || r.Check.PeersNotModified {
		t.Errorf("check = %+v", r.Check)
	}
}

// A 304 that was not asked for is a broken server, not an unchanged list.
func TestPeersUnaskedNotModified(t *testing.T) {
	e := newEnv(t)
	rt := instance("alpha.social", "mastodon", "")
	rt[peersPath] = notModified(`"v1"`)
	e.host("alpha.social", rt)
	r, _ := e.check("alpha.social", crawl.CheckOptions{FetchPeers: true})
	wantOutcome(t, r, observer.OutcomeAlive, "HTTP 304 to an unconditional request")
	if r.Check.PeersNotModified || r.Check.PeersFetched || r.Check.PeersETag != "" {
		t.Errorf("check = %+v", r.Check)
	}
}

// Paged lists are not asked conditionally.
func TestPagedPeersUnconditional(t *testing.T) {
	e := newEnv(t)
	rt := instance("mk.social", "misskey", "")
	rt["/api/federation/instances"] = text(200, `[{"host":"a.social"}]`)
	e.host("mk.social", rt)
	r, _ := e.check("mk.social", crawl.CheckOptions{FetchPeers: true, PeersValidators: observer.PeersValidators{PeersETag: `"m1"`, PeersLastModified: lastMod}})
	if !r.Check.PeersFetched || r.Check.PeersNotModified || r.Check.PeersETag != "" || len(r.Discoveries) != 1 {
		t.Errorf("check = %+v", r.Check)
	}
	if got := peersHeaders(e.srv, "mk.social", "/api/federation/instances"); len(got) != 1 || got[0] != "|" {
		t.Errorf("conditional headers = %q", got)
	}
}
