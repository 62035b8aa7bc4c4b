package parse

import (
	"bytes"
	"strings"
)

// Robots is the part of a robots.txt that applies to one product token.
type Robots struct {
	rules []robotsRule // none: everything allowed
}

// A robotsRule is one Allow or Disallow line with a non-empty pattern.
type robotsRule struct {
	pattern string // escaped; its length is the rule's precedence
	allow   bool
	// The pattern split at '*', without a final '$', which anchored
	// stands for: split once here rather than at every match.
	pieces   []string
	anchored bool
}

// AllowAll is the policy when robots.txt is missing (any 4xx, RFC 9309
// section 2.3.1.3).
var AllowAll = &Robots{}

// ParseRobots reads a robots.txt body and keeps the rules that apply to
// token, following RFC 9309: those of the groups whose user-agent equals the
// product token (case-insensitively), otherwise those of the "*" groups,
// otherwise none. Lines it cannot use (rules before any user-agent, other
// keys) are skipped, since RFC 9309 asks crawlers to use what they can
// parse.
//
// The matching is written here rather than taken from a library because
// temoto/robotstxt, used before, dropped a trailing '*' from patterns (so
// "Disallow: *", a blanket opt-out, became an empty rule that disallows
// nothing) and matched wildcard patterns anywhere in the path rather than
// from its start (so "Allow: /v1/*/peers" beat "Disallow: /api/" for
// /api/v1/instance/peers, and "Allow: /$" allowed every path ending in
// '/'): both overrode opt-outs.
func ParseRobots(body []byte, token string) *Robots {
	token = strings.ToLower(token)
	var own, star []robotsRule
	sawOwn := false
	// The group being read: which of token and "*" its user-agent lines
	// named, and whether a rule has followed them, after which a
	// user-agent line starts a new group.
	forOwn, forStar, inRules := false, false, false
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
			if inRules {
				forOwn, forStar, inRules = false, false, false
			}
			name := strings.ToLower(value)
			// Compare the product token only ("Name/1.0" names "name").
			if i := strings.IndexAny(name, "/ \t"); i >= 0 {
				name = name[:i]
			}
			switch name {
			case token:
				forOwn, sawOwn = true, true
			case "*":
				forStar = true
			}
		case "allow", "disallow":
			// Even an empty rule ends the group's user-agent lines:
			// "User-agent: a", "Disallow:", "User-agent: b" are two
			// groups, and only b's rules apply to b.
			inRules = true
			if value == "" {
				continue // "Disallow:" disallows nothing (RFC 9309 section 2.2.2)
			}
			r := newRobotsRule(value, key == "allow")
			if forOwn {
				own = append(own, r)
			}
			if forStar {
				star = append(star, r)
			}
		}
	}
	// The token's own groups replace "*" even when they have no rules:
	// "User-agent: FediverseObserver / Disallow:" allows everything to us
	// whatever "*" is told.
	if sawOwn {
		return &Robots{rules: own}
	}
	return &Robots{rules: star}
}

func newRobotsRule(value string, allow bool) robotsRule {
	// A path starts with '/', so "Disallow: private" would match nothing;
	// its author means /private, and that is how it was read before.
	if value[0] != '/' && value[0] != '*' {
		value = "/" + value
	}
	p := escapePath(value)
	body, anchored := strings.CutSuffix(p, "$")
	return robotsRule{pattern: p, allow: allow, pieces: strings.Split(body, "*"), anchored: anchored}
}

// matches reports whether the rule's pattern matches path from its start,
// '*' standing for any run of octets and a final '$' for the end of the
// path (RFC 9309 section 2.2.3). Placing each piece between stars at its
// first occurrence leaves the most of the path for the pieces after it, so
// no backtracking is needed.
func (r *robotsRule) matches(path string) bool {
	rest, ok := strings.CutPrefix(path, r.pieces[0])
	if !ok {
		return false
	}
	last := len(r.pieces) - 1
	if last == 0 {
		return !r.anchored || rest == ""
	}
	for _, p := range r.pieces[1:last] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	if r.anchored {
		return strings.HasSuffix(rest, r.pieces[last])
	}
	return strings.Contains(rest, r.pieces[last])
}

// escapePath percent-encodes the octets a URL never holds literally (white
// space, controls, non-ASCII), decodes percent-encoded unreserved
// characters and upper-cases the hex digits of the other percent-encodings,
// so that a pattern and a path that spell one URL differently compare equal
// (RFC 9309 section 2.2.2): "Disallow: /a b" matches /a%20b, as with
// Google's parser, "/caf%c3%a9" matches /café, and "/%61pi/" matches /api/
// (so an opt-out, or a redirect, cannot slip past in another spelling).
func escapePath(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c <= ' ' || c >= 0x7f:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			// An unreserved character means the same escaped or not
			// (RFC 3986 section 2.3), so it is compared decoded: RFC 9309's
			// own example has /foo/bar/%62%61%7A match /foo/bar/baz.
			if d := unhex(s[i+1])<<4 | unhex(s[i+2]); isUnreserved(d) {
				b.WriteByte(d)
			} else {
				b.WriteByte('%')
				b.WriteByte(upper(s[i+1]))
				b.WriteByte(upper(s[i+2]))
			}
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// isUnreserved reports RFC 3986's unreserved characters.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

// Allowed reports whether path (with its query, if any) may be fetched: the
// matching rule with the longest pattern decides, Allow if an Allow and a
// Disallow rule are as long (RFC 9309 section 2.2.2), and a path no rule
// matches is allowed. /robots.txt itself always is (section 2.2.2).
func (r *Robots) Allowed(path string) bool {
	if r == nil || len(r.rules) == 0 || path == "/robots.txt" {
		return true
	}
	path = escapePath(path)
	longest, allowed := -1, true
	for i := range r.rules {
		rule := &r.rules[i]
		n := len(rule.pattern)
		if n < longest || n == longest && !rule.allow {
			continue // could not change the outcome
		}
		if rule.matches(path) {
			longest, allowed = n, rule.allow
		}
	}
	return allowed
}
