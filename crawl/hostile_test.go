package crawl_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
)

// Go's HTTP client takes any three digits as a status, "099" included. The
// crawler refuses one below 100 as it would a broken response, so that a
// sandboxed checker reports what its orchestrator accepts (it refused
// http_status 99, killed the checker and recorded checker_failed).
func TestStatusBelow100(t *testing.T) {
	e := newEnv(t)
	rt := instance("odd.social", "mastodon", `[]`)
	rt["/.well-known/nodeinfo"] = func(w http.ResponseWriter, r *http.Request) {
		c, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		buf.WriteString("HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n")
		buf.Flush()
	}
	e.host("odd.social", rt)
	r, _ := e.check("odd.social", crawl.CheckOptions{})
	if r.Check.HTTPStatus != 0 || r.Check.Outcome == observer.OutcomeAlive || !strings.Contains(r.Check.Error, "invalid HTTP status 099") {
		t.Errorf("outcome %s, http_status %d, error %q; want a failure naming the invalid status", r.Check.Outcome, r.Check.HTTPStatus, r.Check.Error)
	}
}

// A 101 Switching Protocols hands the raw connection to the client as the
// body, which no deadline or cancellation closes any more: a server that
// answered robots.txt with one and then held the connection held the check
// (and the pass waiting for it) for as long as it liked. The crawler asks
// for no upgrade, so the answer is refused unread. With an hour's deadline,
// this test hangs without that.
func TestSwitchingProtocolsIsRefused(t *testing.T) {
	e := newEnv(t, func(o *crawl.Options) { o.RequestTimeout = time.Hour; o.CheckTimeout = time.Hour })
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	rt := instance("upgrade.social", "mastodon", `[]`)
	rt["/robots.txt"] = func(w http.ResponseWriter, r *http.Request) {
		c, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
		buf.Flush()
		<-release
	}
	e.host("upgrade.social", rt)
	r, _ := e.check("upgrade.social", crawl.CheckOptions{})
	if r.Check.Outcome == observer.OutcomeAlive || !strings.Contains(r.Check.Error, "101") {
		t.Errorf("outcome %s, error %q; want a failure naming the status", r.Check.Outcome, r.Check.Error)
	}
}

// An unwanted body (a 404 robots.txt here) that drips forever is given up
// after a moment rather than held until the request's deadline: with an
// hour's deadline, this test hangs without that.
func TestSlowUnwantedBodyIsNotAwaited(t *testing.T) {
	e := newEnv(t, func(o *crawl.Options) { o.RequestTimeout = time.Hour; o.CheckTimeout = time.Hour })
	rt := instance("drip.social", "mastodon", `[]`)
	rt["/robots.txt"] = func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		for {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-time.After(100 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
	}
	e.host("drip.social", rt)
	r, _ := e.check("drip.social", crawl.CheckOptions{})
	if r.Check.Outcome != observer.OutcomeAlive {
		t.Errorf("outcome %s (%s), want alive", r.Check.Outcome, r.Check.Error)
	}
}

// A paged list's redirects count against MaxPeerPages: a Misskey host that
// redirects every page five times within itself made six times the
// requests the cap allows.
func TestPagedPeersRedirectsCountAsRequests(t *testing.T) {
	const maxPages = 3
	e := newEnv(t, func(o *crawl.Options) { o.MaxPeerPages = maxPages })
	rt := instance("mk.social", "misskey", "")
	page := 0
	rt["/api/federation/instances"] = func(w http.ResponseWriter, r *http.Request) {
		hop := 0
		fmt.Sscanf(r.URL.RawQuery, "hop=%d", &hop)
		if hop < 5 {
			w.Header().Set("Location", fmt.Sprintf("/api/federation/instances?hop=%d", hop+1))
			w.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		var items []string
		for i := range 100 {
			items = append(items, fmt.Sprintf(`{"host":"p%d-%d.social"}`, page, i))
		}
		page++
		fmt.Fprint(w, "["+strings.Join(items, ",")+"]")
	}
	e.host("mk.social", rt)
	r, _ := e.check("mk.social", crawl.CheckOptions{FetchPeers: true})
	requests := 0
	for _, p := range e.srv.Paths("mk.social") {
		if strings.HasSuffix(p, "/api/federation/instances") {
			requests++
		}
	}
	// The first page's five redirects are followed, which is over the cap,
	// so no second page is asked for.
	if requests != 6 || page != 1 || r.Check.Outcome != observer.OutcomeAlive || r.Check.PeersCount != 100 {
		t.Errorf("%d requests for %d pages, outcome %s, %d peers; want 6 requests for 1 page of 100, alive",
			requests, page, r.Check.Outcome, r.Check.PeersCount)
	}
}
