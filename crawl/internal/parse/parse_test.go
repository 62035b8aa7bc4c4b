package parse_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl/internal/parse"
)

func collect(t testing.TB, r io.Reader) ([]string, error) {
	var out []string
	err := parse.StringArray(r, func(b []byte, class uint8) {
		if class != parse.Class(b) && b != nil {
			t.Errorf("class of %q = %d, want %d", b, class, parse.Class(b))
		}
		out = append(out, string(b))
	})
	return out, err
}

func TestStringArray(t *testing.T) {
	long := strings.Repeat("a", 2000)
	good := []struct {
		in   string
		want []string
	}{
		{`[]`, nil},
		{" \n[ ] \t", nil},
		{`["a.social"]`, []string{"a.social"}},
		{`[ "a.social" , "B.Social" ,"c"]`, []string{"a.social", "B.Social", "c"}},
		{`["b\u00fccher.de","a\/b","q\"uote","\ud83d\ude00","\ud800x","\ud800\u0041","\udc00"]`,
			[]string{"bücher.de", "a/b", `q"uote`, "😀", "\uFFFDx", "\uFFFDA", "\uFFFD"}},
		{`["` + long + `","x"]`, []string{"", "x"}},
		{`["` + strings.Repeat(`\u0061`, 2000) + `"]`, []string{""}},
		{`["` + strings.Repeat("b", 100000) + `","y"]`, []string{"", "y"}},
		{`["` + long + `\"\\\/\b\f\n\r\t\u00E9\ud83d\ude00","z"]`, []string{"", "z"}},
		// Each short escape decodes to its own byte; hex digits in either
		// case; a surrogate pairs only with one of the other half.
		{`["\b\f\n\r\t","\u00FC\u00fc"]`, []string{"\b\f\n\r\t", "üü"}},
		{`["\ud800\ue000","\udc00\udc00","\udbff\udfff"]`, []string{"\uFFFD\uE000", "\uFFFD\uFFFD", "\U0010FFFF"}},
		// 1024 bytes is the longest entry passed on (parse.maxEntry).
		{`["` + long[:1024] + `","` + long[:1025] + `"]`, []string{long[:1024], ""}},
	}
	for _, g := range good {
		for _, mode := range []string{"whole", "one byte"} {
			var r io.Reader = strings.NewReader(g.in)
			if mode == "one byte" {
				r = iotest.OneByteReader(r)
			}
			got, err := collect(t, r)
			if err != nil || strings.Join(got, "|") != strings.Join(g.want, "|") {
				t.Errorf("%s %.60q: got %q, %v; want %q", mode, g.in, got, err, g.want)
			}
		}
	}
	bad := []string{``, ` `, `null`, `{}`, `"a"`, `[`, `["a"`, `["a",]`, `[,"a"]`, `["a" "b"]`, `["a"]]`, `["a"] x`, `["a"][]`,
		// The array must open with '[': a string and a closing bracket
		// after some other byte are not an array.
		`x"a.social"]`, `"a.social"]`,
		`[1]`, `["a",null]`, `["a";"b"]`, "[\v]", "[\"a\x1f\"]", `[["a"]]`, `[{"host":"a"}]`, "[\"a\x01\"]", `["\x"]`, `["\u12"]`, `["\u12zz"]`, `["unterminated`,
		// An over-long string is skipped rather than decoded when it runs
		// past the buffer (always, read a byte at a time); its escapes are
		// still checked (found by FuzzParsePeers in CI).
		`["` + long + `\x", "a"]`, `["` + long + `\u12zz"]`, `["` + long + `\u00"]`, "[\"" + long + "\x01\"]"}
	for _, b := range bad {
		// Entries before the fault are passed on as they stream, so both
		// ways of reading must pass on the same ones.
		whole, err := collect(t, strings.NewReader(b))
		if !errors.Is(err, parse.ErrNotStringArray) {
			t.Errorf("whole %.60q: got %q, %v; want ErrNotStringArray", b, whole, err)
		}
		oneByte, err := collect(t, iotest.OneByteReader(strings.NewReader(b)))
		if !errors.Is(err, parse.ErrNotStringArray) || strings.Join(oneByte, "|") != strings.Join(whole, "|") {
			t.Errorf("one byte %.60q: got %q, %v; want %q and ErrNotStringArray", b, oneByte, err, whole)
		}
	}
	boom := errors.New("boom")
	if _, err := collect(t, io.MultiReader(strings.NewReader(`["a",`), iotest.ErrReader(boom))); !errors.Is(err, boom) {
		t.Errorf("read error not passed on: %v", err)
	}
	// A read error (the body cap, say) inside an escape is the read error,
	// whether the string is being decoded or skipped.
	for _, prefix := range []string{`["\u00`, `["x\u0`, `["\u`, `["` + long + `\u00`, `["\n\u00`} {
		for _, mode := range []string{"whole", "one byte"} {
			var r io.Reader = strings.NewReader(prefix)
			if mode == "one byte" {
				r = iotest.OneByteReader(r)
			}
			if _, err := collect(t, io.MultiReader(r, iotest.ErrReader(boom))); !errors.Is(err, boom) {
				t.Errorf("%s %.20q then a read error: got %v, want the read error", mode, prefix, err)
			}
		}
	}
}

// An over-long entry is junk whatever its bytes: decoding one that has an
// escape must not buffer all of it.
func TestStringArrayMemory(t *testing.T) {
	big := strings.Repeat("a", 16<<20)
	escapes := strings.Repeat(`\n`, 8<<20) // 16 MiB, all of it decoded the slow way
	for _, in := range []string{`["` + big + `"]`, `["\n` + big + `"]`, `["` + big + `\n` + big + `"]`, `["` + escapes + `"]`} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := collect(t, strings.NewReader(in))
		runtime.ReadMemStats(&after)
		if err != nil || len(got) != 1 || got[0] != "" {
			t.Errorf("%.8q: got %d entries, %v; want one empty entry", in, len(got), err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("%.8q: %d KiB allocated for one %d MiB entry; the scanner's memory is meant to be fixed", in, n>>10, len(in)>>20)
		}
	}
}

func TestObjectFamilies(t *testing.T) {
	var hosts []string
	add := func(b []byte) { hosts = append(hosts, string(b)) }

	n, err := parse.MisskeyPage(strings.NewReader(`[{"host":"a.social","x":[1,{"y":2}]},{"host":5},"junk",{"nohost":1}]`), add)
	if err != nil || n != 4 || strings.Join(hosts, ",") != "a.social,,," {
		t.Errorf("misskey: %d %q %v", n, hosts, err)
	}
	// Blocked instances take their place on the page but are not passed on;
	// only a JSON true means blocked.
	hosts = nil
	n, err = parse.MisskeyPage(strings.NewReader(`[{"host":"blocked.social","isBlocked":true},{"host":"b.social","isBlocked":false},{"host":"c.social","isBlocked":"true"},{"host":"d.social","isBlocked":null}]`), add)
	if err != nil || n != 4 || strings.Join(hosts, ",") != "b.social,c.social,d.social" {
		t.Errorf("misskey blocked: %d %q %v", n, hosts, err)
	}
	for _, bad := range []string{`{}`, `[{"host":"a"}`, `[{"host":"a"}] []`, `[` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `]`} {
		if _, err := parse.MisskeyPage(strings.NewReader(bad), add); err == nil {
			t.Errorf("misskey accepted %.40q", bad)
		}
	}

	hosts = nil
	err = parse.Lemmy(strings.NewReader(`{"federated_instances":{"blocked":[{"domain":"b.social"}],"linked":[{"domain":"l.social"},"s.social",3],"allowed":[{"domain":"a.social"}]},"extra":{"a":[1,2]}}`), add)
	if err != nil || strings.Join(hosts, ",") != "l.social,s.social,,a.social" {
		t.Errorf("lemmy: %q %v", hosts, err)
	}
	hosts = nil
	if err := parse.Lemmy(strings.NewReader(`{"federated_instances":null}`), add); err != nil || len(hosts) != 0 {
		t.Errorf("lemmy null: %q %v", hosts, err)
	}
	for _, bad := range []string{`[]`, `{"federated_instances":{"linked":{}}}`, `{"federated_instances":{"linked":[]}`} {
		if err := parse.Lemmy(strings.NewReader(bad), add); err == nil {
			t.Errorf("lemmy accepted %q", bad)
		}
	}

	// Lemmy 1.0's pages: items (federated_instances in its alphas), the
	// domain in each view's instance, blocked views counted but not passed
	// on, and the next page's cursor.
	hosts = nil
	n, next, err := parse.LemmyPage(strings.NewReader(`{"items":[{"instance":{"id":1,"domain":"l.social"},"site":{"name":"x"}},`+
		`{"instance":{"domain":"b.social"},"blocked":{"instance_id":2}},{"instance":{"domain":"n.social"},"blocked":null},{"instance":"s.social"},7],`+
		`"next_page":"YWJj","prev_page":"eHl6"}`), add)
	if err != nil || n != 5 || next != "YWJj" || strings.Join(hosts, ",") != "l.social,n.social,," {
		t.Errorf("lemmy page: %d %q %q %v", n, next, hosts, err)
	}
	hosts = nil
	n, next, err = parse.LemmyPage(strings.NewReader(`{"next_page":null,"federated_instances":[{"instance":{"domain":"a.social"}}]}`), add)
	if err != nil || n != 1 || next != "" || strings.Join(hosts, ",") != "a.social" {
		t.Errorf("lemmy alpha page: %d %q %q %v", n, next, hosts, err)
	}
	if n, next, err := parse.LemmyPage(strings.NewReader(`{"items":[],"next_page":5}`), add); err != nil || n != 0 || next != "" {
		t.Errorf("lemmy page with a number for a cursor: %d %q %v", n, next, err)
	}
	for _, bad := range []string{`[]`, `{"items":{}}`, `{"items":[]`, `{"items":[]} {}`,
		`{"items":[],"next_page":"` + strings.Repeat("a", parse.MaxCursor+1) + `"}`} {
		if _, _, err := parse.LemmyPage(strings.NewReader(bad), add); err == nil {
			t.Errorf("lemmy page accepted %.40q", bad)
		}
	}

	hosts = nil
	err = parse.Mbin(strings.NewReader(`{"instances":[{"domain":"m.social","software":"mbin","version":"1.7.0"},{"domain":7},"bare.social",{}],"extra":[1]}`), add)
	if err != nil || strings.Join(hosts, ",") != "m.social,,," {
		t.Errorf("mbin: %q %v", hosts, err)
	}
	hosts = nil
	if err := parse.Mbin(strings.NewReader(`{"instances":null}`), add); err != nil || len(hosts) != 0 {
		t.Errorf("mbin null: %q %v", hosts, err)
	}
	for _, bad := range []string{`[]`, `{"instances":{}}`, `{"instances":[]`, `{"instances":[]} {}`, `{"instances":[` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `]}`} {
		if err := parse.Mbin(strings.NewReader(bad), add); err == nil {
			t.Errorf("mbin accepted %.40q", bad)
		}
	}

	hosts = nil
	n, total, err := parse.PeerTubePage(strings.NewReader(`{"total":7,"data":[{"follower":{"host":"f.social"},"following":{"host":"me.social"}},{"follower":null},{}]}`), "follower", add)
	if err != nil || n != 3 || total != 7 || strings.Join(hosts, ",") != "f.social,," {
		t.Errorf("peertube: %d %d %q %v", n, total, hosts, err)
	}
}

func TestDepth(t *testing.T) {
	deep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	ok := strings.Repeat("[", 64) + strings.Repeat("]", 64)
	if err := parse.CheckDepth([]byte(deep)); !errors.Is(err, parse.ErrTooDeep) {
		t.Errorf("65 levels: %v", err)
	}
	if err := parse.CheckDepth([]byte(ok)); err != nil {
		t.Errorf("64 levels: %v", err)
	}
	// Brackets inside strings do not count, escaped quotes do not end them.
	if err := parse.CheckDepth([]byte(`["` + strings.Repeat("[", 100) + `\"` + strings.Repeat("{", 100) + `"]`)); err != nil {
		t.Errorf("brackets in a string counted: %v", err)
	}
	_, err := io.ReadAll(parse.DepthReader(iotest.OneByteReader(strings.NewReader(deep))))
	if !errors.Is(err, parse.ErrTooDeep) {
		t.Errorf("DepthReader: %v", err)
	}
	// The read that goes too deep hands over none of its bytes, and every
	// read after it fails too, though the rest of the stream closes the
	// brackets again.
	r := parse.DepthReader(strings.NewReader(deep))
	buf := make([]byte, 1000)
	if n, err := r.Read(buf); n != 0 || !errors.Is(err, parse.ErrTooDeep) {
		t.Errorf("DepthReader: first read %d bytes, %v; want 0, ErrTooDeep", n, err)
	}
	r = parse.DepthReader(iotest.OneByteReader(strings.NewReader(deep + "[]")))
	for i := 0; i < 65; i++ {
		r.Read(buf)
	}
	for i := 0; i < 70; i++ {
		if n, err := r.Read(buf); n != 0 || !errors.Is(err, parse.ErrTooDeep) {
			t.Fatalf("DepthReader: read %d after the fault gave %d bytes, %v", i, n, err)
		}
	}
}

// Every text a NodeInfo document gives is kept only as observer.CleanText
// makes it, within its cap: a number given as the software version too,
// however long its digits run.
func TestNodeInfoTextsAreClean(t *testing.T) {
	long := strings.Repeat("9", 300)
	ni, err := parse.ParseNodeInfo([]byte(`{"version":"2.0","software":{"name":"\u202eUPPER\tSoft\u0007","version":` + long + `},"protocols":["activitypub"],"metadata":{"nodeName":"\r\n=1+1","nodeDescription":" a\u001b[2J  b "}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ni.Software != "upper soft" || ni.SoftwareVersion != long[:observer.MaxVersionRunes] || ni.Name != "=1+1" || ni.Description != "a[2J b" {
		t.Errorf("texts kept: %+v", ni)
	}
}

func TestRobotsGroups(t *testing.T) {
	body := "User-agent: *\nDisallow: /private\n\nUser-agent: GoodBot\nUser-agent: TestObserver\nDisallow: /api/\nAllow: /api/v1/instance/peers\n"
	r := parse.ParseRobots([]byte(body), "TestObserver")
	for path, want := range map[string]bool{
		"/private":               true, // the token's own group replaces "*"
		"/api/v2/x":              false,
		"/api/v1/instance/peers": true,
		"/.well-known/nodeinfo":  true,
		"/robots.txt":            true,
	} {
		if got := r.Allowed(path); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", path, got, want)
		}
	}
	star := parse.ParseRobots([]byte(body), "OtherBot")
	if star.Allowed("/private") || !star.Allowed("/api/x") {
		t.Error("an unnamed agent does not get the * group")
	}
	bom := parse.ParseRobots([]byte("\xef\xbb\xbfUser-agent: *\r\nDisallow: /\r\n"), "X")
	if bom.Allowed("/x") {
		t.Error("byte order mark or CRLF hid the rules")
	}
	for name, body := range map[string]string{
		"CR":       "User-agent: *\rDisallow: /\r",
		"CR LF":    "User-agent: *\r\nDisallow: /\r\n",
		"LF":       "User-agent: *\nDisallow: /\n",
		"mixed":    "User-agent: Other\rDisallow: /x\r\nUser-agent: *\nDisallow: /\r",
		"no final": "User-agent: *\rDisallow: /",
	} {
		r := parse.ParseRobots([]byte(body), "X")
		if r.Allowed("/x") {
			t.Errorf("%s line ends (RFC 9309 allows CR, LF and CR LF) hid the rules", name)
		}
	}
	// A lone CR ends a line: what follows it is not part of the value.
	cr := parse.ParseRobots([]byte("User-agent: *\rDisallow: /private\rAllow: /\r"), "X")
	if cr.Allowed("/private/x") || !cr.Allowed("/public") {
		t.Error("CR-separated rules were merged")
	}
	merged := parse.ParseRobots([]byte("User-agent: TestObserver\nCrawl-delay: 5\nUser-agent: *\nDisallow: /\n"), "TestObserver")
	if merged.Allowed("/x") {
		t.Error("a crawl-delay line ended the group (Google's reference parser ignores it)")
	}
	// A space inside a value must not become a field of its own, which
	// once made the library then used reject the file (allow all) or open
	// a group.
	for _, body := range []string{
		"User-agent: *\nDisallow: /\nDisallow: /tmp crawl-delay\n",
		"User-agent: X\nDisallow: /x user-agent\nDisallow: /\n",
		"User-agent: X\nDisallow: /x\tuser-agent\vallow\nDisallow: /\n",
	} {
		if parse.ParseRobots([]byte(body), "X").Allowed("/api/v1/instance/peers") {
			t.Errorf("%q: a rule with white space inside lost the others", body)
		}
	}
	spaced := parse.ParseRobots([]byte("User-agent: *\nDisallow: /a b\n"), "X")
	if spaced.Allowed("/a%20b") || !spaced.Allowed("/a") {
		t.Error("a value with a space is matched as its escaped path, as Google's parser does")
	}
	wild := parse.ParseRobots([]byte("User-agent: *\nDisallow: /*.json$\n"), "X")
	if wild.Allowed("/nodeinfo/2.0.json") || !wild.Allowed("/nodeinfo/2.0") {
		t.Error("wildcard rules not applied")
	}
}

// RFC 9309 (and Google's reference matcher): a pattern matches from the
// start of the path with its query, '*' matches any run of characters, a
// final '$' anchors the end, the longest matching pattern wins and Allow
// wins a tie, and only the product token's groups (else "*"'s) apply.
func TestRobotsMatching(t *testing.T) {
	cases := []struct {
		name, body          string
		allowed, disallowed []string
	}{
		{"disallow star", "User-agent: *\nDisallow: *\n",
			[]string{"/robots.txt"}, []string{"/", "/.well-known/nodeinfo", "/api/v1/instance/peers", "/x?y=1"}},
		{"disallow slash star", "User-agent: *\nDisallow: /*\n",
			[]string{"/robots.txt"}, []string{"/", "/.well-known/nodeinfo"}},
		{"own group disallow star", "User-agent: TestObserver\nDisallow: *\n\nUser-agent: *\nAllow: /\n",
			nil, []string{"/.well-known/nodeinfo"}},
		{"wildcard anchored at the start", "User-agent: *\nDisallow: /api/\nAllow: /v1/*/peers\n",
			[]string{"/v1/instance/peers", "/nodeinfo/2.0"}, []string{"/api/v1/instance/peers"}},
		{"dollar anchors the end", "User-agent: *\nDisallow: /\nAllow: /$\n",
			[]string{"/"}, []string{"/nodeinfo/2.0/", "/api/", "/?x"}},
		{"dollar after a literal", "User-agent: *\nDisallow: /peers$\n",
			[]string{"/peers/", "/peersx", "/peers?page=2", "/a/peers"}, []string{"/peers"}},
		{"dollar inside is literal", "User-agent: *\nDisallow: /a$b\n",
			[]string{"/a", "/ab"}, []string{"/a$b", "/a$bc"}},
		{"star in the middle", "User-agent: *\nDisallow: /*/peers*.json$\n",
			[]string{"/peers.json", "/x/peers.json?x", "/x/peers.json/y"}, []string{"/x/peers.json", "/a/b/peers/c.json"}},
		{"query", "User-agent: *\nDisallow: /f?start=1\n",
			[]string{"/f", "/f?start=2", "/g?start=1"}, []string{"/f?start=1", "/f?start=10&count=5"}},
		{"longer allow wins", "User-agent: *\nDisallow: /api/\nAllow: /api/v1/instance/\n",
			[]string{"/api/v1/instance/peers"}, []string{"/api/v2/x"}},
		{"longer disallow wins", "User-agent: *\nAllow: /api/\nDisallow: /api/v1/instance/\n",
			[]string{"/api/v2/x"}, []string{"/api/v1/instance/peers"}},
		{"length is the pattern's, not the match's", "User-agent: *\nAllow: /*s\nDisallow: /peers\n",
			[]string{"/s", "/xs"}, []string{"/peers", "/peerss"}},
		// Unreserved characters compare decoded (RFC 9309's own example);
		// reserved ones stay escaped.
		{"unreserved escapes decoded", "User-agent: *\nDisallow: /%61pi/\nDisallow: /foo/bar/%62%61%7A\nDisallow: /~user\n",
			[]string{"/a%2Fpi/"}, []string{"/api/v1/instance/peers", "/foo/bar/baz", "/%7Euser", "/%7euser/x"}},
		{"unreserved escapes in the path", "User-agent: *\nDisallow: /api/\nDisallow: /a%2Fb\n",
			[]string{"/a/b", "/%41PI/"}, []string{"/%61pi/v1/instance/peers", "/%61%70%69/", "/a%2fb"}},
		{"wildcards count as octets", "User-agent: *\nDisallow: /p\nAllow: /**\n",
			[]string{"/p", "/x"}, nil},
		{"allow wins a tie", "User-agent: *\nDisallow: /a/\nAllow: /a*\n",
			[]string{"/a/x", "/ab"}, nil},
		{"allow wins a tie in either order", "User-agent: *\nAllow: /a*\nDisallow: /a/\n",
			[]string{"/a/x"}, nil},
		{"empty disallow is no rule", "User-agent: *\nDisallow:\n",
			[]string{"/", "/x"}, nil},
		{"empty allow is no rule", "User-agent: *\nAllow:\nDisallow: /\n",
			nil, []string{"/", "/x"}},
		{"own group without rules", "User-agent: TestObserver\nDisallow:\n\nUser-agent: *\nDisallow: /\n",
			[]string{"/", "/.well-known/nodeinfo"}, nil},
		{"empty rule ends the user-agent lines", "User-agent: TestObserver\nDisallow:\nUser-agent: OtherBot\nDisallow: /\n",
			[]string{"/x"}, nil},
		{"own groups merged", "User-agent: TestObserver\nDisallow: /a\n\nUser-agent: *\nDisallow: /\n\nUser-agent: testobserver\nDisallow: /b\n",
			[]string{"/c"}, []string{"/a", "/b/x"}},
		{"star groups merged", "User-agent: *\nDisallow: /a\n\nUser-agent: OtherBot\nDisallow: /\n\nUser-agent: *\nDisallow: /b\n",
			[]string{"/c"}, []string{"/a", "/b/x"}},
		{"no group applies", "User-agent: OtherBot\nDisallow: /\n",
			[]string{"/", "/x"}, nil},
		{"a prefix of the token is another agent", "User-agent: Test\nDisallow: /\n",
			[]string{"/x"}, nil},
		{"token with a version", "User-agent: TestObserver/1.0\nDisallow: /x\n",
			[]string{"/y"}, []string{"/x"}},
		{"token with a comment after it", "User-agent: TestObserver (+https://observer.example)\nDisallow: /x\n",
			[]string{"/y"}, []string{"/x"}},
		{"useragent without the hyphen", "Useragent: TestObserver\nDisallow: /x\n",
			[]string{"/y"}, []string{"/x"}},
		{"comments are not part of a line", "User-agent: TestObserver # us\nDisallow: /private # keep out\n",
			[]string{"/public"}, []string{"/private/x"}},
		// Each piece between stars is matched after the one before it, not
		// over it: /x*ab*b needs a b after the ab.
		{"pieces do not overlap", "User-agent: *\nDisallow: /x*ab*b\n",
			[]string{"/xab", "/xba"}, []string{"/xabb", "/x-ab-b"}},
		// A pattern starting with '*' gets no '/' put before it, so its
		// length (its precedence) is as written: *ab ties with /ab, and
		// Allow wins the tie.
		{"leading star keeps its length", "User-agent: *\nAllow: /ab\nDisallow: *ab\n",
			[]string{"/ab"}, []string{"/xab"}},
		{"rules before any user-agent", "Disallow: /\nUser-agent: *\nDisallow: /x\n",
			[]string{"/y"}, []string{"/x"}},
		{"path without a slash", "User-agent: *\nDisallow: private\n",
			[]string{"/public"}, []string{"/private/x"}},
		{"percent-encoding case", "User-agent: *\nDisallow: /caf%c3%a9\nDisallow: /x%2Fy\n",
			[]string{"/cafe"}, []string{"/caf%C3%A9", "/x%2fy"}},
		{"non-ASCII pattern", "User-agent: *\nDisallow: /café\n",
			[]string{"/cafe"}, []string{"/caf%C3%A9/menu"}},
		// A '%' without two hex digits after it is no escape: it is kept
		// as written, in the pattern and the path alike, so the rule still
		// matches the path spelt as in robots.txt. One cut short by the end
		// of the pattern must not be read past it; /a%41 is /aA, another
		// path.
		{"escape cut short", "User-agent: *\nDisallow: /a%4\nDisallow: /b%\n",
			[]string{"/a", "/a%41", "/b"}, []string{"/a%4", "/a%4x", "/b%", "/b%2"}},
		// %zz and %4g are not decoded but compared literally, so they
		// disallow /%zz and /x%4g only, not the paths that reading their
		// letters as hex digits would give (/3 and /xP).
		{"invalid escape is literal", "User-agent: *\nDisallow: /%zz\nDisallow: /x%4g\n",
			[]string{"/3", "/zz", "/x", "/xP"}, []string{"/%zz", "/%zz/y", "/x%4g"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := parse.ParseRobots([]byte(tc.body), "TestObserver")
			for _, p := range tc.allowed {
				if !r.Allowed(p) {
					t.Errorf("%s disallowed", p)
				}
			}
			for _, p := range tc.disallowed {
				if r.Allowed(p) {
					t.Errorf("%s allowed", p)
				}
			}
		})
	}
}

func TestWellKnownAndNodeInfo(t *testing.T) {
	ls, err := parse.ParseWellKnown([]byte(`{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"https://a/2.0"},{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.1/","href":"https://a/2.1"},{"rel":7}]}`))
	if want := []parse.Link{{"2.1", "https://a/2.1"}, {"2.0", "https://a/2.0"}}; err != nil || !slices.Equal(ls, want) {
		t.Errorf("well-known: %+v %v, want %+v", ls, err, want)
	}
	ni, err := parse.ParseNodeInfo([]byte(`{"version":2.0,"software":{"name":" Misskey ","version":13},"protocols":["activitypub"],"usage":{"users":{"total":1e2}},"openRegistrations":false}`))
	if err != nil || ni.Version != "2.0" || ni.Software != "misskey" || ni.SoftwareVersion != "13" || *ni.Users != 100 || *ni.OpenRegistrations || ni.Unusable != nil {
		t.Errorf("nodeinfo: %+v %v", ni, err)
	}
}

func FuzzParsePeers(f *testing.F) {
	for _, s := range []string{`["a.social","B.social"]`, `[]`, `["\u00fc\ud83d\ude00"]`, `["a",1]`, `[{"host":"x"}]`, `null`, `["\ud800\u0041"]`} {
		f.Add([]byte(s))
	}
	addCorpus(f, "peers")
	f.Fuzz(func(t *testing.T, data []byte) {
		var mine [][]byte
		err := parse.StringArray(bytes.NewReader(data), func(b []byte, class uint8) {
			if class != parse.Class(b) && b != nil {
				t.Fatalf("class of %q = %d, want %d", b, class, parse.Class(b))
			}
			mine = append(mine, bytes.Clone(b))
		})
		// Chunking must not change the result.
		var small [][]byte
		err2 := parse.StringArray(iotest.OneByteReader(bytes.NewReader(data)), func(b []byte, _ uint8) { small = append(small, bytes.Clone(b)) })
		if (err == nil) != (err2 == nil) || !slices.EqualFunc(mine, small, bytes.Equal) {
			t.Fatalf("chunking changed the result: %v / %v", err, err2)
		}
		if !utf8.Valid(data) {
			return
		}
		var ref []string
		jerr := json.Unmarshal(data, &ref)
		if string(bytes.TrimSpace(data)) == "null" {
			if err == nil {
				t.Fatal("null accepted")
			}
			return
		}
		if (err == nil) != (jerr == nil) {
			t.Fatalf("scanner error %v, encoding/json error %v", err, jerr)
		}
		if err != nil {
			return
		}
		if len(ref) != len(mine) {
			t.Fatalf("%d entries, encoding/json %d", len(mine), len(ref))
		}
		for i := range ref {
			if string(mine[i]) != ref[i] && !(len(mine[i]) == 0 && len(ref[i]) >= 170) {
				t.Fatalf("entry %d: %q, encoding/json %q", i, mine[i], ref[i])
			}
		}
	})
}

func FuzzParsePeersObjects(f *testing.F) {
	for _, s := range []string{`[{"host":"a.social"}]`, `{"federated_instances":{"linked":[{"domain":"a"}],"blocked":[]}}`,
		`{"total":1,"data":[{"follower":{"host":"a"}}]}`, `{"instances":[{"domain":"a","software":"mbin"}]}`,
		`{"items":[{"instance":{"domain":"a"}},{"instance":{"domain":"b"},"blocked":{}}],"next_page":"YQ"}`, `[`, `{}`,
		`[{"host":"a.social","isBlocked":true},{"HOST":"B.social"},"c",7,null,[{"host":"d"}],{"host":"\u00e9\u0301.social"},{"host":5}]`} {
		f.Add([]byte(s))
	}
	f.Add([]byte("[{\"host\":\"e\xff.social\",\"isBlocked\":false}]"))
	addCorpus(f, "peers")
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(name string, err error) {
			if err == nil && !json.Valid(data) {
				t.Fatalf("%s accepted invalid JSON", name)
			}
		}
		nop := func([]byte) {}
		var hosts [][]byte
		n, err := parse.MisskeyPage(bytes.NewReader(data), func(h []byte) { hosts = append(hosts, bytes.Clone(h)) })
		check("misskey", err)
		if err == nil {
			wantN, want := misskeyReference(t, data)
			if n != wantN || !slices.EqualFunc(hosts, want, bytes.Equal) {
				t.Fatalf("misskey: %d entries %q, reference %d %q", n, hosts, wantN, want)
			}
		}
		check("lemmy", parse.Lemmy(bytes.NewReader(data), nop))
		check("mbin", parse.Mbin(bytes.NewReader(data), nop))
		n, next, err := parse.LemmyPage(bytes.NewReader(data), nop)
		check("lemmy page", err)
		if n < 0 || len(next) > parse.MaxCursor || (err != nil && next != "") {
			t.Fatalf("lemmy page n %d next %.40q err %v", n, next, err)
		}
		n, total, err := parse.PeerTubePage(bytes.NewReader(data), "follower", nop)
		check("peertube", err)
		if n < 0 || total < 0 {
			t.Fatalf("peertube n %d total %d", n, total)
		}
	})
}

// misskeyReference reads a Misskey page as plainly as encoding/json
// allows: every element in full, then its fields, then the host's string.
func misskeyReference(t *testing.T, data []byte) (int, [][]byte) {
	var els []json.RawMessage
	if err := json.Unmarshal(data, &els); err != nil {
		t.Fatalf("misskey accepted what encoding/json rejects: %v", err)
	}
	var hosts [][]byte
	for _, el := range els {
		var inst struct {
			Host      json.RawMessage `json:"host"`
			IsBlocked json.RawMessage `json:"isBlocked"`
		}
		if el := bytes.TrimSpace(el); len(el) == 0 || el[0] != '{' || json.Unmarshal(el, &inst) != nil {
			hosts = append(hosts, nil)
			continue
		}
		if string(bytes.TrimSpace(inst.IsBlocked)) == "true" {
			continue
		}
		var h string
		if raw := bytes.TrimSpace(inst.Host); len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &h) != nil {
			hosts = append(hosts, nil)
			continue
		}
		hosts = append(hosts, []byte(h))
	}
	return len(els), hosts
}

func FuzzParseNodeInfo(f *testing.F) {
	f.Add([]byte(`{"version":"2.0","software":{"name":"Mastodon","version":"4"},"protocols":["activitypub"],"usage":{"users":{"total":5}},"openRegistrations":true,"metadata":{"nodeName":"x"}}`))
	f.Add([]byte(`{"version":"2.2","software":{"name":"x"},"protocols":{"inbound":[]},"instance":{"name":"n","description":"d"}}`))
	f.Add([]byte(`{"version":"1.0","usage":{"localPosts":-1}}`))
	f.Add([]byte(`{"version":{},"software":{"name":"x","version":[]},"protocols":7,"services":"","usage":{"users":[],"localPosts":{"n":1}},"openRegistrations":"FALSE","metadata":[1],"instance":{"name":2}}`))
	f.Add([]byte(`{"software":{"name":"x"},"usage":{"users":{"total":" 16 ","activeMonth":"-1","activeHalfyear":"1e3"}},"openRegistrations":1}`))
	addCorpus(f, "nodeinfo")
	f.Fuzz(func(t *testing.T, data []byte) {
		ni, err := parse.ParseNodeInfo(data)
		if err != nil {
			return
		}
		if !json.Valid(data) || ni.Software == "" || ni.Software != strings.ToLower(ni.Software) {
			t.Fatalf("accepted %+v", ni)
		}
		for _, p := range []*int64{ni.Users, ni.ActiveMonth, ni.ActiveHalfyear, ni.LocalPosts} {
			if p != nil && (*p < 0 || *p > 1<<53) {
				t.Fatalf("count out of range %d", *p)
			}
		}
		// Each unusable field once, in the documented order: what the
		// sandbox's orchestrator accepts from a checker.
		next := 0
		for _, u := range ni.Unusable {
			i := slices.Index(parse.UnusableFields[next:], u)
			if i < 0 {
				t.Fatalf("unusable %q out of order or unknown: %q", u, ni.Unusable)
			}
			next += i + 1
		}
		// Exactly what the sandbox's orchestrator accepts from a checker.
		for _, c := range []struct {
			s   string
			max int
		}{{ni.Name, observer.MaxNameRunes}, {ni.Description, observer.MaxDescriptionRunes}, {ni.Software, observer.MaxSoftwareRunes},
			{ni.SoftwareVersion, observer.MaxVersionRunes}, {ni.Version, parse.MaxDocumentVersionRunes}} {
			if !utf8.ValidString(c.s) || observer.CleanText(c.s, c.max) != c.s {
				t.Fatalf("unclean text %q", c.s)
			}
		}
	})
}

func FuzzParseWellKnown(f *testing.F) {
	f.Add([]byte(`{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"https://a/x"}]}`))
	f.Add([]byte(`{"links":{"https://nodeinfo.diaspora.software/ns/schema/2.1":"https://a/x"}}`))
	addCorpus(f, "wellknown")
	f.Fuzz(func(t *testing.T, data []byte) {
		ls, err := parse.ParseWellKnown(data)
		if err != nil {
			return
		}
		if len(ls) == 0 {
			t.Fatal("no links and no error")
		}
		for i, l := range ls {
			if !slices.Contains(parse.SchemaVersions, l.Version) || l.Href == "" {
				t.Fatalf("accepted %+v", l)
			}
			// In order of preference, each href once.
			if i > 0 && slices.Index(parse.SchemaVersions, l.Version) > slices.Index(parse.SchemaVersions, ls[i-1].Version) {
				t.Fatalf("out of order: %+v", ls)
			}
			if slices.ContainsFunc(ls[:i], func(o parse.Link) bool { return o.Href == l.Href }) {
				t.Fatalf("href twice: %+v", ls)
			}
		}
	})
}

func FuzzRobots(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /\n"), "/x")
	f.Add([]byte("User-agent: TestObserver\nAllow: /\nUser-agent: *\nDisallow: /*$\n"), "/.well-known/nodeinfo")
	f.Add([]byte("Disallow: /\ncrawl-delay: x\n"), "/")
	f.Add([]byte("User-agent: *\rDisallow: /private\r\nAllow: /\r"), "/private/x")
	f.Add([]byte("/api/\n/v1/*/peers"), "/api/v1/instance/peers")
	f.Add([]byte("/\n/$"), "/nodeinfo/2.0/")
	f.Add([]byte("*\n/a*b*$"), "/a/b/b")
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		r := parse.ParseRobots(data, "TestObserver")
		if !r.Allowed("/robots.txt") {
			t.Fatal("robots.txt itself disallowed")
		}
		allowed := r.Allowed(path)
		if !allowed && !bytes.Contains(bytes.ToLower(data), []byte("disallow")) {
			t.Fatalf("%q disallowed without any Disallow line", path)
		}

		// Only where lines end matters, not how: CR, LF and CR LF are
		// the same, and a run of line ends is only empty lines.
		lf := bytes.ReplaceAll(data, []byte("\r"), []byte("\n"))
		crlf := bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))
		for _, p := range []string{path, "/", "/.well-known/nodeinfo"} {
			want := r.Allowed(p)
			if parse.ParseRobots(lf, "TestObserver").Allowed(p) != want || parse.ParseRobots(crlf, "TestObserver").Allowed(p) != want {
				t.Fatalf("%q: the line ends changed whether %q is allowed", data, p)
			}
		}

		// Read each line as a pattern: with "Disallow: /" and no Allow
		// rule, whatever the other Disallow rules say, every path is
		// disallowed; with "Disallow: *", even one not starting with '/'.
		lines := bytes.FieldsFunc(data, func(r rune) bool { return r == '\r' || r == '\n' })
		var rules strings.Builder
		for _, l := range lines {
			rules.WriteString("Disallow: " + string(l) + "\n")
		}
		for _, all := range []string{"/", "*"} {
			r := parse.ParseRobots([]byte("User-agent: *\nDisallow: "+all+"\n"+rules.String()), "TestObserver")
			if (all == "*" || strings.HasPrefix(path, "/")) && path != "/robots.txt" && r.Allowed(path) {
				t.Fatalf("Disallow: %s and %q allow %q", all, rules.String(), path)
			}
		}

		// The first two lines as a Disallow and an Allow pattern, against
		// a reference matcher: a regular expression anchored at the start.
		// Only patterns and paths that need no escaping and no leading
		// slash added are compared, so the two read them alike.
		plain := func(s string) bool {
			return !strings.ContainsFunc(s, func(c rune) bool { return c <= ' ' || c >= 0x7f || c == '%' || c == '#' })
		}
		if len(lines) == 0 || len(lines) > 2 || !plain(path) || path == "/robots.txt" {
			return
		}
		want, longest := true, -1
		var body strings.Builder
		body.WriteString("User-agent: *\n")
		for i, l := range lines {
			pat := string(l)
			if !plain(pat) || pat == "" || pat[0] != '/' && pat[0] != '*' {
				return
			}
			allow := i == 1
			body.WriteString(map[bool]string{true: "Allow: ", false: "Disallow: "}[allow] + pat + "\n")
			expr, anchored := strings.CutSuffix(pat, "$")
			expr = "^" + strings.ReplaceAll(regexp.QuoteMeta(expr), `\*`, ".*")
			if anchored {
				expr += "$"
			}
			if regexp.MustCompile("(?s)"+expr).MatchString(path) && (len(pat) > longest || len(pat) == longest && allow) {
				want, longest = allow, len(pat)
			}
		}
		if got := parse.ParseRobots([]byte(body.String()), "TestObserver").Allowed(path); got != want {
			t.Fatalf("%q: Allowed(%q) = %v, want %v", body.String(), path, got, want)
		}
	})
}

func TestOptOutFlags(t *testing.T) {
	cases := []struct {
		name, doc string
		private   bool
		bad       bool
	}{
		{"private true", `{"site":{"name":"x","private":true}}`, true, false},
		{"private string", `{"site":{"private":"1"}}`, true, false},
		{"private string true", `{"site":{"private":"true"}}`, true, false},
		{"private false", `{"site":{"private":false}}`, false, false},
		{"private zero string", `{"site":{"private":"0"}}`, false, false},
		{"private missing", `{"site":{"name":"x"}}`, false, false},
		{"no site", `{"x":1}`, false, true},
		{"site not object", `{"site":true}`, false, true},
		{"array", `[{"site":{"private":true}}]`, false, true},
		{"html", `<html>`, false, true},
		{"deep", strings.Repeat("[", 100000), false, true},
		{"bom", "\xef\xbb\xbf" + `{"site":{"private":true}}`, true, false},
		{"private string True", `{"site":{"private":"True"}}`, true, false},
		{"private string TRUE", `{"site":{"private":"TRUE"}}`, true, false},
		{"private zero", `{"site":{"private":0}}`, false, false},
		{"private string false", `{"site":{"private":"false"}}`, false, false},
	}
	for _, tc := range cases {
		got, err := parse.StatusNetPrivate([]byte(tc.doc))
		if (err != nil) != tc.bad || got != tc.private {
			t.Errorf("%s: StatusNetPrivate = %v, %v; want %v, error %v", tc.name, got, err, tc.private, tc.bad)
		}
	}
	hide := []struct {
		doc    string
		hidden bool
		bad    bool
	}{
		{`{"url":"https://h.example.net","hide_in_statistics":true}`, true, false},
		{`{"hide_in_statistics":1}`, true, false},
		{`{"hide_in_statistics":false}`, false, false},
		{`{"hide_in_statistics":"no"}`, false, false},
		{`{}`, false, false},
		{`"hide_in_statistics"`, false, true},
		{`{"hide_in_statistics":true`, false, true},
		// Only an object is a siteinfo document: null would decode into
		// the struct as nothing at all.
		{`null`, false, true},
		{` []`, false, true},
	}
	for _, tc := range hide {
		got, err := parse.SiteInfoHidden([]byte(tc.doc))
		if (err != nil) != tc.bad || got != tc.hidden {
			t.Errorf("SiteInfoHidden(%s) = %v, %v; want %v, error %v", tc.doc, got, err, tc.hidden, tc.bad)
		}
	}
}

func FuzzOptOutFlags(f *testing.F) {
	f.Add([]byte(`{"site":{"private":true}}`))
	f.Add([]byte(`{"hide_in_statistics":"1"}`))
	f.Add([]byte(`{"site":{"private":"TRUE"},"hide_in_statistics":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if p, err := parse.StatusNetPrivate(data); err == nil && !json.Valid(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))) {
			t.Fatalf("StatusNetPrivate accepted invalid JSON (%v)", p)
		} else if err != nil && p {
			t.Fatal("StatusNetPrivate: true with an error")
		}
		if h, err := parse.SiteInfoHidden(data); err == nil && !json.Valid(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))) {
			t.Fatalf("SiteInfoHidden accepted invalid JSON (%v)", h)
		} else if err != nil && h {
			t.Fatal("SiteInfoHidden: true with an error")
		}
	})
}

func TestClass(t *testing.T) {
	for in, want := range map[string]uint8{
		"a-z.09":      0,
		"AZ":          parse.ClassUpper,
		"Mastodon.Z":  parse.ClassUpper,
		"a_b":         parse.ClassOther,
		"b\u00fccher": parse.ClassOther,
		"A b":         parse.ClassUpper | parse.ClassOther,
		"":            0,
	} {
		if got := parse.Class([]byte(in)); got != want {
			t.Errorf("Class(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestNodeInfoValidation pins each rule ParseNodeInfo holds a document to:
// one change to a valid document, and whether it must be refused or which
// field it makes unusable.
func TestNodeInfoValidation(t *testing.T) {
	doc := func(fields string) []byte {
		return []byte(`{"version":"2.0","software":{"name":"mastodon","version":"4.2"},"protocols":["activitypub"]` + fields + `}`)
	}
	cases := []struct {
		name     string
		body     []byte
		error    bool
		unusable []string
	}{
		{"valid", doc(""), false, nil},
		// What makes a document NodeInfo at all.
		{"not an object", []byte(`["software"]`), true, nil},
		{"null", []byte(`null`), true, nil},
		{"software missing", []byte(`{"version":"2.0","protocols":["activitypub"]}`), true, nil},
		{"software a string", []byte(`{"version":"2.0","software":"mastodon"}`), true, nil},
		{"software name missing", []byte(`{"version":"2.0","software":{"version":"1"},"protocols":["activitypub"]}`), true, nil},
		{"software name a number", []byte(`{"version":"2.0","software":{"name":7},"protocols":["activitypub"]}`), true, nil},
		{"software name blank", []byte(`{"version":"2.0","software":{"name":" ​ "}}`), true, nil},
		// Informational: absent is unknown, not unusable.
		{"only a software name", []byte(`{"software":{"name":"x"}}`), false, nil},
		{"protocols null", []byte(`{"version":"2.0","software":{"name":"x"},"protocols":null}`), false, nil},
		{"version a number", []byte(`{"version":2.0,"software":{"name":"x"}}`), false, nil},
		{"version an object", []byte(`{"version":{"v":2},"software":{"name":"x"}}`), false, []string{"version"}},
		{"software version an array", []byte(`{"software":{"name":"x","version":["1"]}}`), false, []string{"software.version"}},
		{"protocols a string", []byte(`{"version":"2.0","software":{"name":"x"},"protocols":"activitypub"}`), false, []string{"protocols"}},
		{"protocol not a string", []byte(`{"version":"2.0","software":{"name":"x"},"protocols":["activitypub",1]}`), false, []string{"protocols"}},
		{"1.0 protocols object", []byte(`{"version":"1.0","software":{"name":"x"},"protocols":{"inbound":[],"outbound":["diaspora"]}}`), false, nil},
		{"1.0 protocols object of strings", []byte(`{"version":"1.0","software":{"name":"x"},"protocols":{"inbound":"diaspora"}}`), false, []string{"protocols"}},
		{"services PHP's empty object", doc(`,"services":[]`), false, nil},
		{"services a list", doc(`,"services":["atom"]`), false, []string{"services"}},
		{"usage a number", doc(`,"usage":1`), false, []string{"usage"}},
		{"users PHP's empty object", doc(`,"usage":{"users":[]}`), false, nil},
		{"users a list", doc(`,"usage":{"users":[1]}`), false, []string{"usage.users"}},
		{"users 2^53", doc(`,"usage":{"users":{"total":9007199254740992}}`), false, nil},
		{"users over 2^53", doc(`,"usage":{"users":{"total":9007199254740993}}`), false, []string{"usage.users.total"}},
		{"users negative", doc(`,"usage":{"users":{"total":-1}}`), false, []string{"usage.users.total"}},
		{"users a fraction", doc(`,"usage":{"users":{"total":1.5}}`), false, []string{"usage.users.total"}},
		{"users a negative float", doc(`,"usage":{"users":{"total":-1.0}}`), false, []string{"usage.users.total"}},
		{"users a float over 2^53", doc(`,"usage":{"users":{"total":1e16}}`), false, []string{"usage.users.total"}},
		{"users a string of digits", doc(`,"usage":{"users":{"total":"5"}}`), false, nil},
		{"users a string of a negative", doc(`,"usage":{"users":{"total":"-5"}}`), false, []string{"usage.users.total"}},
		{"users a string of a float", doc(`,"usage":{"users":{"total":"5.0"}}`), false, []string{"usage.users.total"}},
		{"users an empty string", doc(`,"usage":{"users":{"total":""}}`), false, []string{"usage.users.total"}},
		{"users a boolean", doc(`,"usage":{"users":{"total":true}}`), false, []string{"usage.users.total"}},
		{"activeMonth negative", doc(`,"usage":{"users":{"activeMonth":-1}}`), false, []string{"usage.users.activeMonth"}},
		{"activeHalfyear negative", doc(`,"usage":{"users":{"activeHalfyear":-1}}`), false, []string{"usage.users.activeHalfyear"}},
		{"localPosts negative", doc(`,"usage":{"localPosts":-1}`), false, []string{"usage.localPosts"}},
		{"localPosts an object", doc(`,"usage":{"localPosts":{"count":1}}`), false, []string{"usage.localPosts"}},
		{"openRegistrations a string", doc(`,"openRegistrations":"true"`), false, nil},
		{"openRegistrations upper case", doc(`,"openRegistrations":"FALSE"`), false, nil},
		{"openRegistrations 1", doc(`,"openRegistrations":1`), false, nil},
		{"openRegistrations 2", doc(`,"openRegistrations":2`), false, []string{"openRegistrations"}},
		{"openRegistrations a word", doc(`,"openRegistrations":"approval"`), false, []string{"openRegistrations"}},
		{"openRegistrations null", doc(`,"openRegistrations":null`), false, nil},
		{"metadata PHP's empty object", doc(`,"metadata":[]`), false, nil},
		{"metadata a list", doc(`,"metadata":[{"nodeName":"x"}]`), false, []string{"metadata"}},
		{"nodeName a number", doc(`,"metadata":{"nodeName":1,"nodeDescription":{}}`), false, []string{"metadata.nodeName", "metadata.nodeDescription"}},
		{"instance a string", doc(`,"instance":"x"`), false, []string{"instance"}},
		{"instance texts not strings", doc(`,"instance":{"name":[],"description":true}`), false, []string{"instance.name", "instance.description"}},
		// Nesting is refused as too deep even where the value is ignored.
		{"too deep", doc(`,"metadata":{"x":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`), true, nil},
	}
	for _, tc := range cases {
		ni, err := parse.ParseNodeInfo(tc.body)
		if (err != nil) != tc.error {
			t.Errorf("%s: error %v, want an error: %v", tc.name, err, tc.error)
		}
		if !slices.Equal(ni.Unusable, tc.unusable) {
			t.Errorf("%s: unusable %q, want %q", tc.name, ni.Unusable, tc.unusable)
		}
	}
	if _, err := parse.ParseNodeInfo(cases[len(cases)-1].body); !errors.Is(err, parse.ErrTooDeep) {
		t.Errorf("too deep: %v, want ErrTooDeep", err)
	}
	// The values kept: counts as given, the 2.2 instance object's texts
	// before metadata's.
	ni, err := parse.ParseNodeInfo(doc(`,"usage":{"users":{"total":9007199254740992,"activeMonth":2.0,"activeHalfyear":3},"localPosts":4},"openRegistrations":true,` +
		`"instance":{"name":"Instance name","description":"Instance description"},"metadata":{"nodeName":"Metadata name","nodeDescription":"Metadata description"}`))
	if err != nil {
		t.Fatal(err)
	}
	if *ni.Users != 1<<53 || *ni.ActiveMonth != 2 || *ni.ActiveHalfyear != 3 || *ni.LocalPosts != 4 || !*ni.OpenRegistrations ||
		ni.Name != "Instance name" || ni.Description != "Instance description" {
		t.Errorf("kept %+v", ni)
	}
	// The common spellings, as what they spell.
	ni, err = parse.ParseNodeInfo(doc(`,"usage":{"users":{"total":"16","activeMonth":" 7 "},"localPosts":"0"},"openRegistrations":" No "`))
	if err != nil || *ni.Users != 16 || *ni.ActiveMonth != 7 || *ni.LocalPosts != 0 || *ni.OpenRegistrations || ni.Unusable != nil {
		t.Errorf("spellings: %+v %v", ni, err)
	}
	for spelling, want := range map[string]bool{`true`: true, `"TRUE"`: true, `"yes"`: true, `1`: true, `"1"`: true, `false`: false, `"False"`: false, `0`: false, `"0"`: false, `"NO"`: false} {
		ni, err := parse.ParseNodeInfo(doc(`,"openRegistrations":` + spelling))
		if err != nil || ni.OpenRegistrations == nil || *ni.OpenRegistrations != want {
			t.Errorf("openRegistrations %s: %v %v, want %v", spelling, ni.OpenRegistrations, err, want)
		}
	}
	// An unusable metadata name leaves the instance object's in place.
	ni, _ = parse.ParseNodeInfo(doc(`,"instance":{"name":"Instance"},"metadata":{"nodeName":["x"]}`))
	if ni.Name != "Instance" || !slices.Equal(ni.Unusable, []string{"metadata.nodeName"}) {
		t.Errorf("name %q, unusable %q", ni.Name, ni.Unusable)
	}
	// Zero is a count like any other (a new or single-user instance), and
	// is kept as said, not refused or taken for absent: a zero float too.
	ni, err = parse.ParseNodeInfo(doc(`,"usage":{"users":{"total":0,"activeMonth":0,"activeHalfyear":0.0},"localPosts":0}`))
	if err != nil {
		t.Fatalf("zero counts: %v", err)
	}
	for name, n := range map[string]*int64{"users": ni.Users, "activeMonth": ni.ActiveMonth, "activeHalfyear": ni.ActiveHalfyear, "localPosts": ni.LocalPosts} {
		if n == nil || *n != 0 {
			t.Errorf("zero %s kept as %v, want a pointer to 0", name, n)
		}
	}
	// Errors say where, not what Go type was expected (which names our
	// structs at length).
	for _, body := range []string{`{"version":"2.0",]`, `{"software":{"name":"x"}} x`} {
		_, err := parse.ParseNodeInfo([]byte(body))
		if err == nil || !strings.Contains(err.Error(), "at byte") || strings.Contains(err.Error(), "struct") {
			t.Errorf("%s: error %v, want a short one naming the byte", body, err)
		}
	}
}

// TestWellKnownShapes: the forms of the links member servers send, and
// which link is picked from each.
func TestWellKnownShapes(t *testing.T) {
	const rel = "http://nodeinfo.diaspora.software/ns/schema/"
	cases := []struct{ name, body, version, href string }{
		{"a link without href is skipped", `{"links":[{"rel":"` + rel + `2.1","href":""},{"rel":"` + rel + `2.0","href":"https://a/2.0"}]}`, "2.0", "https://a/2.0"},
		{"one object", `{"links":{"rel":"` + rel + `2.0","href":"https://a/2.0"}}`, "2.0", "https://a/2.0"},
		{"rel to href", `{"links":{"` + rel + `2.0":"https://a/2.0","` + rel + `2.1":"https://a/2.1"}}`, "2.1", "https://a/2.1"},
		{"rel to link object", `{"links":{"` + rel + `2.1":{"href":"https://a/2.1"}}}`, "2.1", "https://a/2.1"},
		{"rel with white space", `{"links":[{"rel":" ` + rel + `2.0 ","href":"https://a/2.0"}]}`, "2.0", "https://a/2.0"},
		{"unknown schema ignored", `{"links":[{"rel":"` + rel + `3.0","href":"https://a/3.0"},{"rel":"` + rel + `1.0","href":"https://a/1.0"}]}`, "1.0", "https://a/1.0"},
	}
	for _, tc := range cases {
		ls, err := parse.ParseWellKnown([]byte(tc.body))
		if err != nil || ls[0].Version != tc.version || ls[0].Href != tc.href {
			t.Errorf("%s: %+v, %v; want %s at %s first", tc.name, ls, err, tc.version, tc.href)
		}
	}
	// Two rels for one version (http and https) in the rel-to-href form:
	// the same document gives the same links every time, whatever order
	// Go's map iteration visits them in.
	body := []byte(`{"links":{"https://nodeinfo.diaspora.software/ns/schema/2.0":"https://a/s","` + rel + `2.0":"https://a/p"}}`)
	first, err := parse.ParseWellKnown(body)
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		if ls, _ := parse.ParseWellKnown(body); !slices.Equal(ls, first) {
			t.Fatalf("links %+v, then %+v", first, ls)
		}
	}
	// All links, best first; one version's in the document's order; an
	// href named for two versions once, for the higher.
	ls, err := parse.ParseWellKnown([]byte(`{"links":[{"rel":"` + rel + `1.0","href":"https://a/1.0"},{"rel":"` + rel + `2.0","href":"https://a/x"},` +
		`{"rel":"` + rel + `2.0","href":"https://a/y"},{"rel":"` + rel + `2.1","href":"https://a/x"}]}`))
	if want := []parse.Link{{"2.1", "https://a/x"}, {"2.0", "https://a/y"}, {"1.0", "https://a/1.0"}}; err != nil || !slices.Equal(ls, want) {
		t.Errorf("links %+v, %v; want %+v", ls, err, want)
	}
	for _, bad := range []string{`{"links":[{"rel":"` + rel + `3.0","href":"https://a/3.0"}]}`, `{"links":"x"}`, `{}`} {
		if l, err := parse.ParseWellKnown([]byte(bad)); err == nil {
			t.Errorf("%s accepted: %+v", bad, l)
		}
	}
}
