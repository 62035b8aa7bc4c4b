package observer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Caps on the texts kept from an instance, in runes. The crawler cuts what
// a NodeInfo document says to these, the sandbox's orchestrator refuses a
// checker's result with anything longer, and the site builder cuts again
// whatever it is given.
const (
	MaxNameRunes        = 200
	MaxDescriptionRunes = 500
	MaxSoftwareRunes    = 100
	MaxVersionRunes     = 100
)

// CleanText makes an untrusted string safe to store: invalid UTF-8, NUL and
// other control characters, bidirectional controls, the byte order mark,
// interlinear annotation marks and noncharacters are dropped (line breaks,
// tabs and other white space, U+2028 and U+2029 included, become spaces), runs of white space collapse to one space, the ends are
// trimmed, and the result is cut to at most max runes. It does not escape
// HTML; whoever shows the text does that.
//
// Cleaning is idempotent: CleanText(CleanText(s, n), n) == CleanText(s, n),
// so a receiver can tell a clean text from one that is not by cleaning it
// again (s == CleanText(s, n)).
func CleanText(s string, max int) string {
	if max <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(min(len(s), 4*max))
	n := 0
	space := false
	for i := 0; i < len(s) && n < max; {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size <= 1:
			continue
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsControl(r), isBidiControl(r), r >= 0xFFF9 && r <= 0xFFFB, r == 0xFEFF, isNoncharacter(r):
			// Bidirectional overrides could make a name display as
			// something else; joiners and other format characters stay,
			// as scripts and emoji need them. Noncharacters are not for
			// interchange, and XML does not allow U+FFFE and U+FFFF.
			continue
		}
		if space {
			if n+1 >= max {
				break
			}
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// CleanSoftware is CleanText for a software name, which is also lower-cased
// and loses its invisible characters (NodeInfo's software.name is meant to
// be [a-z0-9-]+, and lists, stats and feeds group by it, so "mastodon" with
// a zero-width space must not make a row or a feed of its own). Lower
// casing maps rune to rune and keeps every rune's class, so the result is
// still clean and still within MaxSoftwareRunes.
func CleanSoftware(s string) string {
	return strings.ToLower(CleanText(strings.Map(dropInvisible, s), MaxSoftwareRunes))
}

// dropInvisible drops (returns -1 for) the runes Unicode says to render as
// nothing: format characters (zero-width space and joiners, soft hyphen),
// variation selectors and the other default-ignorable code points (Hangul
// fillers, the combining grapheme joiner), and U+FFFD, which is what JSON
// decoding makes of invalid UTF-8 ("mastodon\xff" arrives as "mastodon\uFFFD").
// An instance name keeps its joiners, which emoji need, and its U+FFFD,
// which shows that something was there; a software name has no use for
// either.
func dropInvisible(r rune) rune {
	if r == utf8.RuneError || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) {
		return -1
	}
	return r
}

// isNoncharacter reports the 66 Unicode noncharacters: U+FDD0 to U+FDEF and
// the last two code points of every plane.
func isNoncharacter(r rune) bool {
	return r >= 0xFDD0 && r <= 0xFDEF || r&0xFFFE == 0xFFFE
}

func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F || r == 0x061C
}
