package build

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/build/buildtest"
)

func TestSplitFrontMatter(t *testing.T) {
	cases := []struct {
		src, body string
		want      map[string]any
		err       string
	}{
		{src: "no front matter", body: "no front matter", want: map[string]any{}},
		{src: "---\ntitle: Hi\ntags: [a, b]\n---\nbody\n", body: "body\n", want: map[string]any{"title": "Hi", "tags": []any{"a", "b"}}},
		{src: "+++\ntitle = \"Hi\"\n+++\r\nbody", body: "body", want: map[string]any{"title": "Hi"}},
		{src: "\xef\xbb\xbf---\r\ntitle: BOM\r\n---\r\nx", body: "x", want: map[string]any{"title": "BOM"}},
		{src: "---\n---\n", body: "", want: map[string]any{}},
		{src: "---\ntitle: x\n", err: "no closing --- line"},
		{src: "+++\ntitle = \n+++\n", err: "front matter"},
		{src: "----\nnot front matter", body: "----\nnot front matter", want: map[string]any{}},
	}
	for _, c := range cases {
		fm, body, err := splitFrontMatter([]byte(c.src))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.src, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		if string(body) != c.body {
			t.Errorf("%q: body %q, want %q", c.src, body, c.body)
		}
		if len(fm) != len(c.want) {
			t.Errorf("%q: front matter %v, want %v", c.src, fm, c.want)
		}
		for k, v := range c.want {
			if s, ok := v.(string); ok && fm[k] != s {
				t.Errorf("%q: %s = %v, want %v", c.src, k, fm[k], v)
			}
		}
	}
}

func testContentOpts() contentOpts {
	return contentOpts{md: newMarkdown(false), summaryLen: 70, taxonomies: []taxonomyDef{{"tag", "tags"}, {"category", "categories"}}}
}

func TestFrontMatterFields(t *testing.T) {
	for _, src := range []string{
		"---\ntitle: T\ndescription: D\ndate: 2024-05-01T10:00:00+02:00\ndraft: true\nweight: 3\nextra: 1\n---\n",
		"+++\ntitle = \"T\"\ndescription = \"D\"\ndate = 2024-05-01T10:00:00+02:00\ndraft = true\nweight = 3\nextra = 1\n+++\n",
	} {
		p, err := parsePage("x.md", []byte(src), testContentOpts())
		if err != nil {
			t.Fatal(err)
		}
		if p.Title() != "T" || p.Description() != "D" || !p.Draft() || p.Weight() != 3 || p.Params()["extra"] == nil ||
			!p.Date().Equal(time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)) {
			t.Errorf("%q: %+v", src, p)
		}
	}
	if _, err := parsePage("x.md", []byte("---\ndraft: maybe\n---\n"), testContentOpts()); err == nil {
		t.Error("draft: maybe was accepted")
	}
	if _, err := parsePage("x.md", []byte("---\ndate: yesterday\n---\n"), testContentOpts()); err == nil {
		t.Error("date: yesterday was accepted")
	}
	// The known keys are case-insensitive, so two spellings of one are
	// refused rather than one winning by map order.
	for _, src := range []string{
		"---\ndraft: true\nDraft: false\n---\n",
		"+++\ntitle = \"A\"\nTitle = \"B\"\n+++\n",
	} {
		_, err := parsePage("x.md", []byte(src), testContentOpts())
		if err == nil || !strings.Contains(err.Error(), "case-insensitive") {
			t.Errorf("%q: got %v, want a refusal of the two spellings", src, err)
		}
	}
}

func TestInertCell(t *testing.T) {
	for in, want := range map[string]string{
		"=1+1": "'=1+1", "+1": "'+1", "-1": "'-1", "@x": "'@x", "\tx": "'\tx", "\rx": "'\rx",
		"plain": "plain", "": "", "a=b": "a=b",
		"a;=1": "a;'=1", "=a; -1;;@x": "'=a; '-1;;'@x", `a;"=1"`: `a;'"=1"`, "a; b;": "a; b;",
	} {
		if got := inertCell(in); got != want {
			t.Errorf("inertCell(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzFrontMatter(f *testing.F) {
	for _, s := range []string{"---\ntitle: x\n---\nbody", "+++\ntitle = 1\n+++\n", "---\n", "+++", "---\n- a\n---\n", "---\r\n: :\r\n---"} {
		f.Add([]byte(s))
	}
	co := testContentOpts()
	f.Fuzz(func(t *testing.T, src []byte) {
		fm, body, err := splitFrontMatter(src)
		if err != nil {
			return
		}
		if fm == nil {
			t.Fatal("nil front matter without error")
		}
		if len(body) > len(src) {
			t.Fatal("body longer than the source")
		}
		parsePage("f.md", src, co) // must not panic
	})
}

func FuzzSoftwareSlug(f *testing.F) {
	for _, s := range []string{"mastodon", "", "../../etc/passwd", "<script>", ".hidden", "Ünïcödé", "a/b\\c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slug := softwareSlug(s)
		if slug == "" || len(slug) > 64 || slug[0] == '.' || slug[0] == '-' {
			t.Fatalf("softwareSlug(%q) = %q", s, slug)
		}
		for _, r := range slug {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
				t.Fatalf("softwareSlug(%q) = %q has %q", s, slug, r)
			}
		}
	})
}

// A build killed between swapByRename's two renames leaves the published
// site aside as a staging directory's .old and no output directory. The
// next build puts it back instead of clearing it away with the other
// leftovers, so that the site survives even if that build fails.
func TestInterruptedSwapRestoresThePublishedSite(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "public")
	stage := filepath.Join(parent, ".public.build-123")
	if err := os.MkdirAll(stage+".old", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage+".old", "index.html"), []byte("the published site"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(stage, 0o755); err != nil { // the new site, never swapped in
		t.Fatal(err)
	}
	o, err := newOutput(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(o.stage)
	got, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil || string(got) != "the published site" {
		t.Fatalf("the published site was not restored: %q, %v", got, err)
	}
	for _, leftover := range []string{stage, stage + ".old"} {
		if _, err := os.Stat(leftover); !os.IsNotExist(err) {
			t.Errorf("%s still there (%v)", leftover, err)
		}
	}

	// A build without the lock cannot tell a killed swap from one under
	// way (a renamed directory keeps its old modification time): it
	// neither restores nor removes the .old, however old it looks.
	os.Rename(dir, stage+".old")
	past := time.Now().Add(-3 * staleAfter)
	if err := os.Chtimes(stage+".old", past, past); err != nil {
		t.Fatal(err)
	}
	o, err = newOutput(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(o.stage)
	if _, err := os.Stat(filepath.Join(stage+".old", "index.html")); err != nil {
		t.Fatalf("an unlocked build touched the .old: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("an unlocked build restored the .old: %v", err)
	}
}

// A previous site that cannot be removed once the new one is swapped in
// does not make the build a failure: the new site is live, and saying the
// build failed would say the old one stayed.
func TestCommitWithAnUnremovablePreviousSite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "public")
	for _, page := range []string{"old", "new"} {
		o, err := newOutput(dir, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.writeFile("index.html", "test", []byte(page)); err != nil {
			t.Fatal(err)
		}
		if page == "new" {
			o.removeAll = func(string) error { return errors.New("operation not permitted") }
		}
		leftover, err := o.commit()
		if err != nil || (leftover != nil) != (page == "new") {
			t.Fatalf("%s site: leftover %v, err %v", page, leftover, err)
		}
		o.discard()
	}
	if got, err := os.ReadFile(filepath.Join(dir, "index.html")); err != nil || string(got) != "new" {
		t.Fatalf("published: %q, %v", got, err)
	}
	// The next build removes what was left.
	o, err := newOutput(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.discard()
	entries, _ := os.ReadDir(filepath.Dir(dir))
	for _, e := range entries {
		if e.Name() != "public" && e.Name() != filepath.Base(o.stage) {
			t.Errorf("%s left beside the site", e.Name())
		}
	}
}

// relURL and absURL keep a query and a fragment and leave absolute URLs
// alone, as Hugo's do: the whole text used to become the path, so
// "about/#opting-out" linked to /obs/about/%23opting-out.
func TestRelURLAndAbsURL(t *testing.T) {
	s, err := newSite(Options{Site: Settings{BaseURL: "https://example.org/obs/"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, rel, abs string }{
		{"", "/obs/", "https://example.org/obs/"},
		{"about/", "/obs/about/", "https://example.org/obs/about/"},
		{"/about/", "/obs/about/", "https://example.org/obs/about/"},
		{"about/#opting-out", "/obs/about/#opting-out", "https://example.org/obs/about/#opting-out"},
		{"live/?x=1", "/obs/live/?x=1", "https://example.org/obs/live/?x=1"},
		{"live/?x=1#top", "/obs/live/?x=1#top", "https://example.org/obs/live/?x=1#top"},
		{"#top", "/obs/#top", "https://example.org/obs/#top"},
		{"a b/", "/obs/a%20b/", "https://example.org/obs/a%20b/"},
		{"https://other.example/x", "https://other.example/x", "https://other.example/x"},
		{"//other.example/x", "//other.example/x", "//other.example/x"},
		{"mailto:me@example.org", "mailto:me@example.org", "mailto:me@example.org"},
	} {
		if got := s.RelURL(c.in); got != c.rel {
			t.Errorf("relURL %q = %q, want %q", c.in, got, c.rel)
		}
		if got := s.AbsURL(c.in); got != c.abs {
			t.Errorf("absURL %q = %q, want %q", c.in, got, c.abs)
		}
	}
}

// fakeDecimal has the method of duckdb.Decimal that formatInt uses; the
// build package may not import DuckDB.
type fakeDecimal struct{ f float64 }

func (d fakeDecimal) Float64() float64 { return d.f }

// formatInt groups the digits of whatever the data and sql give: it printed
// *big.Int (HUGEINT, from sum) and decimals ungrouped, and truncated floats
// (avg, median) instead of rounding them.
func TestFormatInt(t *testing.T) {
	huge, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	var nilInt *int64
	var nilBig *big.Int
	for _, c := range []struct {
		in   any
		want string
	}{
		{nil, ""},
		{nilInt, ""},
		{nilBig, ""},
		{int64(1234567), "1 234 567"},
		{new(int64(-1234567)), "-1 234 567"},
		{int(12345), "12 345"},
		{int8(-12), "-12"},
		{uint16(65535), "65 535"},
		{uint64(18446744073709551615), "18 446 744 073 709 551 615"},
		{big.NewInt(1234567), "1 234 567"},
		{huge, "123 456 789 012 345 678 901 234 567 890"},
		{new(big.Int).Neg(big.NewInt(12345)), "-12 345"},
		{1.5, "2"},
		{1.4999, "1"},
		{-2.5, "-3"},
		{float32(12344.6), "12 345"},
		{1e20, "100 000 000 000 000 000 000"},
		{fakeDecimal{1234567.5}, "1 234 568"},
		{"text", "text"},
	} {
		if got := strings.ReplaceAll(formatInt(c.in), "\u202f", " "); got != c.want {
			t.Errorf("formatInt(%T %v) = %q, want %q", c.in, c.in, got, c.want)
		}
	}
}

// percent takes any Go integer type: the data's numbers are int64 and
// len's are int, which it refused.
func TestIntegerFunctions(t *testing.T) {
	if got, err := percent(1, int64(3)); err != nil || got != 33.3 {
		t.Errorf("percent 1 3 = %v, %v", got, err)
	}
	if got, err := percent(uint8(1), 0); err != nil || got != 0 {
		t.Errorf("percent 1 0 = %v, %v", got, err)
	}
	// sql's sum() is a HUGEINT, which arrives as a *big.Int.
	if got, err := percent(big.NewInt(1), int16(4)); err != nil || got != 25 {
		t.Errorf("percent big 1, 4 = %v, %v", got, err)
	}
	for _, bad := range []any{1.5, "10", nil, new(int64(1)), uint64(1 << 63), (*big.Int)(nil), new(big.Int).Lsh(big.NewInt(1), 70)} {
		if _, err := percent(1, bad); err == nil || !strings.Contains(err.Error(), "percent: want whole numbers, got ") {
			t.Errorf("percent 1 %T %v: %v, want an error", bad, bad, err)
		}
	}
	if _, err := percent("1", 2); err == nil || err.Error() != "percent: want whole numbers, got 1 (string)" {
		t.Errorf("percent \"1\" 2: %v", err)
	}
}

// A power cut soon after a build must not leave the output holding the new
// names with empty contents: every file and directory of the staged site,
// however it got there, is synced before the swap, and the directory that
// holds the output after it. A failed sync fails the build before the swap.
func TestCommitSyncsTheSiteBeforeTheSwap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "public")
	asset := filepath.Join(t.TempDir(), "logo.png")
	if err := os.WriteFile(asset, []byte("png"), 0o644); err != nil {
		t.Fatal(err)
	}
	type call struct {
		path    string
		swapped bool
	}
	build := func(page string, sync func(o *output, p string) error) (*output, error) {
		t.Helper()
		o, err := newOutput(dir, true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(o.discard)
		if sync != nil {
			o.sync = func(p string) error { return sync(o, p) }
		}
		// Unchanged from the previous site (linked to it), written, streamed
		// and copied, some in directories claim makes.
		if err := o.writeFile("unchanged.html", "test", []byte("same")); err != nil {
			t.Fatal(err)
		}
		if err := o.writeFile("a/b/index.html", "test", []byte(page)); err != nil {
			t.Fatal(err)
		}
		f, err := o.create("lists/live.csv", "test")
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(page)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := o.copyFile("img/logo.png", asset); err != nil {
			t.Fatal(err)
		}
		_, err = o.commit()
		return o, err
	}
	if _, err := build("old", nil); err != nil {
		t.Fatal(err)
	}

	var calls []call
	o, err := build("new", func(o *output, p string) error {
		calls = append(calls, call{p, o.committed})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.unchanged == 0 {
		t.Fatal("no file was kept from the previous site: the test covers no linked file")
	}
	synced := map[string]bool{}
	for _, c := range calls {
		if rel, err := filepath.Rel(o.stage, c.path); err == nil && !strings.HasPrefix(rel, "..") && !c.swapped {
			synced[filepath.ToSlash(rel)] = true
		}
	}
	entries := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		entries++
		rel, _ := filepath.Rel(dir, p)
		if !synced[filepath.ToSlash(rel)] {
			t.Errorf("%s was not synced before the swap", rel)
		}
		return nil
	})
	if entries != 9 { // the root, four directories and four files
		t.Errorf("the new site has %d entries, want 9", entries)
	}
	if len(calls) == 0 || calls[len(calls)-1] != (call{filepath.Dir(dir), true}) {
		t.Errorf("syncs %+v, want the output's parent last, after the swap", calls)
	}

	// A file that cannot be synced fails the build and leaves the site
	// that was published.
	if _, err := build("newer", func(o *output, p string) error {
		if strings.HasSuffix(p, "live.csv") {
			return errors.New("input/output error")
		}
		return nil
	}); err == nil || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("commit with a failing sync: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "a", "b", "index.html")); err != nil || string(got) != "new" {
		t.Fatalf("published: %q, %v", got, err)
	}
}

// newOutput, like CheckOutDir, says an output that is a symbolic link is
// one, naming its target: "exists and is not a directory" was all it said.
func TestNewOutputRefusesASymbolicLinkNamingItsTarget(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "www", "site"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "public")
	if err := os.Symlink("www/site", link); err != nil {
		t.Fatal(err)
	}
	o, err := newOutput(link, true)
	if err == nil {
		o.discard()
	}
	want := "output " + link + " is a symbolic link (to www/site): give the directory itself"
	if err == nil || err.Error() != want {
		t.Fatalf("newOutput = %v, want %q", err, want)
	}
}

// mostGiven names a feed shared by several spellings of one software. Its
// rule: the highest count wins; among equal counts the shortest name, then
// the first in byte order. Each case is run on many fresh maps because a
// broken tie-break still passes whenever map order happens to favour the
// right name.
func TestMostGivenBreaksTiesWithoutMapOrder(t *testing.T) {
	cases := []struct {
		counts map[string]int
		want   string
	}{
		// A spam spelling tied with the real one loses for being longer.
		{map[string]int{"mastodon ｂｕｙ ｐｉｌｌｓ": 1, "mastodon": 1}, "mastodon"},
		// Same length: byte order.
		{map[string]int{"b-soft": 1, "a-soft": 1}, "a-soft"},
		{map[string]int{"mastodon": 3, "Mastodon": 3}, "Mastodon"},
		// Shorter beats earlier in byte order.
		{map[string]int{"zz": 1, "a-longer": 1}, "zz"},
		// A higher count beats a shorter name.
		{map[string]int{"mastodon": 2, "m": 1}, "mastodon"},
		{map[string]int{"aa": 2, "c": 1, "b": 2, "a-very-long-name": 2}, "b"},
		{map[string]int{"only": 1}, "only"},
		{map[string]int{}, ""},
	}
	for _, c := range cases {
		for range 100 {
			counts := make(map[string]int, len(c.counts))
			for k, v := range c.counts {
				counts[k] = v
			}
			if got := mostGiven(counts); got != c.want {
				t.Errorf("mostGiven(%v) = %q, want %q", c.counts, got, c.want)
				break
			}
		}
	}
}

// Only a directory's EINVAL or ENOTSUP (file systems that cannot sync
// directories) is taken as synced; a file's, or another error, fails the
// build before the swap.
func TestSyncRefusalIsDoneOnlyForDirectories(t *testing.T) {
	for _, c := range []struct {
		err   error
		isDir bool
		want  bool
	}{
		{&os.PathError{Op: "sync", Path: "d", Err: syscall.EINVAL}, true, true},
		{&os.PathError{Op: "sync", Path: "d", Err: syscall.ENOTSUP}, true, true},
		{&os.PathError{Op: "sync", Path: "f", Err: syscall.EINVAL}, false, false},
		{&os.PathError{Op: "sync", Path: "d", Err: syscall.EIO}, true, false},
		{nil, true, false},
	} {
		if got := syncRefusalIsDone(c.err, c.isDir); got != c.want {
			t.Errorf("syncRefusalIsDone(%v, dir %v) = %v, want %v", c.err, c.isDir, got, c.want)
		}
	}
}

// The fallback swap (file systems without RENAME_EXCHANGE): when the new
// site cannot be moved in, the published one is put back, not left aside
// under a staging name with nothing at the output path.
func TestSwapByRenameRestoresTheSiteOnFailure(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "public")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("published"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := swapByRename(filepath.Join(parent, ".public.build-gone"), dir); err == nil {
		t.Fatal("swap with a missing stage succeeded")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "index.html")); err != nil || string(b) != "published" {
		t.Fatalf("after a failed swap the site holds %q, %v", b, err)
	}
}

// An Atom feed holds at most FeedLimit entries, the newest.
func TestFeedIsCapped(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	data := buildtest.Sample(FeedLimit+3, now)
	out := filepath.Join(t.TempDir(), "public")
	site := Settings{BaseURL: "https://observer.example.org/", Theme: "default"}
	if _, err := Build(context.Background(), Options{Site: site, SiteDir: t.TempDir(), OutDir: out, Data: data, Now: now}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "new.atom"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "<entry>"); n != FeedLimit {
		t.Errorf("new.atom has %d entries, want %d", n, FeedLimit)
	}
	last := fmt.Sprintf("new%03d.example.net", FeedLimit-1)
	if !strings.Contains(string(b), ":new/"+last+"<") || strings.Contains(string(b), fmt.Sprintf("new%03d.example.net", FeedLimit)) {
		t.Errorf("new.atom does not end at entry %s", last)
	}
}
