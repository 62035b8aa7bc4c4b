// Package hostname decides what a valid instance host name is. Every host the
// observer records (seeds, peers, redirect targets, manual additions, the
// checker's report) passes through Normalize at the trust boundary where it
// enters, which makes it an observer.Host; past that boundary the rest of
// the program carries the Host and never validates it again. The rules that
// follow from a name live here too: the seed list and blocklist files (one
// host or wildcard a line, read and checked by files.go and blocklist.go, a
// missing file being an empty list) and the registrable domain a host
// belongs to (for the crawl's per-domain budget). Which hosts the blocklist
// names is decided in one place, SQL's (duck's blocking macro), because
// the published lists are views over every known host.
package hostname

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"github.com/fediverse-observer/observer"
)

// maxInput bounds the work done on junk, since IDNA processing costs time
// proportional to the input. An input this long is refused even in the rare
// case it would map to a valid name (IDNA maps some characters, such as the
// soft hyphen, to nothing): no real peers list writes a name so.
const maxInput = 4 * observer.MaxHostBytes

// Fixed reasons, allocated once: junk is common in peers lists.
var (
	errEmpty       = errors.New("empty host name")
	errIP          = errors.New("is an IP address, not a host name")
	errUTF8        = errors.New("not valid UTF-8")
	errURL         = errors.New("is a URL, not a host name")
	errUserinfo    = errors.New("contains user information ('@')")
	errPath        = errors.New("contains a path")
	errQuery       = errors.New("contains a query or fragment")
	errWildcard    = errors.New("contains a wildcard")
	errSpace       = errors.New("contains white space")
	errEmptyLabel  = errors.New("contains an empty label")
	errIPPort      = errors.New("is an IP address with a port, not a host name")
	errPort        = errors.New("contains a port")
	errSingleLabel = errors.New("single-label name")
)

// profile is the IDNA lookup profile (RFC 5891 section 5, UTS #46
// non-transitional) with DNS length checks, so empty labels, labels over 63
// bytes and names over 253 bytes are rejected by the same code that maps them.
var profile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.VerifyDNSLength(true),
	idna.Transitional(false),
)

// Normalize returns the canonical ASCII form of a host name: IDNA to ASCII,
// lower case, one trailing dot removed. It rejects IP literals, ports, paths,
// queries, credentials, wildcards, empty labels, single-label names, names
// over 253 bytes and names whose suffix is not on the Public Suffix List (or
// that are nothing but a public suffix). The error says what is wrong.
// It is how an untrusted name becomes an observer.Host.
func Normalize(s string) (observer.Host, error) {
	var h string
	var err error
	if fast, ok := fastASCII(s); ok {
		h, err = checkSuffix(fast)
	} else {
		h, err = normalizeSlow(s)
	}
	return observer.Host(h), err
}

func normalizeSlow(s string) (string, error) {
	if err := precheck(s); err != nil {
		return "", err
	}
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return "", errEmpty
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return "", errIP
	}
	h, err := profile.ToASCII(s)
	if err != nil {
		return "", fmt.Errorf("not a valid IDNA host name: %v", idnaReason(err))
	}
	// The trailing dot is removed again after mapping: a full stop such as
	// U+3002 becomes one only here.
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return "", fmt.Errorf("contains %q, which is not allowed in a host name", rune(c))
		}
	}
	if len(h) > observer.MaxHostBytes {
		return "", fmt.Errorf("longer than %d bytes", observer.MaxHostBytes)
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return "", errIP
	}
	return checkSuffix(h)
}

// precheck gives specific reasons for the junk most often found in peers
// lists and seed files, before the generic IDNA validation would.
func precheck(s string) error {
	switch {
	case s == "":
		return errEmpty
	case len(s) > maxInput || len(strings.TrimSuffix(s, ".")) > observer.MaxHostBytes && isASCII(s):
		return fmt.Errorf("longer than %d bytes", observer.MaxHostBytes)
	case !utf8.ValidString(s):
		return errUTF8
	case strings.Contains(s, "://"):
		return errURL
	case strings.HasPrefix(s, "["):
		return errIP
	case strings.ContainsAny(s, "@"):
		return errUserinfo
	case strings.ContainsAny(s, "/\\"):
		return errPath
	case strings.ContainsAny(s, "?#"):
		return errQuery
	case strings.Contains(s, "*"):
		return errWildcard
	case strings.ContainsAny(s, " \t\r\n\v\f"):
		return errSpace
	case strings.HasPrefix(s, ".") || strings.Contains(s, ".."):
		return errEmptyLabel
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return errIP
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		if _, err := netip.ParseAddr(s[:i]); err == nil {
			return errIPPort
		}
		return errPort
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func idnaReason(err error) string {
	msg := err.Error()
	// The idna package's messages quote the whole input, which may be long
	// junk; keep only its first line and a bounded length.
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return strings.ToValidUTF8(msg, "?")
}

// checkSuffix requires h (already ASCII and lower case) to have a public
// suffix that is on the Public Suffix List, and to be longer than it.
func checkSuffix(h string) (string, error) {
	if !strings.Contains(h, ".") {
		return "", errSingleLabel
	}
	suffix, icann := publicsuffix.PublicSuffix(h)
	// For a name under no rule of the list, PublicSuffix applies the implicit
	// "*" rule: its last label, icann false. Every rule of the list's private
	// section has at least two labels, so a single-label non-ICANN suffix
	// means the TLD is unknown (.invalidtld, .test, .local, .example).
	if !icann && !strings.Contains(suffix, ".") {
		return "", fmt.Errorf("top-level domain %q is not on the Public Suffix List", suffix)
	}
	if len(h) <= len(suffix) {
		return "", fmt.Errorf("is a public suffix (%s), not a host", suffix)
	}
	return h, nil
}

// Registrable returns the host's registrable domain at the ICANN level
// (eTLD+1: mastodon.example.co.uk → example.co.uk). Private suffixes such as
// github.io are ignored on purpose: the spam budget must not let one
// operator's million subdomains count as a million domains.
func Registrable(host string) string {
	suffix, _ := icannSuffix(host)
	if len(host) <= len(suffix) {
		return host
	}
	rest := host[:len(host)-len(suffix)-1]
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		rest = rest[i+1:]
	}
	return rest + "." + suffix
}

// icannSuffix finds the longest ICANN public suffix of host, skipping
// private-section rules.
func icannSuffix(host string) (string, bool) {
	for h := host; ; {
		suffix, icann := publicsuffix.PublicSuffix(h)
		if icann {
			return suffix, true
		}
		// A private rule matched (or none did); drop the leftmost label of
		// the match and look again for the ICANN suffix below it.
		i := strings.IndexByte(suffix, '.')
		if i < 0 {
			return suffix, false
		}
		h = suffix[i+1:]
	}
}

// fastASCII handles the overwhelmingly common case of a host that is already
// plain LDH ASCII. It reports ok only when the IDNA lookup profile would
// return the same (lower-cased) string unchanged; anything else (xn-- labels,
// "--" in positions 3-4, non-ASCII, odd punctuation) goes the slow way, so
// both paths accept exactly the same names. A differential fuzz test keeps
// them in agreement.
func fastASCII(s string) (string, bool) {
	n := len(s)
	if n > 0 && s[n-1] == '.' {
		n--
	}
	if n == 0 || n > observer.MaxHostBytes {
		return "", false
	}
	upper := false
	labelStart := 0
	for i := 0; i <= n; i++ {
		if i == n || s[i] == '.' {
			l := i - labelStart
			if l == 0 || l > 63 || s[labelStart] == '-' || s[i-1] == '-' {
				return "", false
			}
			if l >= 4 && s[labelStart+2] == '-' && s[labelStart+3] == '-' {
				return "", false
			}
			labelStart = i + 1
			continue
		}
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
		case c >= 'A' && c <= 'Z':
			upper = true
		default:
			return "", false
		}
	}
	h := s[:n]
	// An all-numeric last label could make this an IPv4 literal; the slow
	// path gives that its proper error.
	last := h[strings.LastIndexByte(h, '.')+1:]
	if strings.Trim(last, "0123456789") == "" {
		return "", false
	}
	if upper {
		h = strings.ToLower(h)
	}
	return h, true
}

// ReadList reads a host-per-line file such as the seed list (a blocklist,
// which may hold "*.domain" entries, is read by ReadBlocklist).
// Blank lines and lines starting with '#' are skipped, as is anything after a
// " #" on a line. Each valid host is returned once, normalised, in order of
// first appearance; each invalid line yields an error naming its number and
// text. A read error ends the list and is returned as the last error.
func ReadList(r io.Reader) (hosts []observer.Host, errs []error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	seen := make(map[observer.Host]struct{})
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.Index(text, " #"); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		h, err := Normalize(text)
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %q: %w", line, text, err))
			continue
		}
		if _, dup := seen[h]; dup {
			continue
		}
		seen[h] = struct{}{}
		hosts = append(hosts, h)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, readError(line, err))
	}
	return hosts, errs
}

// readError is the error that ended the reading of a list after lines
// lines. It names the last line read, so the operator knows how far the
// list got. Before the first there is none, and "after line 0" read as a
// line number (a seed list that is a directory said it): a first line too
// long is line 1's error, and any other error names no line.
func readError(lines int, err error) error {
	switch {
	case lines > 0:
		return fmt.Errorf("after line %d: %w", lines, err)
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("line 1: %w", err)
	}
	return err
}
