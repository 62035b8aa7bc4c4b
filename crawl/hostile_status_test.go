package crawl_test

import (
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
