package funcs

import (
	"fmt"
	"net/url"
	"path"
	"strings"
	"unicode"
)

// URLs is the urls namespace: links relative to the site's base URL,
// and text made fit for a URL.
type URLs struct{ e *env }

// isAbsURL reports whether s has a scheme (https:, mailto:) or is
// protocol-relative (//host/).
func isAbsURL(s string) bool {
	if strings.HasPrefix(s, "//") {
		return true
	}
	u, err := url.Parse(s)
	return err == nil && u.IsAbs()
}

// AbsURL makes a link absolute: "about/" is resolved against the base
// URL with its path (https://example.org/sub/about/), "/about/" against
// its host only (https://example.org/about/), and a link that is
// absolute already is left as it is.
func (u *URLs) AbsURL(v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("absURL: %w", err)
	}
	return u.e.absURL(s), nil
}

func (e *env) absURL(s string) string {
	if isAbsURL(s) {
		return s
	}
	if strings.HasPrefix(e.baseRaw, "/") {
		// No host in the base URL: the best absolute is the rooted one.
		return e.relURL(s)
	}
	base := *e.base
	rel, err := url.Parse(s)
	if err != nil {
		return s
	}
	if strings.HasPrefix(s, "/") {
		base.Path = rel.Path
	} else {
		base.Path = path.Join(base.Path, rel.Path)
		if (strings.HasSuffix(rel.Path, "/") || rel.Path == "") && !strings.HasSuffix(base.Path, "/") {
			base.Path += "/"
		}
	}
	base.RawPath = ""
	base.RawQuery = rel.RawQuery
	base.Fragment = rel.Fragment
	return base.String()
}

// RelURL makes a link relative to the host, with the base URL's path:
// "about/" gives /sub/about/ and "/about/" gives /about/ for a base URL
// of https://example.org/sub/. A link that is absolute is left as it is,
// unless it is under the base URL, which is then cut off.
func (u *URLs) RelURL(v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("relURL: %w", err)
	}
	return u.e.relURL(s), nil
}

func (e *env) relURL(s string) string {
	if strings.HasPrefix(s, "//") {
		return s
	}
	if isAbsURL(s) {
		withoutSlash := strings.TrimSuffix(e.baseRaw, "/")
		if !strings.HasPrefix(s, withoutSlash) || withoutSlash == "" {
			return s
		}
		s = strings.TrimPrefix(strings.TrimPrefix(s, withoutSlash), "/")
	}
	if strings.HasPrefix(s, "/") {
		return s
	}
	p := path.Join(e.base.Path, s)
	if (strings.HasSuffix(s, "/") || s == "") && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// AbsLangURL is absURL with the language's prefix, which a site of one
// language does not have.
func (u *URLs) AbsLangURL(v any) (string, error) { return u.AbsURL(v) }

// RelLangURL is relURL with the language's prefix, which a site of one
// language does not have.
func (u *URLs) RelLangURL(v any) (string, error) { return u.RelURL(v) }

// URLize makes text fit for a URL path as Hugo makes paths: spaces
// become hyphens, characters other than letters, digits and . / _ # + ~
// - @ are dropped, the rest lower-cased, and what remains escaped.
func (*URLs) URLize(v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("urlize: %w", err)
	}
	p := strings.ToLower(sanitizePath(s))
	u, err := url.Parse(p)
	if err != nil {
		return p, nil
	}
	return u.String(), nil
}

func sanitizePath(s string) string {
	var b strings.Builder
	pendingHyphen, lastHyphen := false, false
	for i, r := range s {
		if pathChar(s, i, r) {
			if pendingHyphen && r != '-' {
				b.WriteRune('-')
			}
			pendingHyphen = false
			lastHyphen = r == '-'
			b.WriteRune(r)
		} else if b.Len() > 0 && !lastHyphen && unicode.IsSpace(r) {
			pendingHyphen = true
		}
	}
	return b.String()
}

func pathChar(s string, i int, r rune) bool {
	switch {
	case r == ' ':
		return false
	case unicode.IsLetter(r), unicode.IsDigit(r), unicode.IsMark(r):
		return true
	case strings.ContainsRune("./\\_#+~-@", r):
		return true
	case r == '%':
		return i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Anchorize makes text an HTML id as Hugo's Markdown does for headings
// (GitHub's style): lower case, spaces as hyphens, punctuation dropped.
func (*URLs) Anchorize(v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("anchorize: %w", err)
	}
	var b strings.Builder
	for _, r := range strings.TrimSpace(s) {
		switch {
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(unicode.ToLower(r))
		case r == ' ' || r == '-':
			b.WriteRune('-')
		case r == '_':
			b.WriteRune('_')
		}
	}
	return b.String(), nil
}

// Parse parses a URL.
func (*URLs) Parse(v any) (*url.URL, error) {
	s, err := toString(v)
	if err != nil {
		return nil, fmt.Errorf("urls.Parse: %w", err)
	}
	return url.Parse(s)
}

// JoinPath joins a base URL and path elements.
func (*URLs) JoinPath(elements ...any) (string, error) {
	var parts []string
	for _, e := range elements {
		ss, err := toStringSlice(e)
		if err != nil {
			return "", fmt.Errorf("urls.JoinPath: %w", err)
		}
		parts = append(parts, ss...)
	}
	if len(parts) == 0 {
		return "", nil
	}
	u, err := url.Parse(parts[0])
	if err != nil {
		return "", fmt.Errorf("urls.JoinPath: %w", err)
	}
	return u.JoinPath(parts[1:]...).String(), nil
}

// PathEscape escapes text for a path segment.
func (*URLs) PathEscape(v any) (string, error) {
	s, err := toString(v)
	return url.PathEscape(s), err
}

// PathUnescape undoes PathEscape.
func (*URLs) PathUnescape(v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", err
	}
	return url.PathUnescape(s)
}
