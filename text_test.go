package observer_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/fediverse-observer/observer"
)

func TestCleanText(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"  Hello\n\tWorld  ", 100, "Hello World"},
		{"a\x00b\x1bc\x7fd", 100, "abcd"},
		{"bad \xff\xfe utf8", 100, "bad utf8"},
		{"rtl\u202eoverride", 100, "rtloverride"},
		// Every bidirectional control goes, the single marks (LRM, RLM,
		// ALM) as well as the embeddings, overrides and isolates, at both
		// ends of each range; their neighbours (ZWJ, hyphen, Arabic
		// punctuation, U+206A) are ordinary text and stay, and U+202F, just
		// past the range, is a space.
		{"a\u200eb\u200fc\u061cd", 100, "abcd"},
		{"x\u202ay\u202ez\u2066w\u2069v", 100, "xyzwv"},
		{"\u200d\u2010\u061b\u061d\u2065\u206a", 100, "\u200d\u2010\u061b\u061d\u2065\u206a"},
		{"a\u202fb", 100, "a b"},
		// Interlinear annotation marks U+FFF9 to U+FFFB go; U+FFF8 and the
		// object replacement character U+FFFC on either side stay.
		{"\ufff8\ufff9\ufffa\ufffb\ufffc", 100, "\ufff8\ufffc"},
		// The noncharacter block U+FDD0 to U+FDEF goes, both ends of it;
		// the Arabic ligatures U+FDCF and U+FDF0 around it stay.
		{"\ufdcf\ufdd0\ufdef\ufdf0", 100, "\ufdcf\ufdf0"},
		{"émoji 👩\u200d💻", 100, "émoji 👩\u200d💻"},
		{"ééééé", 3, "ééé"},
		{"ab cd", 3, "ab"},
		{"<script>", 100, "<script>"},
		{"\r\n=1+1", 100, "=1+1"},
		{"c1 \u0085\u0080\u009f end", 100, "c1 end"},
		{"lsep \u2028 psep \u2029 end", 100, "lsep psep end"},
		{"bom\ufeff and \ufff9anchor", 100, "bom and anchor"},
		{"nonchar \ufffe\uffff\ufdd0\U0010FFFF end", 100, "nonchar end"},
		{"x", 0, ""},
	}
	for _, c := range cases {
		if got := observer.CleanText(c.in, c.max); got != c.want {
			t.Errorf("CleanText(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

func TestCleanSoftware(t *testing.T) {
	for in, want := range map[string]string{
		" Mastodon ":             "mastodon",
		"UPPER\tSoftware":        "upper software",
		"İstanbul":               "istanbul",
		strings.Repeat("Ä", 150): strings.Repeat("ä", observer.MaxSoftwareRunes),
		"\u202Eevil\u202C":       "evil",
		"":                       "",
		// Invisible characters would make a row, and a feed, of their own.
		"mas\u200btodon":       "mastodon",
		"\u2060mastodon\u00ad": "mastodon",
		"mastodon\ufe0f\u3164": "mastodon",
		"mastodon\ufffd":       "mastodon",
		"\u200d":               "",
		"two \u200b words":     "two words",
	} {
		if got := observer.CleanSoftware(in); got != want {
			t.Errorf("CleanSoftware(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCleanText checks what receivers rely on: the result is valid UTF-8
// within the cap, free of control and bidi characters and of white space
// other than single inner spaces, and cleaning it again changes nothing
// (so s == CleanText(s, n) tells a clean text from one that is not).
func FuzzCleanText(f *testing.F) {
	f.Add("  Hello\n\tWorld  ", 100)
	f.Add("a\x00b\x1bc\x7fd\u202e\xff", 5)
	f.Add("émoji 👩\u200d💻 İ", 3)
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 1000
		if max < 0 {
			max = -max
		}
		got := observer.CleanText(s, max)
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > max {
			t.Fatalf("CleanText(%q, %d) = %q: invalid or too long", s, max, got)
		}
		if got != strings.TrimSpace(got) || strings.Contains(got, "  ") {
			t.Fatalf("CleanText(%q, %d) = %q: untrimmed or uncollapsed space", s, max, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) || r != ' ' && unicode.IsSpace(r) || r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r&0xFFFE == 0xFFFE {
				t.Fatalf("CleanText(%q, %d) = %q: keeps %U", s, max, got, r)
			}
		}
		if again := observer.CleanText(got, max); again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, got, again)
		}
		sw := observer.CleanSoftware(s)
		if observer.CleanText(sw, observer.MaxSoftwareRunes) != sw || strings.ToLower(sw) != sw || observer.CleanSoftware(sw) != sw {
			t.Fatalf("CleanSoftware(%q) = %q is not clean lower case", s, sw)
		}
		for _, r := range sw {
			if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) {
				t.Fatalf("CleanSoftware(%q) = %q: keeps the invisible %U", s, sw, r)
			}
		}
	})
}
