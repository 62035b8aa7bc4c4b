package crawl

import (
	"net/http"

	"github.com/fediverse-observer/observer"
)

// validators are a peers list's HTTP validators: sent back as
// If-None-Match and If-Modified-Since, and replaced by what the response
// says. They come from untrusted servers (this time or, via the derived
// state, an earlier time), so only well-formed values are sent or kept.
type validators struct {
	sent observer.PeersValidators // what the request carried
	kept observer.PeersValidators // what the last 2xx or 304 response carried
}

// cleanETag returns v if it is a usable entity tag (printable ASCII, at
// most observer.MaxETagBytes, optionally weak), else "".
func cleanETag(v string) string {
	if len(v) == 0 || len(v) > observer.MaxETagBytes || !printableASCII(v) {
		return ""
	}
	return v
}

// cleanLastModified returns v if it is an HTTP date, else "". It is kept
// verbatim: some servers compare If-Modified-Since as a string.
func cleanLastModified(v string) string {
	if len(v) == 0 || len(v) > observer.MaxLastModifiedBytes || !printableASCII(v) {
		return ""
	}
	if _, err := http.ParseTime(v); err != nil {
		return ""
	}
	return v
}

// KeptValidators reports whether v's ETag and Last-Modified are peers-list
// validators the crawler could have recorded: each empty or as cleanETag
// and cleanLastModified keep it. The sandbox refuses a checker that
// reports others, and a request that carries others.
func KeptValidators(v observer.PeersValidators) (etagOK, lastModifiedOK bool) {
	return v.PeersETag == "" || cleanETag(v.PeersETag) == v.PeersETag,
		v.PeersLastModified == "" || cleanLastModified(v.PeersLastModified) == v.PeersLastModified
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func newValidators(v observer.PeersValidators) *validators {
	return &validators{sent: observer.PeersValidators{
		PeersETag: cleanETag(v.PeersETag), PeersLastModified: cleanLastModified(v.PeersLastModified)}}
}

func (v *validators) setHeaders(h http.Header) {
	if v == nil {
		return
	}
	if v.sent.PeersETag != "" {
		h.Set("If-None-Match", v.sent.PeersETag)
	}
	if v.sent.PeersLastModified != "" {
		h.Set("If-Modified-Since", v.sent.PeersLastModified)
	}
}

// keep records the validators of a response that has them to give: a 2xx
// (the list itself) or a 304 (the list is unchanged).
func (v *validators) keep(resp *http.Response) {
	if v == nil {
		return
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299 || resp.StatusCode == http.StatusNotModified
	if !ok {
		return
	}
	v.kept.PeersETag = cleanETag(resp.Header.Get("ETag"))
	v.kept.PeersLastModified = cleanLastModified(resp.Header.Get("Last-Modified"))
	if resp.StatusCode == http.StatusNotModified {
		// RFC 9110 lets a 304 leave out validators that did not change;
		// what was sent is then still current.
		if v.kept.PeersETag == "" {
			v.kept.PeersETag = v.sent.PeersETag
		}
		if v.kept.PeersLastModified == "" {
			v.kept.PeersLastModified = v.sent.PeersLastModified
		}
	}
}
