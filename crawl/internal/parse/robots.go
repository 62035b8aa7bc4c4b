package parse

import (
	"bytes"
	"strings"

	"github.com/temoto/robotstxt"
)

// Robots is the part of a robots.txt that applies to one product token.
type Robots struct {
	group *robotstxt.Group // nil: everything allowed
}

// AllowAll is the policy when robots.txt is missing (any 4xx, RFC 9309
// section 2.3.1.3).
var AllowAll = &Robots{}

// ParseRobots reads a robots.txt body and keeps the group that applies to
// token, following RFC 9309: the group whose user-agent equals the product
// token (case-insensitively), otherwise the "*" group, otherwise none.
//
// temoto/robotstxt matches user-agents by prefix (a group for "F" would apply
// to "FediverseObserver") and gives up on the whole file at the first error;
// both are fixed here by rewriting the file before it parses it: other
// agents' names are replaced by one that cannot match, and lines it would
// reject (rules before any user-agent, bad crawl-delays) are dropped, since
// RFC 9309 asks crawlers to use what they can parse.
func ParseRobots(body []byte, token string) *Robots {
	token = strings.ToLower(token)
	other := token + "-other-agent" // longer than token, so never its prefix
	var out bytes.Buffer
	out.Grow(len(body))
	sawAgent := false
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	for len(body) > 0 {
		// RFC 9309 ends lines with CR, LF or CR LF, so split at either; the
		// empty line between CR and LF has no key and is skipped below.
		end := bytes.IndexAny(body, "\r\n")
		if end < 0 {
			end = len(body)
		}
		line := string(body[:end])
		body = body[min(end+1, len(body)):]
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.ToLower(strings.TrimSpace(key))
		value = strings.TrimSpace(value)
		switch key {
		case "user-agent", "useragent":
			sawAgent = true
			name := strings.ToLower(value)
			// Compare the product token only ("Name/1.0" names "name").
			if i := strings.IndexAny(name, "/ \t"); i >= 0 {
				name = name[:i]
			}
			if name != "*" && name != token {
				name = other
			}
			out.WriteString("user-agent: " + name + "\n")
		case "allow", "disallow":
			if !sawAgent {
				continue
			}
			// temoto/robotstxt splits lines at white space, so a space
			// inside a value would start new fields: "Disallow: /a
			// crawl-delay" made it reject the whole file (read as allow
			// all). A path has no literal white space (a URL escapes it),
			// so it is escaped here too, which matches it as Google's
			// parser does.
			out.WriteString(key + ": " + valueSpaces.Replace(value) + "\n")
		}
	}
	data, err := robotstxt.FromBytes(out.Bytes())
	if err != nil {
		return AllowAll
	}
	return &Robots{group: data.FindGroup(token)}
}

// valueSpaces escapes the bytes temoto/robotstxt splits fields at.
var valueSpaces = strings.NewReplacer(" ", "%20", "\t", "%09", "\v", "%0B")

// Allowed reports whether path (with its query, if any) may be fetched.
func (r *Robots) Allowed(path string) bool {
	if r == nil || r.group == nil {
		return true
	}
	if path == "/robots.txt" {
		return true
	}
	return r.group.Test(path)
}
