package hostname_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/hostname"
)

func TestNormalizeAccepts(t *testing.T) {
	cases := []struct{ in, want string }{
		{"mastodon.social", "mastodon.social"},
		{"Mastodon.Social", "mastodon.social"},
		{"MASTODON.SOCIAL.", "mastodon.social"},
		{"mastodon.social.", "mastodon.social"},
		{"bücher.de", "xn--bcher-kva.de"},
		{"BÜCHER.de", "xn--bcher-kva.de"},
		{"xn--bcher-kva.de", "xn--bcher-kva.de"},
		{"XN--BCHER-KVA.DE", "xn--bcher-kva.de"},
		{"social.example.co.uk", "social.example.co.uk"},
		{"a.b.c.d.fedi.network", "a.b.c.d.fedi.network"},
		{"my-instance.social", "my-instance.social"},
		{"1.2.3.social", "1.2.3.social"},
		{"foo.github.io", "foo.github.io"}, // private section of the list
		{"фото.рф", "xn--n1aalg.xn--p1ai"},
		{"pleroma。example。com", "pleroma.example.com"},  // ideographic full stop
		{"pleroma.example.com。", "pleroma.example.com"}, // a trailing one, as a trailing "."
		{"pleroma.example.com．", "pleroma.example.com"}, // full-width full stop
		{"ｍａｓｔｏｄｏｎ.social", "mastodon.social"},          // full-width letters
		{"😀.social", "xn--e28h.social"},                 // UTS #46 allows emoji; so do browsers
		{strings.Repeat("a", 63) + ".social", strings.Repeat("a", 63) + ".social"},
	}
	for _, c := range cases {
		got, err := hostname.Normalize(c.in)
		if err != nil {
			t.Errorf("Normalize(%q): unexpected error %v", c.in, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNormalizeRejects(t *testing.T) {
	long := strings.Repeat(strings.Repeat("a", 60)+".", 5) + "social" // 311 bytes
	cases := []struct{ in, why string }{
		{"", "empty"},
		{".", "empty"},
		{"127.0.0.1", "IP address"},
		{"8.8.8.8", "IP address"},
		{"8.8.8.8.", "IP address"},
		{"8.8.8.8。", "IP address"},
		{"。", "IDNA"},
		{"::1", "IP address"},
		{"2001:db8::1", "IP address"},
		{"[2001:db8::1]", "IP address"},
		{"[::1]:443", "IP address"},
		// The two port reasons are told apart: an IP with a port is an IP.
		{"127.0.0.1:8080", "is an IP address with a port"},
		{"mastodon.social:443", "contains a port"},
		{"https://mastodon.social", "URL"},
		{"mastodon.social/about", "path"},
		{"mastodon.social/", "path"},
		{"mastodon.social?x=1", "query"},
		{"mastodon.social#top", "query"},
		{"user@mastodon.social", "user information"},
		{"user:pass@mastodon.social", "user information"},
		{"*.x.social", "wildcard"},
		{"*", "wildcard"},
		{"foo..social", "empty label"},
		{".foo.social", "empty label"},
		{"foo.social..", "empty label"},
		{"localhost", "single-label"},
		{"mastodon", "single-label"},
		{"foo.invalidtld", "Public Suffix List"},
		{"foo.example", "Public Suffix List"},
		{"foo.test", "Public Suffix List"},
		{"printer.local", "Public Suffix List"},
		{"foo.localhost", "Public Suffix List"},
		{"social", "single-label"},
		{"co.uk", "public suffix"},
		{"github.io", "public suffix"},
		{long, "longer than 253"},
		{strings.Repeat("a", 64) + ".social", "IDNA"},
		{strings.Repeat("x", 5000), "longer than 253"},
		{"-foo.social", "IDNA"},
		{"foo-.social", "IDNA"},
		{"ab--cd.social", "IDNA"},
		{"xn--zz.social", "IDNA"},
		{"under_score.social", "IDNA"},
		{"mastodon social", "white space"},
		{" mastodon.social", "white space"},
		{"foo.😀", "Public Suffix List"},
		{"😀", "single-label"},
		{"\xff\xfe.social", "UTF-8"},
		{"foo\x00.social", "IDNA"},
		{"<script>.social", "IDNA"},
		{"foo.social\\bar", "path"},
		{"0x7f.1", "Public Suffix List"},
	}
	for _, c := range cases {
		got, err := hostname.Normalize(c.in)
		if err == nil {
			t.Errorf("Normalize(%q) = %q, want an error about %s", c.in, got, c.why)
			continue
		}
		if !strings.Contains(err.Error(), c.why) {
			t.Errorf("Normalize(%q): error %q does not mention %q", c.in, err, c.why)
		}
	}
}

func TestReadList(t *testing.T) {
	in := `# seeds
mastodon.social
  Pixelfed.Social.  

# comment line
lemmy.world # trailing comment
mastodon.social
127.0.0.1
foo.invalidtld
`
	hosts, errs := hostname.ReadList(strings.NewReader(in))
	want := []string{"mastodon.social", "pixelfed.social", "lemmy.world"}
	if fmt.Sprint(hosts) != fmt.Sprint(want) {
		t.Errorf("hosts = %v, want %v", hosts, want)
	}
	if len(errs) != 2 {
		t.Fatalf("errs = %v, want 2 errors", errs)
	}
	for i, w := range []string{`line 8: "127.0.0.1"`, `line 9: "foo.invalidtld"`} {
		if !strings.Contains(errs[i].Error(), w) {
			t.Errorf("error %d = %q, want it to contain %q", i, errs[i], w)
		}
	}
}

func TestReadListReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	hosts, errs := hostname.ReadList(errReader{data: "a.social\n", err: boom})
	if len(hosts) != 1 || hosts[0] != "a.social" {
		t.Errorf("hosts = %v", hosts)
	}
	if len(errs) != 1 || !errors.Is(errs[0], boom) {
		t.Errorf("errs = %v, want the read error", errs)
	}
}

// A read error before any line (a seed list that is a directory) names no
// line: it said "after line 0", as if the file had a line 0.
func TestReadListsReadErrorBeforeAnyLine(t *testing.T) {
	boom := errors.New("read adir: is a directory")
	hosts, errs := hostname.ReadList(errReader{err: boom})
	if len(hosts) != 0 || len(errs) != 1 || errs[0].Error() != boom.Error() || !errors.Is(errs[0], boom) {
		t.Errorf("ReadList: %q, %v; want only %q", hosts, errs, boom)
	}
	b, errs := hostname.ReadBlocklist(errReader{err: boom})
	if b.Len() != 0 || len(errs) != 1 || errs[0].Error() != boom.Error() || !errors.Is(errs[0], boom) {
		t.Errorf("ReadBlocklist: %q, %v; want only %q", b.Entries(), errs, boom)
	}
}

type errReader struct {
	data string
	err  error
}

func (r errReader) Read(p []byte) (int, error) {
	if len(p) < len(r.data) {
		panic("test buffer too small")
	}
	return copy(p, r.data), r.err
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"mastodon.social", "Bücher.DE.", "xn--bcher-kva.de", "127.0.0.1", "[::1]:80",
		"a..b", "*.x.social", "user@host.social", "ab--cd.social", "foo.invalidtld", "фото.рф", "a.b-c.co.uk", "。.social"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := hostname.Normalize(s)
		if err != nil {
			return
		}
		if len(h) == 0 || len(h) > observer.MaxHostBytes {
			t.Fatalf("Normalize(%q) = %q: bad length", s, h)
		}
		for i := 0; i < len(h); i++ {
			c := h[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
				t.Fatalf("Normalize(%q) = %q: byte %q not allowed", s, h, c)
			}
		}
		again, err := hostname.Normalize(string(h))
		if err != nil || again != h {
			t.Fatalf("not idempotent: Normalize(%q) = %q, then %q, %v", s, h, again, err)
		}
	})
}

func TestRegistrable(t *testing.T) {
	for host, want := range map[string]string{
		"mastodon.social":             "mastodon.social",
		"a.b.mastodon.social":         "mastodon.social",
		"social.example.co.uk":        "example.co.uk",
		"node7.fedi-spam-farm.online": "fedi-spam-farm.online",
		// github.io is a private suffix: ICANN-level, all of these are one domain.
		"alice.github.io": "github.io",
		"bob.github.io":   "github.io",
		// Not a host, but no panic either: a public suffix is its own domain.
		"co.uk":  "co.uk",
		"social": "social",
	} {
		if got := hostname.Registrable(host); got != want {
			t.Errorf("Registrable(%q) = %q, want %q", host, got, want)
		}
	}
}

// TestNormalizeLengthBounds pins the 253-byte limit at its edge on both
// paths: the ASCII fast path (plain names) and the IDNA path (a name with an
// xn-- label goes that way), with and without the trailing dot, which does
// not count.
func TestNormalizeLengthBounds(t *testing.T) {
	// label63 is 63 bytes: four of them and their dots make 255, so the
	// names below are cut to size from the left.
	label63 := strings.Repeat("a", 63)
	four := strings.Join([]string{label63, label63, label63, label63}, ".")
	name := func(prefix string, n int) string {
		s := prefix + four[len(four)-(n-len(prefix)-len(".social")):] + ".social"
		if len(s) != n {
			t.Fatalf("built %d bytes, want %d", len(s), n)
		}
		return s
	}
	for _, in := range []string{
		name("", 253), name("", 253) + ".",
		name("xn--bcher-kva.", 253), name("xn--bcher-kva.", 253) + ".",
	} {
		if got, err := hostname.Normalize(in); err != nil || string(got) != strings.TrimSuffix(in, ".") {
			t.Errorf("Normalize(%d bytes %.20q…) = %q, %v; want it unchanged", len(in), in, got, err)
		}
	}
	for _, in := range []string{name("", 254), name("xn--bcher-kva.", 254)} {
		if got, err := hostname.Normalize(in); err == nil || !strings.Contains(err.Error(), "longer than 253") {
			t.Errorf("Normalize(%d bytes %.20q…) = %q, %v; want too long", len(in), in, got, err)
		}
	}
}

// TestNormalizeBoundsInput: input over 4*253 bytes is refused before IDNA
// runs, even when it would map to a valid name (a soft hyphen, two bytes of
// UTF-8, maps to nothing); up to that length it is mapped.
func TestNormalizeBoundsInput(t *testing.T) {
	const maxInput = 4 * observer.MaxHostBytes
	shy := strings.Repeat("\u00ad", 498) // 996 bytes
	in := shy + "mastodons.social"       // 1012 bytes
	if len(in) != maxInput {
		t.Fatalf("built %d bytes", len(in))
	}
	if got, err := hostname.Normalize(in); err != nil || got != "mastodons.social" {
		t.Errorf("Normalize(%d bytes) = %q, %v; want mastodons.social", len(in), got, err)
	}
	in = shy + "mastodonss.social"
	if got, err := hostname.Normalize(in); err == nil || !strings.Contains(err.Error(), "longer than 253") {
		t.Errorf("Normalize(%d bytes) = %q, %v; want refused as too long", len(in), got, err)
	}
}

// TestNormalizeErrorIsBounded: the IDNA library's message quotes the whole
// (mapped) input; the reason keeps a bounded prefix of it, since it ends up
// in logs once per junk peer.
func TestNormalizeErrorIsBounded(t *testing.T) {
	in := "ü" + strings.Repeat("a", 900) + ".social"
	_, err := hostname.Normalize(in)
	if err == nil || !strings.Contains(err.Error(), "IDNA") {
		t.Fatalf("Normalize: %v, want an IDNA error", err)
	}
	if n := len(err.Error()); n > 300 {
		t.Errorf("error is %d bytes: %.80q…", n, err)
	}
}
