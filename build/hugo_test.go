package build_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/build/buildtest"
	"github.com/fediverse-observer/observer/config"
)

// These tests are written as Hugo's integration tests are: a whole site
// as one text (observer.toml, content, layouts), built, and the files of
// public/ checked.

// hugoBuild builds the site of an archive; its observer.toml, if any, is
// read over testConfig.
func hugoBuild(t *testing.T, archive string) string {
	t.Helper()
	site := buildtest.WriteArchive(t, t.TempDir(), archive)
	cfg := testConfig()
	if b, err := os.ReadFile(filepath.Join(site, "observer.toml")); err == nil {
		if err := config.Parse(b, &cfg); err != nil {
			t.Fatalf("observer.toml: %v", err)
		}
	}
	out, _ := mustBuild(t, site, cfg, smallData())
	return out
}

// assertFile checks that a file of public/ holds each of want, in order.
func assertFile(t *testing.T, out, name string, want ...string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(name)))
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	rest := string(b)
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("%s lacks %q (in this order) in:\n%s", name, w, b)
			return
		}
		rest = rest[i+len(w):]
	}
}

func assertNoFile(t *testing.T, out string, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(name))); err == nil {
			t.Errorf("%s was written", name)
		}
	}
}

func TestHugoTemplateModel(t *testing.T) {
	out := hugoBuild(t, `
-- observer.toml --
[site]
baseURL = "https://example.org/blog/"
languageCode = "en-gb"
title = "My Blog"
copyright = "© Me"
[site.params]
Author = "Ann"
[site.params.Social]
Mastodon = "@ann@example.social"
-- content/posts/first.md --
---
title: First post
date: 2026-01-02T10:00:00Z
lastmod: 2026-02-03
myKey: from the page
Tags: [Go]
params:
  colour: blue
---
One two three.
-- layouts/_default/single.html --
title={{ .Title }} kind={{ .Kind }} type={{ .Type }} section={{ .Section }}
page={{ .IsPage }} home={{ .IsHome }} sectionpage={{ .IsSection }}
key={{ .Params.mykey }}|{{ .Params.MyKey }}|{{ .Param "MYKEY" }} colour={{ .Params.colour }} author={{ .Param "author" }}
date={{ .Date.Format "2006-01-02" }} lastmod={{ .Lastmod.Format "2006-01-02" }} words={{ .WordCount }}
perma={{ .Permalink }} rel={{ .RelPermalink }} parent={{ .Parent.Title }} file={{ .File.Path }}
site={{ .Site.Title }}|{{ site.Title }}|{{ .Site.BaseURL }}|{{ .Site.LanguageCode }}|{{ .Site.Copyright }}|{{ .Site.Params.author }}|{{ .Site.Params.Social.Mastodon }}
same={{ eq .Page.Title .Title }} regular={{ len .Site.RegularPages }} home={{ .Site.Home.Title }}
fromlist={{ range .Site.RegularPages }}{{ .Site.Title }}{{ end }}
formats={{ range .OutputFormats }}{{ .Name }} {{ end }}
-- layouts/_default/list.html --
list {{ .Title }} {{ .Kind }} {{ range .Pages }}[{{ .Title }}]{{ end }} rss={{ with .OutputFormats.Get "rss" }}{{ .RelPermalink }}{{ end }}
`)
	assertFile(t, out, "posts/first/index.html",
		"title=First post kind=page type=posts section=posts",
		"page=true home=false sectionpage=false",
		"key=from the page|from the page|from the page colour=blue author=Ann",
		"date=2026-01-02 lastmod=2026-02-03 words=3",
		"perma=https://example.org/blog/posts/first/ rel=/blog/posts/first/ parent=Posts file=posts/first.md",
		"site=My Blog|My Blog|https://example.org/blog/|en-gb|© Me|Ann|@ann@example.social",
		"same=true regular=1 home=My Blog",
		"fromlist=My Blog",
		"formats=HTML ")
	assertFile(t, out, "index.html", "list My Blog home [Posts] rss=/blog/index.xml")
	assertFile(t, out, "posts/index.html", "list Posts section [First post] rss=/blog/posts/index.xml")
}

// Layouts are looked up in Hugo's order, both in the classic tree and in
// Hugo's current one, the site's over the theme's file by file.
func TestHugoLayoutLookup(t *testing.T) {
	out := hugoBuild(t, `
-- observer.toml --
[site]
theme = "mine"
-- content/posts/a.md --
---
title: A
---
-- content/posts/b.md --
---
title: B
layout: special
---
-- content/notes/n.md --
---
title: N
type: memo
---
-- content/about.md --
---
title: About
---
-- content/docs/_index.md --
---
title: Docs
---
-- content/docs/d.md --
---
title: D
---
-- themes/mine/layouts/_default/baseof.html --
<theme-frame>{{ block "main" . }}{{ end }}</theme-frame>
-- themes/mine/layouts/_default/single.html --
{{ define "main" }}theme single {{ .Title }}{{ end }}
-- themes/mine/layouts/_default/list.html --
{{ define "main" }}theme list {{ .Title }}{{ end }}
-- themes/mine/layouts/posts/single.html --
{{ define "main" }}theme posts single {{ .Title }}{{ end }}
-- themes/mine/layouts/posts/special.html --
{{ define "main" }}theme special {{ .Title }}{{ end }}
-- themes/mine/layouts/index.html --
{{ define "main" }}theme index{{ end }}
-- themes/mine/layouts/partials/greet.html --
theme greet
-- layouts/_default/single.html --
{{ define "main" }}site single {{ .Title }} {{ partial "greet" . }}{{ end }}
-- layouts/memo/single.html --
{{ define "main" }}memo {{ .Title }}{{ end }}
-- layouts/_partials/greet.html --
site greet

-- layouts/section.html --
{{ define "main" }}current section {{ .Title }}{{ end }}
-- layouts/posts/baseof.html --
<posts-frame>{{ block "main" . }}{{ end }}</posts-frame>
`)
	// The theme's posts/single.html is more specific than the site's
	// _default/single.html, so it wins, in the posts/ frame.
	assertFile(t, out, "posts/a/index.html", "<posts-frame>theme posts single A</posts-frame>")
	assertFile(t, out, "posts/b/index.html", "<posts-frame>theme special B</posts-frame>")
	assertFile(t, out, "notes/n/index.html", "<theme-frame>memo N</theme-frame>")
	// The site's _default/single.html replaces the theme's; _partials/
	// is found before partials/.
	assertFile(t, out, "about/index.html", "<theme-frame>site single About site greet\n</theme-frame>")
	// section.html (Hugo's current tree) comes before _default/list.html
	// in the classic one only in its own folder: _default/ first.
	assertFile(t, out, "docs/index.html", "<theme-frame>theme list Docs</theme-frame>")
	assertFile(t, out, "index.html", "<theme-frame>theme index</theme-frame>")
	// The observer's own pages come from the built-in theme, in the
	// theme's frame.
	assertFile(t, out, "live/index.html", "<theme-frame>", "Live instances", "By software", "</theme-frame>")
	assertFile(t, out, "404.html", "<theme-frame>", "Page not found", "</theme-frame>")

	// Hugo's current tree alone: home.html, page.html, section.html,
	// _partials/.
	out = hugoBuild(t, `
-- content/posts/a.md --
---
title: A
---
-- layouts/baseof.html --
<frame>{{ block "main" . }}{{ end }}</frame>
-- layouts/home.html --
{{ define "main" }}home {{ partial "x.html" . }}{{ end }}
-- layouts/page.html --
{{ define "main" }}page {{ .Title }}{{ end }}
-- layouts/section.html --
{{ define "main" }}section {{ .Title }}{{ end }}
-- layouts/_partials/x.html --
x of {{ .Title }}

`)
	assertFile(t, out, "index.html", "<frame>home x of Test Observer\n</frame>")
	assertFile(t, out, "posts/a/index.html", "<frame>page A</frame>")
	assertFile(t, out, "posts/index.html", "<frame>section Posts</frame>")
}

// An unknown function fails the build when the templates are parsed,
// naming the file and line, even in a layout no page uses.
func TestHugoUnknownFunctionFailsAtParse(t *testing.T) {
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- layouts/_default/unused.html --
line one
{{ noSuchFunction . }}
`)
	_, _, err := run(t, site, testConfig(), smallData())
	if err == nil || !strings.Contains(err.Error(), "layouts/_default/unused.html:2:") || !strings.Contains(err.Error(), `function "noSuchFunction" not defined`) {
		t.Errorf("got %v, want the file, line and function named", err)
	}
}

func TestHugoSectionsAndBundles(t *testing.T) {
	out := hugoBuild(t, `
-- content/_index.md --
---
title: Home
---
-- content/top.md --
---
title: Top
---
-- content/blog/_index.md --
---
title: The Blog
---
Blog intro.
-- content/blog/one.md --
---
title: One
weight: 2
---
-- content/blog/2026/_index.md --
---
title: Year 2026
---
-- content/blog/2026/two.md --
---
title: Two
weight: 1
---
-- content/blog/misc/three.md --
---
title: Three
---
-- content/trip/index.md --
---
title: Trip
---
A leaf bundle.
-- content/trip/photo.txt --
not really a photo
-- layouts/_default/list.html --
{{ .Title }}: pages={{ range .Pages }}[{{ .Title }}]{{ end }} regular={{ range .RegularPages }}[{{ .Title }}]{{ end }} sections={{ range .Sections }}[{{ .Title }}]{{ end }} recursive={{ len .RegularPagesRecursive }}{{ with .Parent }} parent={{ .Title }}{{ end }} content={{ .Content }}
-- layouts/_default/single.html --
{{ .Title }} in {{ .CurrentSection.Title }} first={{ .FirstSection.Title }} section={{ .Section }} {{ .RelPermalink }}
`)
	assertFile(t, out, "index.html", "Home: pages=[The Blog][Top][Trip] regular=[Top][Trip] sections=[The Blog] recursive=5")
	assertFile(t, out, "blog/index.html", "The Blog: pages=[One][Three][Year 2026] regular=[One][Three] sections=[Year 2026] recursive=3 parent=Home content=<p>Blog intro.</p>")
	assertFile(t, out, "blog/2026/index.html", "Year 2026: pages=[Two] regular=[Two] sections= recursive=1 parent=The Blog")
	assertFile(t, out, "blog/2026/two/index.html", "Two in Year 2026 first=The Blog section=blog /blog/2026/two/")
	// blog/misc has no _index.md: its pages are in blog.
	assertFile(t, out, "blog/misc/three/index.html", "Three in The Blog first=The Blog section=blog /blog/misc/three/")
	assertNoFile(t, out, "blog/misc/index.html")
	assertFile(t, out, "trip/index.html", "Trip in Home first=Home section= /trip/")
	assertFile(t, out, "trip/photo.txt", "not really a photo")
}

func TestHugoPagination(t *testing.T) {
	out := hugoBuild(t, `
-- observer.toml --
[site]
[site.pagination]
pagerSize = 2
-- content/posts/p1.md --
---
title: P1
date: 2026-01-01
---
-- content/posts/p2.md --
---
title: P2
date: 2026-01-02
---
-- content/posts/p3.md --
---
title: P3
date: 2026-01-03
---
-- content/posts/p4.md --
---
title: P4
date: 2026-01-04
---
-- content/posts/p5.md --
---
title: P5
date: 2026-01-05
---
-- layouts/_default/list.html --
{{ $p := .Paginator }}page {{ $p.PageNumber }}/{{ $p.TotalPages }} of {{ $p.TotalNumberOfElements }}:{{ range $p.Pages }} {{ .Title }}{{ end }}{{ with $p.Prev }} prev={{ .URL }}{{ end }}{{ with $p.Next }} next={{ .URL }}{{ end }} first={{ $p.First.URL }} last={{ $p.Last.URL }}
-- layouts/index.html --
{{ $p := .Paginate (.Site.RegularPages.ByTitle) 4 }}home {{ $p.PageNumber }}/{{ $p.TotalPages }}:{{ range $p.Pages }} {{ .Title }}{{ end }}
`)
	assertFile(t, out, "posts/index.html", "page 1/3 of 5: P5 P4 next=/posts/page/2/ first=/posts/ last=/posts/page/3/")
	assertFile(t, out, "posts/page/2/index.html", "page 2/3 of 5: P3 P2 prev=/posts/ next=/posts/page/3/")
	assertFile(t, out, "posts/page/3/index.html", "page 3/3 of 5: P1 prev=/posts/page/2/")
	assertNoFile(t, out, "posts/page/4/index.html")
	// page/1/ sends readers to the list, as Hugo's alias does.
	assertFile(t, out, "posts/page/1/index.html", `<meta http-equiv="refresh" content="0; url=https://observer.example.org/posts/">`)
	assertFile(t, out, "index.html", "home 1/2: P1 P2 P3 P4")
	assertFile(t, out, "page/2/index.html", "home 2/2: P5")
}

func TestHugoTaxonomies(t *testing.T) {
	out := hugoBuild(t, `
-- content/a.md --
---
title: A
tags: [Go, Web Dev]
categories: News
---
-- content/b.md --
---
title: B
tags: [go]
---
-- content/c.md --
---
title: C
---
-- layouts/_default/single.html --
{{ .Title }}:{{ range .GetTerms "tags" }} {{ .LinkTitle }}={{ .RelPermalink }}{{ end }}
-- layouts/_default/list.html --
{{ .Kind }} {{ .Title }}:{{ range .Pages }} [{{ .Title }}]{{ end }}{{ with .Data.Term }} term={{ . }}{{ end }}{{ with .Data.Plural }} plural={{ . }}{{ end }}
-- layouts/index.html --
{{ range $name, $pages := .Site.Taxonomies.tags }}{{ $name }}={{ $pages.Count }}({{ range $pages.Pages }}{{ .Title }}{{ end }}) {{ end }}cats={{ len .Site.Taxonomies.categories }}
{{ range .Site.Taxonomies.tags.ByCount }}{{ .Name }}:{{ .Count }} {{ end }}
`)
	assertFile(t, out, "index.html", "go=2(AB) web dev=1(A) cats=1", "go:2 web dev:1")
	assertFile(t, out, "tags/index.html", "taxonomy Tags: [Go] [Web Dev] plural=tags")
	assertFile(t, out, "tags/go/index.html", "term Go: [A] [B] term=go plural=tags")
	assertFile(t, out, "tags/web-dev/index.html", "term Web Dev: [A] term=web dev")
	assertFile(t, out, "categories/news/index.html", "term News: [A]")
	assertFile(t, out, "a/index.html", "A: Go=/tags/go/ Web Dev=/tags/web-dev/")
	assertFile(t, out, "tags/go/index.xml", "<title>Go on Test Observer</title>", "<title>A</title>", "<title>B</title>")

	// Taxonomies come from the config: only series here.
	out = hugoBuild(t, `
-- observer.toml --
[site.taxonomies]
series = "series"
-- content/a.md --
---
title: A
series: [Intro]
tags: [ignored]
---
-- layouts/_default/list.html --
{{ .Kind }} {{ .Title }}
`)
	assertFile(t, out, "series/intro/index.html", "term Intro")
	assertNoFile(t, out, "tags/index.html", "tags/ignored/index.html")
}

func TestHugoMenus(t *testing.T) {
	out := hugoBuild(t, `
-- observer.toml --
[site]
[[site.menus.main]]
name = "Home"
url = "/"
weight = 1
[[site.menus.main]]
name = "Docs"
identifier = "docs"
pageRef = "/docs"
weight = 2
[[site.menus.main]]
name = "External"
url = "https://example.com/"
weight = 9
[[site.menus.footer]]
name = "Imprint"
url = "/imprint/"
-- content/docs/_index.md --
---
title: Documentation
---
-- content/docs/install.md --
---
title: Install
menu:
  main:
    parent: docs
    weight: 2
---
-- content/docs/usage.md --
---
title: Usage
linkTitle: Use it
menu:
  main:
    parent: docs
    weight: 1
---
-- content/about.md --
---
title: About
weight: 5
menu: main
---
-- layouts/_default/single.html --
{{ $page := . }}{{ range .Site.Menus.main }}[{{ .Name }} {{ .URL }}{{ if $page.IsMenuCurrent "main" . }} current{{ end }}{{ if $page.HasMenuCurrent "main" . }} ancestor{{ end }}{{ if .HasChildren }}:{{ range .Children }} ({{ .Name }} {{ .URL }}){{ end }}{{ end }}]{{ end }} footer={{ range .Site.Menus.footer }}{{ .Name }} {{ .URL }}{{ end }}
`)
	assertFile(t, out, "docs/usage/index.html",
		"[Home /][Docs /docs/ ancestor: (Use it /docs/usage/) (Install /docs/install/)][About /about/][External https://example.com/] footer=Imprint /imprint/")
	assertFile(t, out, "about/index.html", "[About /about/ current]")
}

func TestHugoSummaries(t *testing.T) {
	out := hugoBuild(t, `
-- observer.toml --
[site]
summaryLength = 5
-- content/more.md --
---
title: More
---
The **first** part.
<!--more-->
The rest.
-- content/fm.md --
---
title: FM
summary: A *given* summary.
---
Body.
-- content/auto.md --
---
title: Auto
---
One two three four five six. Seven eight nine ten eleven twelve.
-- content/short.md --
---
title: Short
---
Just this.
-- layouts/_default/single.html --
summary=[{{ .Summary }}] truncated={{ .Truncated }} content=[{{ .Content }}]
`)
	assertFile(t, out, "more/index.html", "summary=[<p>The <strong>first</strong> part.</p>\n] truncated=true content=[<p>The <strong>first</strong> part.</p>\n<p>The rest.</p>\n]")
	assertFile(t, out, "fm/index.html", "summary=[<p>A <em>given</em> summary.</p>\n] truncated=true")
	assertFile(t, out, "auto/index.html", "summary=[One two three four five six.] truncated=true")
	assertFile(t, out, "short/index.html", "summary=[Just this.] truncated=false")
}

func TestHugoRSS(t *testing.T) {
	out := hugoBuild(t, `
-- observer.toml --
[site]
title = "Feeds & Co"
copyright = "CC BY"
-- content/posts/a.md --
---
title: A <b>bold</b> title
date: 2026-01-02T03:04:05Z
---
Alpha <!--more--> rest.
-- content/posts/b.md --
---
title: B
date: 2026-01-03T00:00:00Z
---
Beta.
-- content/page.md --
---
title: Loose
date: 2025-12-01T00:00:00Z
---
-- layouts/tags/rss.xml --
unused
`)
	assertFile(t, out, "index.xml",
		`<?xml version="1.0" encoding="utf-8" standalone="yes"?>`,
		"<title>Feeds &amp; Co</title>",
		"<link>https://observer.example.org/</link>",
		"<description>Recent content on Feeds &amp; Co</description>",
		"<language>en</language>", "<copyright>CC BY</copyright>",
		"<lastBuildDate>Sat, 03 Jan 2026 00:00:00 +0000</lastBuildDate>",
		`<atom:link href="https://observer.example.org/index.xml" rel="self" type="application/rss+xml" />`,
		"<title>B</title>", "<title>A &lt;b&gt;bold&lt;/b&gt; title</title>",
		"<pubDate>Fri, 02 Jan 2026 03:04:05 +0000</pubDate>",
		"<description>&lt;p&gt;Alpha&lt;/p&gt;", "<title>Loose</title>")
	assertFile(t, out, "posts/index.xml", "<title>Posts on Feeds &amp; Co</title>", "<title>B</title>", "<title>A &lt;b&gt;bold")
	// A site's rss.xml replaces the built-in feed.
	out = hugoBuild(t, `
-- content/posts/a.md --
---
title: A
---
-- layouts/_default/rss.xml --
<rss>{{ .Title }}:{{ range .RegularPages }} {{ .Title }}{{ end }}</rss>
`)
	assertFile(t, out, "posts/index.xml", "<rss>Posts: A</rss>")
}

func TestHugoPublishingRules(t *testing.T) {
	out := hugoBuild(t, `
-- content/draft.md --
---
title: Draft
draft: true
---
-- content/future.md --
---
title: Future
publishDate: 2099-01-01
---
-- content/future-date.md --
---
title: Future date
date: 2099-01-01
---
-- content/expired.md --
---
title: Expired
expiryDate: 2020-01-01
---
-- content/posts/slugged.md --
---
title: Slugged
slug: nice-name
aliases: [/old-name/, /older.html]
---
-- content/custom.md --
---
title: Custom
url: /somewhere/else/
---
-- layouts/_default/single.html --
{{ .Title }} at {{ .RelPermalink }}
-- layouts/index.html --
{{ range .Site.RegularPages }}[{{ .Title }}]{{ end }}
`)
	assertFile(t, out, "index.html", "[Custom][Slugged]")
	assertNoFile(t, out, "draft/index.html", "future/index.html", "future-date/index.html", "expired/index.html", "posts/slugged/index.html")
	assertFile(t, out, "posts/nice-name/index.html", "Slugged at /posts/nice-name/")
	assertFile(t, out, "somewhere/else/index.html", "Custom at /somewhere/else/")
	assertFile(t, out, "old-name/index.html", `<link rel="canonical" href="https://observer.example.org/posts/nice-name/">`)
	assertFile(t, out, "older.html", `url=https://observer.example.org/posts/nice-name/`)
	assertFile(t, out, "sitemap.xml", "<loc>https://observer.example.org/posts/nice-name/</loc>")
	assertFile(t, out, "robots.txt", "Sitemap: https://observer.example.org/sitemap.xml")
}

// Strings are escaped unless they are HTML already (the content, a
// partial); front matter and the instances' texts are text.
func TestHugoTrust(t *testing.T) {
	out := hugoBuild(t, `
-- content/a.md --
---
title: <script>alert(1)</script>
note: <b>bold</b>
---
Some *markdown*.
-- layouts/_default/single.html --
{{ .Title }}|{{ .Params.note }}|{{ .Content }}|{{ range site.Data.observer.New }}{{ .Name }};{{ end }}
`)
	assertFile(t, out, "a/index.html", "&lt;script&gt;alert(1)&lt;/script&gt;|&lt;b&gt;bold&lt;/b&gt;|<p>Some <em>markdown</em>.</p>\n|Alpha;Beta;")
}

// The observer's data is site data for any layout: site.Data.observer.
func TestHugoObserverData(t *testing.T) {
	out := hugoBuild(t, `
-- layouts/index.html --
{{ $o := site.Data.observer }}new={{ len $o.New }} live={{ $o.Stats.Live }} first={{ (index $o.New 0).Host }} peak={{ $o.History.PeakLive }} changes={{ len ($o.Transitions 5) }} feeds={{ range $o.Feeds }}{{ .Software }} {{ end }}stream={{ range $o.Live }}{{ .Host }} {{ end }}
{{ partial "observer/new.html" . }}
`)
	assertFile(t, out, "index.html", "new=2 live=3 first=alpha.example peak=3 changes=1 feeds=lemmy mastodon stream=alpha.example beta.example gamma.example",
		`<h2 id="new-heading">New instances</h2>`, "alpha.example")
}

// Hugo's names of the settings in observer.toml's [site].
func TestHugoConfigKeys(t *testing.T) {
	var cfg config.Config = config.Default()
	err := config.Parse([]byte("[site]\nbaseURL = \"https://a.example/\"\nbase_url = \"https://b.example/\"\n"), &cfg)
	if err == nil || !strings.Contains(err.Error(), "site.baseURL and site.base_url are the same setting") {
		t.Errorf("both spellings: %v", err)
	}
	cfg = config.Default()
	if err := config.Parse([]byte("[site]\nbaseURL = \"https://a.example/\"\nlanguageCode = \"de\"\npaginate = 3\n"), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Site.BaseURL != "https://a.example/" || cfg.Site.Language != "de" || cfg.Site.Pagination.PagerSize != 3 {
		t.Errorf("Hugo's keys not folded in: %+v", cfg.Site)
	}
	cfg = config.Default()
	if err := config.Parse([]byte("[[site.menu.main]]\nname = \"Home\"\nurl = \"/\"\n"), &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Site.Menus["main"]) != 1 || cfg.Site.Menus["main"][0].Name != "Home" {
		t.Errorf("site.menu not read as site.menus: %+v", cfg.Site.Menus)
	}
}

// What themes read besides the model's core: the table of contents,
// templates.Exists, .Site.Config's RSS limit, the params' author, Hugo's
// embedded metadata templates.
func TestHugoThemeExtras(t *testing.T) {
	out := hugoBuild(t, `
-- observer.toml --
[site.params.author]
name = "Ann"
-- content/a.md --
---
title: A
---
## One
### One point one
## Two
-- layouts/partials/here.html --
here
-- layouts/_default/single.html --
{{ .TableOfContents }}
exists={{ templates.Exists "partials/here.html" }} {{ templates.Exists "_default/single.html" }} {{ templates.Exists "partials/nothere.html" }}
limit={{ .Site.Config.Services.RSS.Limit }} author={{ .Site.Author.name }}
{{ template "_internal/opengraph.html" . }}{{ template "_internal/google_analytics.html" . }}
`)
	assertFile(t, out, "a/index.html",
		`<nav id="TableOfContents">`, "<ul>\n<li><a href=\"#one\">One</a>", "<ul>\n<li><a href=\"#one-point-one\">One point one</a></li>\n</ul></li>\n<li><a href=\"#two\">Two</a></li>\n</ul>\n</nav>",
		"exists=true true false", "limit=-1 author=Ann", `<meta property="og:title" content="A">`)
}

// Hugo's functions work on the model: where and first on pages (a page's
// params by key path), a partial's return value, the page's scratch pad,
// safeHTML (which only the template decides on), and a theme's own RSS
// template in Hugo's usual form.
func TestHugoFunctionsOnTheModel(t *testing.T) {
	out := hugoBuild(t, `
-- content/posts/a.md --
---
title: A
date: 2026-01-01
colour: blue
note: <em>safe</em>
---
-- content/posts/b.md --
---
title: B
date: 2026-01-02
colour: red
---
-- content/posts/c.md --
---
title: C
date: 2026-01-03
colour: blue
---
-- content/other.md --
---
title: O
---
-- layouts/partials/double.html --
{{ return (mul . 2) }}
-- layouts/index.html --
first={{ range first 2 (where .Site.RegularPages "Section" "posts") }}{{ .Title }}{{ end }}
blue={{ range where site.RegularPages "Params.colour" "blue" }}{{ .Title }}{{ end }}
double={{ partial "double.html" 21 }}
{{ .Scratch.Set "n" 1 }}{{ .Scratch.Add "n" 2 }}scratch={{ .Scratch.Get "n" }}
{{ with site.GetPage "/posts/a" }}note={{ .Params.note }} safe={{ .Params.note | safeHTML }}{{ end }}
titles={{ range sort site.RegularPages "Title" "desc" }}{{ .Title }} {{ end }}{{ delimit (slice "x" "y") ", " }}
-- layouts/_default/rss.xml --
{{- printf "<?xml version=\"1.0\"?>" | safeHTML }}
<rss><channel><title>{{ .Title }}</title>{{ range first 2 .Pages.ByDate.Reverse }}<item>{{ .Title }} {{ .Date.Format "Mon, 02 Jan 2006" }}</item>{{ end }}</channel></rss>
`)
	assertFile(t, out, "index.html", "first=CB", "blue=CA", "double=42", "scratch=3",
		"note=&lt;em&gt;safe&lt;/em&gt; safe=<em>safe</em>", "titles=O C B A x, y")
	assertFile(t, out, "posts/index.xml", `<?xml version="1.0"?>`, "<rss><channel><title>Posts</title><item>C Sat, 03 Jan 2026</item><item>B Fri, 02 Jan 2026</item></channel></rss>")
}

// A theme without a baseof.html (its layouts call its header and footer
// partials) gets the observer's pages in the built-in frame, whose
// partials are the built-in theme's own (observer/…), not the theme's
// of the same name: the theme's header.html is a whole <head>, and it
// used to land inside the frame's.
func TestHugoBuiltinFrameKeepsItsPartials(t *testing.T) {
	out := hugoBuild(t, `
-- observer.toml --
[site]
theme = "plain"
-- themes/plain/layouts/_default/list.html --
{{ partial "header.html" . }}list{{ partial "footer.html" . }}
-- themes/plain/layouts/partials/header.html --
<!DOCTYPE html><html><head><title>theme</title></head><body>
-- themes/plain/layouts/partials/footer.html --
</body></html>
`)
	assertFile(t, out, "index.html", "<title>theme</title>", "list</body></html>")
	b, err := os.ReadFile(filepath.Join(out, "live", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "<html"); n != 1 || strings.Contains(string(b), "<title>theme</title>") {
		t.Errorf("live/index.html has %d <html> and the theme's header: %s", n, b)
	}
	assertFile(t, out, "live/index.html", "Live instances", "By software")
}
