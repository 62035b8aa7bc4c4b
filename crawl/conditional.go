package crawl

import (
	"net/http"
)

// validators are a peers list's HTTP validators: sent back as
// If-None-Match and If-Modified-Since, and replaced by what the response
// says. They come from untrusted servers (this time or, via the derived
// state, an earlier time), so only well-formed values are sent or kept.
type validators struct {
	sentETag, sentLastModified string // what the request carried
	etag, lastModified         string // what the last 2xx or 304 response carried
}

// Header values are bounded: an ETag is an opaque quoted string that no
// sane server makes long, and an HTTP date is 29 bytes.
const (
	maxETagBytes         = 256
	maxLastModifiedBytes = 64
)

// cleanETag returns v if it is a usable entity tag (printable ASCII, at
// most maxETagBytes, optionally weak), else "".
func cleanETag(v string) string {
	if len(v) == 0 || len(v) > maxETagBytes || !printableASCII(v) {
		return ""
	}
	return v
}

// cleanLastModified returns v if it is an HTTP date, else "". It is kept
// verbatim: some servers compare If-Modified-Since as a string.
func cleanLastModified(v string) string {
	if len(v) == 0 || len(v) > maxLastModifiedBytes || !printableASCII(v) {
		return ""
	}
	if _, err := http.ParseTime(v); err != nil {
		return ""
	}
	return v
}

// KeptValidators reports whether etag and lastModified are peers-list
// validators the crawler could have recorded: each empty or as cleanETag
// and cleanLastModified keep it. The sandbox refuses a checker that
// reports others, and a request that carries others.
func KeptValidators(etag, lastModified string) (etagOK, lastModifiedOK bool) {
	return etag == "" || cleanETag(etag) == etag, lastModified == "" || cleanLastModified(lastModified) == lastModified
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func newValidators(etag, lastModified string) *validators {
	return &validators{sentETag: cleanETag(etag), sentLastModified: cleanLastModified(lastModified)}
}

func (v *validators) setHeaders(h http.Header) {
	if v == nil {
		return
	}
	if v.sentETag != "" {
		h.Set("If-None-Match", v.sentETag)
	}
	if v.sentLastModified != "" {
		h.Set("If-Modified-Since", v.sentLastModified)
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
	v.etag = cleanETag(resp.Header.Get("ETag"))
	v.lastModified = cleanLastModified(resp.Header.Get("Last-Modified"))
	if resp.StatusCode == http.StatusNotModified {
		// RFC 9110 lets a 304 leave out validators that did not change;
		// what was sent is then still current.
		if v.etag == "" {
			v.etag = v.sentETag
		}
		if v.lastModified == "" {
			v.lastModified = v.sentLastModified
		}
	}
}
