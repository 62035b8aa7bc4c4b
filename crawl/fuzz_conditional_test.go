package crawl

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer"
)

// FuzzValidators feeds server header values to cleanETag and
// cleanLastModified, which decide what is stored and sent back as
// If-None-Match and If-Modified-Since: a value is kept verbatim or dropped;
// a kept one is printable ASCII within its bound, a kept Last-Modified is an
// HTTP date, and a printable ETag within the bound is kept. The values a
// response leaves in validators obey the same rules.
func FuzzValidators(f *testing.F) {
	for _, s := range []string{
		`"v1"`, `W/"v1"`, `"l1"`, "Wed, 21 Oct 2026 07:28:00 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
		"Sun Nov  6 08:49:37 1994", "Wed, 21 Oct 2026 07:28:00 UTC", "2026-10-21T07:28:00Z", "", " ", "\x7f",
		"\"v1\"\r\nX-Injected: 1", "é", "\x00", strings.Repeat("e", observer.MaxETagBytes), strings.Repeat("e", observer.MaxETagBytes+1),
		"Wed, 21 Oct 2026 07:28:00 GMT" + strings.Repeat(" ", observer.MaxLastModifiedBytes),
	} {
		f.Add(s, 200)
		f.Add(s, 304)
	}
	f.Fuzz(func(t *testing.T, v string, status int) {
		printable := func(s string) bool {
			for _, c := range []byte(s) {
				if c < ' ' || c > '~' {
					return false
				}
			}
			return true
		}
		e := cleanETag(v)
		if e != "" && (e != v || len(e) > observer.MaxETagBytes || !printable(e)) {
			t.Fatalf("cleanETag(%q) = %q", v, e)
		}
		if e == "" && v != "" && len(v) <= observer.MaxETagBytes && printable(v) {
			t.Fatalf("cleanETag(%q) dropped a usable tag", v)
		}
		lm := cleanLastModified(v)
		if lm != "" {
			if lm != v || len(lm) > observer.MaxLastModifiedBytes || !printable(lm) {
				t.Fatalf("cleanLastModified(%q) = %q", v, lm)
			}
			if _, err := http.ParseTime(lm); err != nil {
				t.Fatalf("cleanLastModified(%q) kept a value that is no HTTP date: %v", v, err)
			}
		}

		// Sent: what the schedule kept from an earlier response.
		val := newValidators(observer.PeersValidators{PeersETag: v, PeersLastModified: v})
		h := http.Header{}
		val.setHeaders(h)
		if h.Get("If-None-Match") != e || h.Get("If-Modified-Since") != lm || len(h) > 2 {
			t.Fatalf("%q: sent %v, want %q and %q", v, h, e, lm)
		}
		// Received: the response's validators, or on a 304 without them
		// the ones sent.
		resp := &http.Response{StatusCode: status, Header: http.Header{}}
		resp.Header.Set("ETag", v)
		resp.Header.Set("Last-Modified", v)
		val.keep(resp)
		if ok := status >= 200 && status <= 299 || status == http.StatusNotModified; ok {
			if val.kept.PeersETag != e || val.kept.PeersLastModified != lm {
				t.Fatalf("%q, status %d: kept %q %q, want %q %q", v, status, val.kept.PeersETag, val.kept.PeersLastModified, e, lm)
			}
		} else if val.kept.PeersETag != "" || val.kept.PeersLastModified != "" {
			t.Fatalf("%q, status %d: kept %q %q from a response without validators to give", v, status, val.kept.PeersETag, val.kept.PeersLastModified)
		}
	})
}
