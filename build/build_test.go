package build_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mmcdole/gofeed"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/build"
	"github.com/fediverse-observer/observer/build/buildtest"
	"github.com/fediverse-observer/observer/config"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func testConfig() config.Config {
	cfg := config.Default()
	cfg.Site.BaseURL = "https://observer.example.org/"
	cfg.Site.Title = "Test Observer"
	return cfg
}

func run(t *testing.T, siteDir string, cfg config.Config, data build.Data) (string, build.Report, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "public")
	rep, err := build.Build(context.Background(), build.Options{Site: cfg.BuildSettings("1.2.3"), SiteDir: siteDir, OutDir: out, Data: data, Now: now})
	return out, rep, err
}

func mustBuild(t *testing.T, siteDir string, cfg config.Config, data build.Data) (string, build.Report) {
	t.Helper()
	out, rep, err := run(t, siteDir, cfg, data)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return out, rep
}

func assertContains(t *testing.T, name, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s does not contain %q", name, w)
		}
	}
}

func assertNotContains(t *testing.T, name, body string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(body, b) {
			t.Errorf("%s contains %q", name, b)
		}
	}
}

func i64(v int64) *int64 { return &v }

func smallData() *buildtest.Fake {
	a := observer.Instance{Host: "alpha.example", State: observer.StateLive, Software: "mastodon", Version: "4.3.1",
		Users: i64(12), Name: "Alpha", Description: "The first one.", FirstAliveAt: now.Add(-2 * time.Hour)}
	b := observer.Instance{Host: "beta.example", State: observer.StateLive, Software: "lemmy", Version: "0.19",
		Name: "Beta", FirstAliveAt: now.Add(-30 * time.Hour)}
	c := observer.Instance{Host: "gamma.example", State: observer.StateDying, Software: "mastodon", Version: "4.2.0", Users: i64(3000)}
	return &buildtest.Fake{
		NewList:  []observer.Instance{a, b},
		LiveList: []observer.Instance{a, b, c},
		StatsValue: observer.Stats{Live: 3, New: 2,
			BySoftware: []observer.SoftwareCount{{Software: "mastodon", Live: 2}, {Software: "lemmy", Live: 1}},
			Days: []observer.DayCount{{Day: now.AddDate(0, 0, -1).Truncate(24 * time.Hour), Live: 2, New: 1},
				{Day: now.Truncate(24 * time.Hour), Live: 3, New: 1}}},
		Transitions: []observer.Transition{{Host: "gamma.example", From: observer.StateLive, To: observer.StateDying, At: now.Add(-time.Hour)}},
	}
}

func smallSite(t *testing.T) string {
	return buildtest.WriteArchive(t, t.TempDir(), `
-- content/_index.md --
---
title: Welcome home
---
Intro text for **everyone**.
-- content/about.md --
+++
title = "About us"
weight = 2
menu = "main"
colour = "blue"
date = 2024-05-01
+++
# Big heading

| a | b |
|---|---|
| 1 | 2 |

See https://example.org and ~~old~~.[^n]

[^n]: A note.

<div class="raw">raw html</div>
-- content/draft.md --
---
title: Secret
draft: true
---
not yet
-- content/docs/guide.md --
---
title: Guide
description: How to
---
Guide body
-- content/docs/image.txt --
an asset
-- layouts/_partials/observer/footer.html --
<footer class="overridden">Footer override {{ .Site.Title }}</footer>
-- static/extra.txt --
static file

`)
}

func TestBuildSmallSite(t *testing.T) {
	site := smallSite(t)
	out, rep := mustBuild(t, site, testConfig(), smallData())

	home := testsupport.ReadFile(t, filepath.Join(out, "index.html"))
	assertContains(t, "index.html", home,
		"<h1 id=\"title\">Welcome home</h1>", "Intro text for <strong>everyone</strong>",
		`<a href="https://alpha.example/" rel="nofollow ugc noopener">alpha.example</a>`,
		`<a href="https://beta.example/" rel="nofollow ugc noopener">beta.example</a>`,
		"4.3.1", "The first one.", `href="/new.atom"`, "Footer override Test Observer",
		`<a href="/about/">About us</a>`, "<time datetime=\"2026-11-21T10:00:00Z\">2026-11-21</time>",
		`href="/new/mastodon.atom"`, `href="/new/lemmy.atom"`)
	// Newest first.
	if strings.Index(home, "alpha.example") > strings.Index(home, "beta.example") {
		t.Error("index.html: alpha (newer) should come before beta")
	}
	assertNotContains(t, "index.html", home, "gamma.example", "__reload")

	about := testsupport.ReadFile(t, filepath.Join(out, "about", "index.html"))
	assertContains(t, "about/index.html", about, "<title>About us · Test Observer</title>",
		`<h1 id="big-heading">Big heading</h1>`, "<table>", "<td>1</td>", `<a href="https://example.org">https://example.org</a>`,
		"<del>old</del>", `class="footnotes"`, "2024-05-01", "<!-- raw HTML omitted -->")
	assertNotContains(t, "about/index.html", about, `<div class="raw">`)

	assertContains(t, "docs/guide/index.html", testsupport.ReadFile(t, filepath.Join(out, "docs", "guide", "index.html")), "Guide body", `content="How to"`)
	if got := testsupport.ReadFile(t, filepath.Join(out, "docs", "image.txt")); got != "an asset" {
		t.Errorf("content asset: %q", got)
	}
	if _, err := os.Stat(filepath.Join(out, "draft")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("draft was published: %v", err)
	}
	if got := testsupport.ReadFile(t, filepath.Join(out, "extra.txt")); got != "static file\n" {
		t.Errorf("static file: %q", got)
	}
	// The default theme's static files come from the embedded theme.
	assertContains(t, "style.css", testsupport.ReadFile(t, filepath.Join(out, "style.css")), "prefers-color-scheme: dark")

	if got, want := testsupport.ReadFile(t, filepath.Join(out, "live.txt")), "alpha.example\nbeta.example\ngamma.example\n"; got != want {
		t.Errorf("live.txt = %q, want %q", got, want)
	}
	var live []map[string]any
	if err := json.Unmarshal([]byte(testsupport.ReadFile(t, filepath.Join(out, "live.json"))), &live); err != nil {
		t.Fatalf("live.json: %v", err)
	}
	if len(live) != 3 || live[2]["host"] != "gamma.example" || live[2]["state"] != "dying" || live[2]["users"] != 3000.0 || live[1]["users"] != nil {
		t.Errorf("live.json = %v", live)
	}
	rows := readCSV(t, filepath.Join(out, "live.csv"))
	if want := [][]string{{"host", "software", "version", "users", "state"}, {"alpha.example", "mastodon", "4.3.1", "12", "live"},
		{"beta.example", "lemmy", "0.19", "", "live"}, {"gamma.example", "mastodon", "4.2.0", "3000", "dying"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("live.csv = %q", rows)
	}
	newRows := readCSV(t, filepath.Join(out, "new.csv"))
	if len(newRows) != 3 || newRows[1][0] != "alpha.example" || newRows[1][8] != "2026-11-21T10:00:00Z" ||
		newRows[0][10] != "state" || newRows[1][10] != "live" {
		t.Errorf("new.csv = %q", newRows)
	}

	livePage := testsupport.ReadFile(t, filepath.Join(out, "live", "index.html"))
	assertContains(t, "live/index.html", livePage, "<svg class=\"chart chart-live\"", "<svg class=\"chart chart-new\"",
		">mastodon</th>", "gamma.example", "live → dying")
	assertNotContains(t, "live/index.html", livePage, "<script")

	sitemap := testsupport.ReadFile(t, filepath.Join(out, "sitemap.xml"))
	assertContains(t, "sitemap.xml", sitemap, "<loc>https://observer.example.org/</loc>",
		"<loc>https://observer.example.org/about/</loc>", "<lastmod>2024-05-01</lastmod>", "<loc>https://observer.example.org/live/</loc>")
	assertNotContains(t, "sitemap.xml", sitemap, "draft", "404")
	assertContains(t, "robots.txt", testsupport.ReadFile(t, filepath.Join(out, "robots.txt")), "Sitemap: https://observer.example.org/sitemap.xml")
	assertContains(t, "404.html", testsupport.ReadFile(t, filepath.Join(out, "404.html")), "Page not found")

	if rep.Pages != 2 || rep.Live != 3 || rep.New != 2 || rep.Files != rep.Written || rep.Unchanged != 0 {
		t.Errorf("report = %+v", rep)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

func TestUnsafeHTMLAllowed(t *testing.T) {
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- content/raw.md --
<div class="raw">raw html</div>
`)
	cfg := testConfig()
	cfg.Site.UnsafeHTML = true
	out, _ := mustBuild(t, site, cfg, smallData())
	assertContains(t, "raw/index.html", testsupport.ReadFile(t, filepath.Join(out, "raw", "index.html")), `<div class="raw">raw html</div>`)
}

func TestBaseURLWithPath(t *testing.T) {
	site := smallSite(t)
	cfg := testConfig()
	cfg.Site.BaseURL = "https://example.net/observer"
	out, _ := mustBuild(t, site, cfg, smallData())
	home := testsupport.ReadFile(t, filepath.Join(out, "index.html"))
	assertContains(t, "index.html", home, `href="/observer/about/"`, `href="/observer/style.css"`, `href="/observer/new.atom"`,
		`<link rel="canonical" href="https://example.net/observer/">`)
	feed := parseFeed(t, filepath.Join(out, "new.atom"))
	if feed.FeedLink != "https://example.net/observer/new.atom" {
		t.Errorf("self link = %q", feed.FeedLink)
	}
}

func parseFeed(t *testing.T, path string) *gofeed.Feed {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	feed, err := gofeed.NewParser().Parse(f)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	if feed.FeedType != "atom" || feed.FeedVersion != "1.0" {
		t.Fatalf("%s: %s %s, want atom 1.0", path, feed.FeedType, feed.FeedVersion)
	}
	return feed
}

func TestAtomFeeds(t *testing.T) {
	data := buildtest.Sample(30, now)
	out, _ := mustBuild(t, t.TempDir(), testConfig(), data)

	feed := parseFeed(t, filepath.Join(out, "new.atom"))
	if feed.FeedLink != "https://observer.example.org/new.atom" || feed.Link != "https://observer.example.org/" {
		t.Errorf("links: self %q, alternate %q", feed.FeedLink, feed.Link)
	}
	if len(feed.Items) != len(data.NewList) {
		t.Fatalf("new.atom has %d entries, want %d", len(feed.Items), len(data.NewList))
	}
	if !feed.UpdatedParsed.Equal(data.NewList[0].FirstAliveAt) {
		t.Errorf("feed updated %v, want newest entry %v", feed.UpdatedParsed, data.NewList[0].FirstAliveAt)
	}
	for i, item := range feed.Items {
		inst := data.NewList[i]
		wantID := "tag:observer.example.org," + inst.FirstAliveAt.UTC().Format("2006-01-02") + ":new/" + inst.Host
		if item.GUID != wantID {
			t.Errorf("entry %d id %q, want %q", i, item.GUID, wantID)
		}
		if item.UpdatedParsed == nil || !item.UpdatedParsed.Equal(inst.FirstAliveAt) || item.UpdatedParsed.Location() != time.UTC {
			t.Errorf("entry %d updated %v, want %v in UTC", i, item.UpdatedParsed, inst.FirstAliveAt)
		}
		if !strings.HasSuffix(item.Updated, "Z") {
			t.Errorf("entry %d updated %q is not UTC", i, item.Updated)
		}
		if item.Title != inst.Host || item.Link != "https://"+inst.Host+"/" {
			t.Errorf("entry %d: title %q link %q", i, item.Title, item.Link)
		}
	}

	// One feed per software family, holding exactly that family's entries.
	lemmy := parseFeed(t, filepath.Join(out, "new", "lemmy.atom"))
	var want []string
	for _, inst := range data.NewList {
		if inst.Software == "lemmy" {
			want = append(want, inst.Host)
		}
	}
	var got []string
	for _, item := range lemmy.Items {
		got = append(got, item.Title)
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("new/lemmy.atom entries %v, want %v", got, want)
	}
	if lemmy.FeedLink != "https://observer.example.org/new/lemmy.atom" {
		t.Errorf("lemmy self link %q", lemmy.FeedLink)
	}

	// A rebuild gives the same feed byte for byte: ids and dates are stable.
	first := testsupport.ReadFile(t, filepath.Join(out, "new.atom"))
	out2, _ := mustBuild(t, t.TempDir(), testConfig(), data)
	if testsupport.ReadFile(t, filepath.Join(out2, "new.atom")) != first {
		t.Error("new.atom differs between two builds of the same data")
	}
}

// Each entry's content says what is known of the host and leaves out what
// is not: a version only after a software, a name and a description only
// when given. Only titles, links and ids were checked, so a flipped or
// dropped condition (an empty "<p></p>", "runs  4.0", a missing name) went
// unseen. The content is HTML, escaped once: gofeed hands it back with the
// XML escaping undone.
func TestAtomEntryContent(t *testing.T) {
	full := smallData().NewList[0] // alpha.example: every field given
	d := &buildtest.Fake{NewList: []observer.Instance{
		full,
		{Host: "nover.example", State: observer.StateLive, Software: "lemmy", Description: "Links & <b>talk</b>.",
			FirstAliveAt: now.Add(-3 * time.Hour)},
		{Host: "nosoft.example", State: observer.StateLive, Version: "9.9", Name: "Q & A", Users: i64(0),
			FirstAliveAt: now.Add(-4*time.Hour - 30*time.Minute)},
		{Host: "bare.example", State: observer.StateLive, FirstAliveAt: now.Add(-5 * time.Hour)},
	}}
	d.LiveList = slices.Clone(d.NewList)
	slices.SortFunc(d.LiveList, func(a, b observer.Instance) int { return strings.Compare(a.Host, b.Host) })
	out, _ := mustBuild(t, t.TempDir(), testConfig(), d)

	want := []string{
		`<p><a href="https://alpha.example/" rel="nofollow ugc noopener">alpha.example</a> runs mastodon 4.3.1. ` +
			`First seen 2026-11-21 10:00 UTC. Users: 12.</p><p><strong>Alpha</strong></p><p>The first one.</p>`,
		`<p><a href="https://nover.example/" rel="nofollow ugc noopener">nover.example</a> runs lemmy. ` +
			`First seen 2026-11-21 09:00 UTC.</p><p>Links &amp; &lt;b&gt;talk&lt;/b&gt;.</p>`,
		`<p><a href="https://nosoft.example/" rel="nofollow ugc noopener">nosoft.example</a>. ` +
			`First seen 2026-11-21 07:30 UTC. Users: 0.</p><p><strong>Q &amp; A</strong></p>`,
		`<p><a href="https://bare.example/" rel="nofollow ugc noopener">bare.example</a>. ` +
			`First seen 2026-11-21 07:00 UTC.</p>`,
	}
	feed := parseFeed(t, filepath.Join(out, "new.atom"))
	if len(feed.Items) != len(want) {
		t.Fatalf("new.atom has %d entries, want %d", len(feed.Items), len(want))
	}
	for i, item := range feed.Items {
		if item.Content != want[i] {
			t.Errorf("entry %d (%s) content:\n%s\nwant:\n%s", i, item.Title, item.Content, want[i])
		}
	}
}

func TestHostileStringsAreInert(t *testing.T) {
	data := buildtest.Sample(len(buildtest.Hostile)+2, now)
	out, _ := mustBuild(t, t.TempDir(), testConfig(), data)

	for _, page := range []string{"index.html", "live/index.html"} {
		body := testsupport.ReadFile(t, filepath.Join(out, page))
		assertNotContains(t, page, body, "<script>alert", "<img src=x", "</textarea>")
	}
	home := testsupport.ReadFile(t, filepath.Join(out, "index.html"))
	assertContains(t, "index.html", home, "&lt;script&gt;alert(1)&lt;/script&gt;", "&#34;quoted&#34; &#39;single&#39; &amp; ampersand",
		"=HYPERLINK(&#34;http://evil.example/&#34;,&#34;click&#34;)")

	// Atom: after the feed parser decodes the XML, the HTML content still
	// shows the strings as text.
	feed := parseFeed(t, filepath.Join(out, "new.atom"))
	byHost := map[string]*gofeed.Item{}
	for _, item := range feed.Items {
		byHost[item.Title] = item
	}
	for i, h := range buildtest.Hostile {
		item := byHost[data.NewList[i].Host]
		if item == nil {
			t.Fatalf("no entry for %s", data.NewList[i].Host)
		}
		if strings.Contains(item.Content, h) && strings.ContainsAny(h, `<>&"`) {
			t.Errorf("entry %s: content carries %q unescaped: %s", item.Title, h, item.Content)
		}
		if !strings.Contains(item.Content, htmlEscape(observer.CleanText(h, observer.MaxNameRunes))) {
			t.Errorf("entry %s: content lacks escaped %q: %s", item.Title, h, item.Content)
		}
		assertNotContains(t, "atom entry", item.Content, "<script", "<img")
	}
	for _, name := range []string{"new.atom", "new/script-alert-1---script.atom"} {
		assertNotContains(t, name, testsupport.ReadFile(t, filepath.Join(out, name)), "<script", "]]></content><script")
	}

	// CSV: no cell of any row starts with a formula character.
	for _, name := range []string{"new.csv", "live.csv"} {
		rows := readCSV(t, filepath.Join(out, name))
		found := false
		for _, row := range rows {
			for _, cell := range row {
				if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
					t.Errorf("%s: cell %q starts with a formula character", name, cell)
				}
				if cell == `'=HYPERLINK("http://evil.example/","click")` {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s: the HYPERLINK formula is not there, made inert", name)
		}
	}

	// JSON keeps the strings as cleaned, not escaped (a consumer escapes for
	// its own output).
	var live []map[string]any
	if err := json.Unmarshal([]byte(testsupport.ReadFile(t, filepath.Join(out, "live.json"))), &live); err != nil {
		t.Fatal(err)
	}
	versions := map[string]bool{}
	for _, r := range live {
		versions[r["version"].(string)] = true
	}
	for _, h := range buildtest.Hostile {
		if !versions[observer.CleanText(h, observer.MaxVersionRunes)] {
			t.Errorf("live.json lost %q", h)
		}
	}
	assertNotContains(t, "live.json", testsupport.ReadFile(t, filepath.Join(out, "live.json")), "<script")
}

// A spreadsheet whose list separator is ';' (Excel in much of Europe)
// splits a line of a CSV file at every ';', and a quote in the middle of
// what it takes for a cell is no quote to it, so the text after a ';' in any
// cell starts a cell of its own. None may start with a formula character,
// after spaces (which a spreadsheet may trim), or with a quote, which would
// open a quoted cell that can hold one.
func TestCSVIsInertWhereSemicolonsSeparate(t *testing.T) {
	data := smallData()
	for _, l := range [][]observer.Instance{data.NewList, data.LiveList} {
		l[0].Software, l[0].Version = "x;=1+1", `1, 2;=HYPERLINK("http://evil.example/","click")`
		l[0].Name, l[0].Description = "a; @SUM(1)", `b;"=1+1";-2;;+3`
	}
	out, _ := mustBuild(t, t.TempDir(), testConfig(), data)
	for _, name := range []string{"new.csv", "live.csv"} {
		body := testsupport.ReadFile(t, filepath.Join(out, name))
		for _, line := range strings.Split(body, "\n") {
			for _, cell := range strings.Split(line, ";")[1:] {
				if c := strings.TrimLeft(cell, " "); c != "" && strings.ContainsRune(formulaStart+`"`, rune(c[0])) {
					t.Errorf("%s: %q starts a cell where ';' separates: %s", name, c, line)
				}
			}
		}
		// Read with commas, the texts are all there.
		assertContains(t, name, strings.Join(slices.Concat(readCSV(t, filepath.Join(out, name))...), "\n"),
			"x;'=1+1", `1, 2;'=HYPERLINK("http://evil.example/","click")`)
	}
	assertContains(t, "new.csv", strings.Join(slices.Concat(readCSV(t, filepath.Join(out, "new.csv"))...), "\n"),
		"a; '@SUM(1)", `b;'"=1+1";'-2;;'+3`)
}

// formulaStart is what a spreadsheet takes for the start of a formula.
const formulaStart = "=+-@\t\r"

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// fileState records a file's bytes and modification time.
type fileState struct {
	data  string
	mtime time.Time
}

// snapshot records the state of every file under dir, by its path relative
// to dir.
func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	m := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		m[filepath.ToSlash(rel)] = fileState{string(b), st.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func backdate(t *testing.T, dir string, when time.Time) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, when, when)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRebuildWritesOnlyChangedFiles(t *testing.T) {
	site := smallSite(t)
	data := smallData()
	out := filepath.Join(t.TempDir(), "public")
	opts := build.Options{Site: testConfig().BuildSettings("dev"), SiteDir: site, OutDir: out, Data: data, Now: now}
	if _, err := build.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	backdate(t, out, old)
	before := snapshot(t, out)

	// Nothing changed: every file keeps its content and time.
	opts.Now = now.Add(time.Hour)
	rep, err := build.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Written != 0 || rep.Removed != 0 || rep.Unchanged != len(before) {
		t.Errorf("unchanged rebuild report %+v, want %d unchanged", rep, len(before))
	}
	if after := snapshot(t, out); !reflect.DeepEqual(after, before) {
		t.Errorf("a rebuild with nothing changed touched files:\n%s", diffSnap(before, after))
	}

	// A new live host and a removed page: only the files that depend on them change.
	data.LiveList = append(data.LiveList, observer.Instance{Host: "zeta.example", State: observer.StateLive, Software: "gotosocial"})
	if err := os.Remove(filepath.Join(site, "content", "docs", "guide.md")); err != nil {
		t.Fatal(err)
	}
	rep, err = build.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, out)
	for _, name := range []string{"live.txt", "live.csv", "live.json", "sitemap.xml"} {
		if after[name].data == before[name].data || after[name].mtime.Equal(old) {
			t.Errorf("%s was not rewritten", name)
		}
	}
	for _, name := range []string{"index.html", "new.atom", "new.csv", "style.css", "about/index.html", "robots.txt", "extra.txt"} {
		if after[name] != before[name] {
			t.Errorf("%s changed although its content is the same", name)
		}
	}
	if _, ok := after["docs/guide/index.html"]; ok {
		t.Error("docs/guide/index.html is still there after its source was removed")
	}
	// The page was the only one of section docs, which goes with it
	// (its list, feed and first pager's redirect), and the home page's
	// RSS feed listed it.
	for _, name := range []string{"docs/index.html", "docs/index.xml", "docs/page/1/index.html"} {
		if _, ok := after[name]; ok {
			t.Errorf("%s is still there after its section's only page was removed", name)
		}
	}
	if after["index.xml"].data == before["index.xml"].data {
		t.Error("index.xml still lists the removed page")
	}
	if rep.Removed != 4 || rep.Written != 5 {
		t.Errorf("report %+v, want 4 removed, 5 written", rep)
	}

	// A value changed to another of the same length: the files holding it
	// keep their size, so only comparing the bytes tells that they changed,
	// and a file kept for its size alone would publish the old version.
	backdate(t, out, old)
	before = snapshot(t, out)
	data.LiveList[2].Version = "4.2.1" // gamma.example, was 4.2.0
	rep, err = build.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	after = snapshot(t, out)
	var changed []string
	for name, st := range after {
		if st != before[name] {
			changed = append(changed, name)
		}
	}
	slices.Sort(changed)
	for _, name := range changed {
		if len(after[name].data) != len(before[name].data) || after[name].mtime.Equal(old) {
			t.Errorf("%s: size %d → %d, mtime %v: want the same size, rewritten", name, len(before[name].data), len(after[name].data), after[name].mtime)
		}
	}
	if want := []string{"live.csv", "live.json"}; !slices.Equal(changed, want) {
		t.Errorf("files changed by a same-length version change: %v, want %v", changed, want)
	}
	assertContains(t, "live.csv", after["live.csv"].data, "4.2.1")
	assertNotContains(t, "live.csv", after["live.csv"].data, "4.2.0")
	if rep.Removed != 0 || rep.Written != 2 || rep.Unchanged != len(after)-2 {
		t.Errorf("report %+v, want 2 written, %d unchanged", rep, len(after)-2)
	}
	assertNoStaging(t, filepath.Dir(out))
}

// A site built under a private umask (files 0600, which nginx cannot read)
// and rebuilt under the right one gets the modes the rebuild gives new
// files, though its content did not change: a file kept as it was kept its
// mode too, so the site stayed unreadable until every file changed.
func TestRebuildGivesUnchangedFilesTheBuildsMode(t *testing.T) {
	site := smallSite(t)
	opts := build.Options{Site: testConfig().BuildSettings("dev"), SiteDir: site, OutDir: filepath.Join(t.TempDir(), "public"), Data: smallData(), Now: now}
	if _, err := build.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	fresh := map[string]fs.FileMode{}
	err := filepath.WalkDir(opts.OutDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		fresh[p] = st.Mode().Perm()
		return os.Chmod(p, 0o600) // as a build under umask 077 leaves them
	})
	if err != nil {
		t.Fatal(err)
	}
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	backdate(t, opts.OutDir, old)
	before := snapshot(t, opts.OutDir)

	rep, err := build.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range fresh {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v after the rebuild, want %v as a new file gets", p, st.Mode().Perm(), want)
		}
	}
	// The content did not change, so neither does the modification time.
	if after := snapshot(t, opts.OutDir); !reflect.DeepEqual(after, before) {
		t.Errorf("the rebuild changed files:\n%s", diffSnap(before, after))
	}
	if rep.Written != 0 || rep.Unchanged != len(before) {
		t.Errorf("report %+v, want %d unchanged", rep, len(before))
	}
}

func diffSnap(a, b map[string]fileState) string {
	var s strings.Builder
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			s.WriteString(k + " changed\n")
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			s.WriteString(k + " added\n")
		}
	}
	return s.String()
}

func assertNoStaging(t *testing.T, parent string) {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".build-") {
			t.Errorf("staging directory left behind: %s", e.Name())
		}
	}
}

func TestFailedBuildLeavesSiteUntouched(t *testing.T) {
	site := smallSite(t)
	data := smallData()
	out := filepath.Join(t.TempDir(), "public")
	opts := build.Options{Site: testConfig().BuildSettings("dev"), SiteDir: site, OutDir: out, Data: data, Now: now}
	if _, err := build.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, out)

	cases := []struct {
		name  string
		setup func() (undo func())
		want  []string
	}{{
		name: "execution error in a layout",
		setup: func() func() {
			buildtest.WriteArchive(t, site, `
-- layouts/home.html --
{{ define "main" }}
<p>ok</p>
<p>{{ .Page.Nope }}</p>
{{ end }}
`)
			return func() { os.Remove(filepath.Join(site, "layouts", "home.html")) }
		},
		want: []string{"layouts/home.html:3:", "<.Page.Nope>"},
	}, {
		name: "parse error in a partial",
		setup: func() func() {
			buildtest.WriteArchive(t, site, `
-- layouts/_partials/observer/footer.html --
<footer>
{{ if }}
</footer>
`)
			return func() {
				buildtest.WriteArchive(t, site, `
-- layouts/_partials/observer/footer.html --
<footer class="overridden">Footer override {{ .Site.Title }}</footer>
`)
			}
		},
		want: []string{"layouts/_partials/observer/footer.html:2", "missing value for if"},
	}, {
		name: "error inside a partial",
		setup: func() func() {
			buildtest.WriteArchive(t, site, `
-- layouts/_partials/observer/footer.html --
<footer>

{{ index .Site.Pages 99 }}</footer>
`)
			return func() {
				buildtest.WriteArchive(t, site, `
-- layouts/_partials/observer/footer.html --
<footer class="overridden">Footer override {{ .Site.Title }}</footer>
`)
			}
		},
		want: []string{"layouts/_partials/observer/footer.html:3:", "<index .Site.Pages 99>", "index out of range", "baseof.html:"},
	}, {
		name: "data error while streaming the live list",
		setup: func() func() {
			data.LiveErr = errors.New("disk on fire")
			return func() { data.LiveErr = nil }
		},
		want: []string{"live instances", "disk on fire"},
	}, {
		name: "bad front matter",
		setup: func() func() {
			buildtest.WriteArchive(t, site, `
-- content/bad.md --
---
title: [unclosed
---
body
`)
			return func() { os.Remove(filepath.Join(site, "content", "bad.md")) }
		},
		want: []string{"content/bad.md", "front matter"},
	}, {
		name: "two sources for one file",
		setup: func() func() {
			buildtest.WriteArchive(t, site, `
-- content/live.md --
clash
`)
			return func() { os.Remove(filepath.Join(site, "content", "live.md")) }
		},
		want: []string{"two sources produce live/index.html: ", "content/live.md"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			undo := c.setup()
			defer undo()
			_, err := build.Build(context.Background(), opts)
			if err == nil {
				t.Fatal("build succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "template template") {
				t.Errorf("error %q says template twice", err)
			}
			if after := snapshot(t, out); !reflect.DeepEqual(after, before) {
				t.Errorf("failed build changed the site:\n%s", diffSnap(before, after))
			}
			assertNoStaging(t, filepath.Dir(out))
		})
	}
	// And the site still builds once the error is gone.
	if _, err := build.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
}

func TestUnsortedLiveListIsAnError(t *testing.T) {
	data := smallData()
	data.LiveList[0], data.LiveList[1] = data.LiveList[1], data.LiveList[0]
	_, _, err := run(t, t.TempDir(), testConfig(), data)
	if err == nil || !strings.Contains(err.Error(), "not sorted by host") {
		t.Fatalf("err = %v", err)
	}
}

// A host listed twice is a broken data source too: live.txt and the CSV
// would count it twice.
func TestDuplicateLiveHostIsAnError(t *testing.T) {
	data := smallData()
	data.LiveList = append(data.LiveList[:2:2], data.LiveList[1], data.LiveList[2])
	_, _, err := run(t, t.TempDir(), testConfig(), data)
	if err == nil || !strings.Contains(err.Error(), "not sorted by host") {
		t.Fatalf("err = %v", err)
	}
}

// A data source that yields the new list out of order still gets feeds
// newest first, with the newest entry's time as the feed's.
func TestMisorderedNewListIsSorted(t *testing.T) {
	data := buildtest.Sample(5, now)
	slices.Reverse(data.NewList) // oldest first
	out, _ := mustBuild(t, t.TempDir(), testConfig(), data)
	feed := parseFeed(t, filepath.Join(out, "new.atom"))
	if len(feed.Items) != 5 || feed.Items[0].Title != "new000.example.net" || feed.Items[4].Title != "new004.example.net" {
		var got []string
		for _, it := range feed.Items {
			got = append(got, it.Title)
		}
		t.Fatalf("new.atom entries %v, want newest first", got)
	}
	if newest := data.NewList[4].FirstAliveAt; !feed.UpdatedParsed.Equal(newest) {
		t.Errorf("feed updated %v, want the newest entry's %v", feed.UpdatedParsed, newest)
	}
}

func TestThemes(t *testing.T) {
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- themes/plain/layouts/baseof.html --
<html><body>{{ partial "nav.html" . }}<main>{{ block "main" . }}{{ end }}</main></body></html>
-- themes/plain/layouts/_partials/nav.html --
<nav>theme nav</nav>
-- themes/plain/layouts/home.html --
{{ define "main" }}HOME {{ len .Site.Data.observer.New }} new{{ range site.Data.observer.Live }} [{{ .Host }}]{{ end }}{{ end }}
-- themes/plain/layouts/page.html --
{{ define "main" }}PAGE {{ .Title }} {{ .Params.colour }}{{ end }}
-- themes/plain/layouts/live.html --
{{ define "main" }}LIVE {{ .Site.Data.observer.Stats.Live }}{{ end }}
-- themes/plain/layouts/404.html --
standalone 404 {{ .Site.Title }}
-- themes/plain/layouts/stats.html --
{{ define "main" }}{{ range sql "select software, n from counts where n > ?" 1 }}<i>{{ .software }}={{ .n }}</i>{{ end }}{{ end }}
-- themes/plain/static/plain.css --
body{}
-- themes/plain/static/shared.txt --
from theme
-- static/shared.txt --
from site
-- layouts/_partials/nav.html --
<nav>site nav</nav>
-- content/about.md --
---
title: About
colour: green
---

-- content/stats.md --
---
title: Stats
layout: stats.html
---

`)
	data := smallData()
	var gotQuery string
	var gotArgs []any
	data.QueryFunc = func(q string, args ...any) ([]map[string]any, error) {
		gotQuery, gotArgs = q, args
		return []map[string]any{{"software": "<b>mastodon</b>", "n": int64(2)}}, nil
	}
	cfg := testConfig()
	cfg.Site.Theme = "plain"
	out, _ := mustBuild(t, site, cfg, data)

	if got := testsupport.ReadFile(t, filepath.Join(out, "index.html")); got != "<html><body><nav>site nav</nav><main>HOME 2 new [alpha.example] [beta.example] [gamma.example]</main></body></html>" {
		t.Errorf("index.html = %q", got)
	}
	assertContains(t, "about", testsupport.ReadFile(t, filepath.Join(out, "about", "index.html")), "PAGE About green")
	assertContains(t, "live", testsupport.ReadFile(t, filepath.Join(out, "live", "index.html")), "LIVE 3")
	if got := testsupport.ReadFile(t, filepath.Join(out, "404.html")); got != "standalone 404 Test Observer" {
		t.Errorf("404.html = %q", got)
	}
	assertContains(t, "stats", testsupport.ReadFile(t, filepath.Join(out, "stats", "index.html")), "<i>&lt;b&gt;mastodon&lt;/b&gt;=2</i>")
	if gotQuery != "select software, n from counts where n > ?" || !reflect.DeepEqual(gotArgs, []any{1}) {
		t.Errorf("sql got %q %v", gotQuery, gotArgs)
	}
	if got := testsupport.ReadFile(t, filepath.Join(out, "shared.txt")); got != "from site" {
		t.Errorf("site static does not override theme static: %q", got)
	}
	if _, err := os.Stat(filepath.Join(out, "plain.css")); err != nil {
		t.Error(err)
	}
	// Another theme does not fall back to the embedded default's files.
	if _, err := os.Stat(filepath.Join(out, "style.css")); err == nil {
		t.Error("style.css of the default theme leaked into theme plain")
	}

	cfg.Site.Theme = "missing"
	if _, _, err := run(t, site, cfg, data); err == nil || !strings.Contains(err.Error(), `theme "missing" not found`) {
		t.Errorf("unknown theme: err = %v", err)
	}
	// A theme without the observer's live page gets the built-in one, in
	// the theme's frame.
	os.Remove(filepath.Join(site, "themes", "plain", "layouts", "live.html"))
	cfg.Site.Theme = "plain"
	out, _ = mustBuild(t, site, cfg, data)
	assertContains(t, "live", testsupport.ReadFile(t, filepath.Join(out, "live", "index.html")), "<html><body><nav>site nav</nav><main>", "By software", "</main></body></html>")
	data.QueryFunc = func(string, ...any) ([]map[string]any, error) { return nil, errors.New("no such table counts") }
	buildtest.WriteArchive(t, site, `
-- themes/plain/layouts/live.html --
{{ define "main" }}{{ end }}
`)
	if _, _, err := run(t, site, cfg, data); err == nil || !strings.Contains(err.Error(), "no such table counts") ||
		!strings.Contains(err.Error(), "themes/plain/layouts/stats.html:1") {
		t.Errorf("sql error: err = %v", err)
	}
}

func TestDefaultThemeOverride(t *testing.T) {
	// A project-level layout replaces one file of the embedded default theme.
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- layouts/_partials/observer/instance.html --
<li class="mine">{{ .Host }}</li>
`)
	out, _ := mustBuild(t, site, testConfig(), smallData())
	home := testsupport.ReadFile(t, filepath.Join(out, "index.html"))
	assertContains(t, "index.html", home, `<li class="mine">alpha.example</li>`, `class="skip-link"`)
}

func TestShippedContentBuilds(t *testing.T) {
	// The repository's own site: content/ and themes/default.
	out, rep := mustBuild(t, "..", testConfig(), smallData())
	about := testsupport.ReadFile(t, filepath.Join(out, "about", "index.html"))
	assertContains(t, "about/index.html", about, "every 29 hours", "User-agent: FediverseObserver", "Disallow: /",
		"FediverseObserver/VERSION (+CONTACT)", "30 days", "first 7 days")
	if rep.Pages != 1 {
		t.Errorf("pages = %d", rep.Pages)
	}
	if !bytes.Contains([]byte(testsupport.ReadFile(t, filepath.Join(out, "index.html"))), []byte(`href="/about/"`)) {
		t.Error("home does not link the about page")
	}
}

// TestWorkedExample builds the worked example of docs/theming.md from the
// page itself, so the documented files keep working (duck's cookbook test
// runs its query against real data).
func TestWorkedExample(t *testing.T) {
	doc := testsupport.ReadFile(t, filepath.Join("..", "docs", "theming.md"))
	_, example, ok := strings.Cut(doc, "## Worked example")
	if !ok {
		t.Fatal("docs/theming.md has no worked example")
	}
	// Its steps' code blocks, indented under the numbered list, in order:
	// the page, its layout, the footer.
	blocks := regexp.MustCompile("(?s)\n   ```[a-z]+\n(.*?)\n   ```").FindAllStringSubmatch(example, -1)
	if len(blocks) < 3 {
		t.Fatalf("the worked example has %d code blocks, want 3", len(blocks))
	}
	unindent := func(s string) string { return regexp.MustCompile("(?m)^   ").ReplaceAllString(s, "") + "\n" }
	site := buildtest.WriteTree(t, t.TempDir(), map[string]string{
		"content/top.md":                         unindent(blocks[0][1]),
		"layouts/_default/top.html":              unindent(blocks[1][1]),
		"layouts/_partials/observer/footer.html": unindent(blocks[2][1]),
	})
	data := smallData()
	var asked []string
	data.QueryFunc = func(q string, args ...any) ([]map[string]any, error) {
		asked = append(asked, q)
		return []map[string]any{{"software": "mastodon", "n": int64(12345), "users": 17.5}, {"software": nil, "n": int64(2), "users": nil}}, nil
	}
	cfg := testConfig()
	cfg.Site.Contact = "ops@example.org"
	out, _ := mustBuild(t, site, cfg, data)
	if len(asked) != 1 || !strings.Contains(blocks[1][1], `sql "`+asked[0]+`"`) {
		t.Errorf("queries run: %q, want the layout's one", asked)
	}
	top := testsupport.ReadFile(t, filepath.Join(out, "top", "index.html"))
	assertContains(t, "top/index.html", top, "<h1>Top software</h1>", "Counted over every instance",
		"<td>mastodon</td><td class=\"num\">12\u202f345</td><td class=\"num\">18</td>", "<td>unknown</td>",
		"Run by ops@example.org", `<a href="/top/" aria-current="page">Top software</a>`)
}

func TestStaleStagingIsRemoved(t *testing.T) {
	parent := t.TempDir()
	stale := filepath.Join(parent, ".public.build-123")
	fresh := filepath.Join(parent, ".public.build-456")
	for _, d := range []string{stale, fresh} {
		if err := os.MkdirAll(filepath.Join(d, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(stale, old, old)
	_, err := build.Build(context.Background(), build.Options{Site: testConfig().BuildSettings("dev"), SiteDir: t.TempDir(),
		OutDir: filepath.Join(parent, "public"), Data: smallData(), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale staging directory still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a recent staging directory (maybe a concurrent build's) was removed: %v", err)
	}

	// A caller holding the output's lock knows no build is running beside
	// it, so the recent one goes too.
	_, err = build.Build(context.Background(), build.Options{Site: testConfig().BuildSettings("dev"), SiteDir: t.TempDir(),
		OutDir: filepath.Join(parent, "public"), Data: smallData(), Now: now, OutputLocked: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a build holding the lock left a killed build's staging directory: %v", err)
	}
}

// A feed shared by software names with one slug is named after the name most
// of its hosts give, not its newest host's: one spam instance must not
// retitle the feed of every new Mastodon instance.
func TestSoftwareFeedIsNamedByMostHosts(t *testing.T) {
	real := func(host string, age time.Duration) observer.Instance {
		return observer.Instance{Host: host, State: observer.StateLive, Software: "mastodon", FirstAliveAt: now.Add(-age)}
	}
	spam := observer.Instance{Host: "spam.example", State: observer.StateLive, Software: "mastodon ｂｕｙ ｐｉｌｌｓ", FirstAliveAt: now.Add(-time.Hour)}
	for _, tc := range []struct {
		name string
		list []observer.Instance
	}{
		{"one each", []observer.Instance{spam, real("real.example", 2*time.Hour)}},
		{"outvoted", []observer.Instance{spam, real("a.example", 2*time.Hour), real("b.example", 3*time.Hour)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := slices.Clone(tc.list)
			slices.SortFunc(live, func(a, b observer.Instance) int { return strings.Compare(a.Host, b.Host) })
			d := &buildtest.Fake{NewList: tc.list, LiveList: live}
			out, _ := mustBuild(t, t.TempDir(), testConfig(), d)
			feed := parseFeed(t, filepath.Join(out, "new", "mastodon.atom"))
			if want := "Test Observer: new mastodon instances"; feed.Title != want {
				t.Errorf("new/mastodon.atom is titled %q, want %q", feed.Title, want)
			}
			if len(feed.Items) != len(tc.list) {
				t.Errorf("new/mastodon.atom has %d entries, want %d", len(feed.Items), len(tc.list))
			}
			assertNotContains(t, "index.html", testsupport.ReadFile(t, filepath.Join(out, "index.html")), "ｐｉｌｌｓ</a>")
		})
	}
}

// add, sub and percent work on the data's numbers (int64) and len's (int)
// alike.
func TestArithmeticOnTheData(t *testing.T) {
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- layouts/page.html --
<p>{{ $o := site.Data.observer }}{{ add $o.Stats.Live 1 }} {{ sub $o.Stats.Live (len $o.New) }} {{ percent (len $o.New) $o.Stats.Live }} {{ formatInt (add $o.Stats.Live 12344) }}</p>
-- content/a.md --
---
title: A
---
a
`)
	out, _ := mustBuild(t, site, testConfig(), smallData())
	assertContains(t, "a/index.html", testsupport.ReadFile(t, filepath.Join(out, "a", "index.html")), "<p>4 1 66.6 12\u202f347</p>")

	// With a float, add gives a float, as Hugo's does; what is no
	// number fails the build at the template's line.
	buildtest.WriteArchive(t, site, `
-- layouts/page.html --
{{ add site.Data.observer.Stats.Live 0.5 }}
`)
	out, _ = mustBuild(t, site, testConfig(), smallData())
	if got := testsupport.ReadFile(t, filepath.Join(out, "a", "index.html")); got != "3.5" {
		t.Errorf("add 3 0.5 = %q", got)
	}
	buildtest.WriteArchive(t, site, `
-- layouts/page.html --
{{ add site.Data.observer.Stats.Live site }}
`)
	if _, _, err := run(t, site, testConfig(), smallData()); err == nil || !strings.Contains(err.Error(), "layouts/page.html:1") || !strings.Contains(err.Error(), "add") {
		t.Errorf("add of the site: %v", err)
	}
}

// The menu front matter takes Hugo's forms: only `menu: main` used to put
// a page in .Site.Menu, so `menu: [main]`, a table with the key main and
// TOML's [menu.main] left it out without a word. The key is
// case-insensitive like the other known keys.
func TestMenuForms(t *testing.T) {
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- layouts/home.html --
{{ range .Site.Menus.main }}[{{ .Name }}]{{ end }}
-- content/string.md --
---
title: a-string
menu: main
---
-- content/list.md --
---
title: b-list
menu: [footer, main]
---
-- content/map.md --
---
title: c-map
menu:
  main:
    weight: 1
---
-- content/empty.md --
---
title: d-empty
menu: {main: }
---
-- content/toml.md --
+++
title = "e-toml"
[menu.main]
weight = 1
+++
-- content/upper.md --
---
title: f-upper
Menu: main
---
-- content/footer.md --
---
title: x-footer
menu: footer
---
-- content/flist.md --
---
title: x-footer-list
menu: [footer]
---
-- content/fmap.md --
+++
title = "x-footer-map"
[menu.footer]
+++
-- content/nomenu.md --
---
title: x-none
---
-- content/params.md --
---
title: x-params
params:
  menu: main
---
`)
	out, _ := mustBuild(t, site, testConfig(), smallData())
	if got, want := testsupport.ReadFile(t, filepath.Join(out, "index.html")), "[c-map][e-toml][a-string][b-list][d-empty][f-upper]"; got != want {
		t.Errorf("menu = %s, want %s", got, want)
	}
	for _, c := range []struct{ fm, want string }{
		{"menu: 3", "content/bad.md:2: front matter menu: want a menu name such as main, a list such as [main] or a table such as {main: {}}, got 3"},
		{"menu: main\nMenu: main", "content/bad.md:2: front matter has both Menu and menu: keys are case-insensitive"},
	} {
		site := buildtest.WriteTree(t, t.TempDir(), map[string]string{"content/bad.md": "---\n" + c.fm + "\n---\n"})
		if _, _, err := run(t, site, testConfig(), smallData()); err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %q", c.fm, err, c.want)
		}
	}
}

// docs/theming.md says how to take the first N of the streamed
// site.Data.observer.Live:
// one range variable, a counter and {{ break }}.
func TestFirstLiveInstances(t *testing.T) {
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- layouts/home.html --
{{ $n := 0 }}{{ range $x := site.Data.observer.Live }}{{ if ge $n 2 }}{{ break }}{{ end }}{{ $n = add $n 1 }}[{{ $x.Host }}]{{ end }}
`)
	out, _ := mustBuild(t, site, testConfig(), smallData())
	if got, want := testsupport.ReadFile(t, filepath.Join(out, "index.html")), "[alpha.example][beta.example]"; got != want {
		t.Errorf("index.html = %q, want %q", got, want)
	}
	buildtest.WriteArchive(t, site, `
-- layouts/home.html --
{{ range $i, $x := site.Data.observer.Live }}{{ end }}
`)
	if _, _, err := run(t, site, testConfig(), smallData()); err == nil || !strings.Contains(err.Error(), "iterate over more than one variable") {
		t.Errorf("two range variables: %v, want the error the docs describe", err)
	}
}
