package parse

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanText makes an untrusted string safe to store: invalid UTF-8, NUL and
// other control and format characters are dropped (line breaks and tabs
// become spaces), runs of white space collapse to one space, the ends are
// trimmed, and the result is cut to at most max runes. It does not escape
// HTML; whoever shows the text does that.
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
		case unicode.IsControl(r), isBidiControl(r), r >= 0xFFF9 && r <= 0xFFFB, r == 0xFEFF:
			// Bidirectional overrides could make a name display as
			// something else; joiners and other format characters stay,
			// as scripts and emoji need them.
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

func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F || r == 0x061C
}
