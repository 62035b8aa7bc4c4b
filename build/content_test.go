package build_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/build/buildtest"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// A content/ that is a link (to a checkout elsewhere, say) builds like the
// directory it points at; it used to build a site without pages.
func TestLinkedContentDirectoryBuilds(t *testing.T) {
	real := buildtest.WriteArchive(t, t.TempDir(), `
-- about.md --
---
title: About
---
about
-- docs/guide.md --
---
title: Guide
---
guide
-- docs/image.txt --
an asset
`)
	site := t.TempDir()
	if err := os.Symlink(real, filepath.Join(site, "content")); err != nil {
		t.Fatal(err)
	}
	out, rep := mustBuild(t, site, testConfig(), smallData())
	for _, f := range []string{"about/index.html", "docs/guide/index.html", "docs/image.txt"} {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(f))); err != nil {
			t.Errorf("%s: %v (pages built: %d)", f, err, rep.Pages)
		}
	}
}

// A page's links are escaped as its address is: content/what?.md is at
// /what%3F/, which a link to /what?/ would miss (it names /what).
func TestPageLinksAreEscaped(t *testing.T) {
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- content/what?.md --
---
title: What
menu: main
---
what
-- content/c#sharp.md --
---
title: Sharp
menu: main
---
sharp
`)
	out, _ := mustBuild(t, site, testConfig(), smallData())
	home := testsupport.ReadFile(t, filepath.Join(out, "index.html"))
	assertContains(t, "index.html", home, `href="/what%3F/"`, `href="/c%23sharp/"`)
	assertNotContains(t, "index.html", home, `href="/what?/"`, `href="/c#sharp/"`)
	for _, f := range []string{"what?/index.html", "c#sharp/index.html"} {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(f))); err != nil {
			t.Error(err)
		}
	}
	assertContains(t, "sitemap.xml", testsupport.ReadFile(t, filepath.Join(out, "sitemap.xml")), "/what%3F/", "/c%23sharp/")
}

// base_url starts every published link: only http(s), without credentials,
// query or fragment.
func TestBadBaseURLIsRefused(t *testing.T) {
	for _, u := range []string{"javascript://x/%0Aalert(1)", "data://x/", "ftp://example.org/", "https://user:secret@example.org/",
		"https://example.org/?q=1", "https://example.org/?", "https://example.org/#top", "example.org", "https:///path"} {
		cfg := testConfig()
		cfg.Site.BaseURL = u
		if _, _, err := run(t, smallSite(t), cfg, smallData()); err == nil || !strings.Contains(err.Error(), "site.base_url") {
			t.Errorf("base_url %q: %v, want an error naming site.base_url", u, err)
		}
	}
}

// .Site.BaseURL ends in "/" however base_url is written, so that a theme
// can append paths to it; without the slash, "{{ .Site.BaseURL }}style.css"
// made https://example.org/obsstyle.css.
func TestSiteBaseURLEndsInASlash(t *testing.T) {
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- layouts/home.html --
{{ .Site.BaseURL }}style.css
`)
	for base, want := range map[string]string{
		"https://example.org/obs":   "https://example.org/obs/style.css",
		"https://example.org/obs/":  "https://example.org/obs/style.css",
		"https://example.org":       "https://example.org/style.css",
		"https://example.org/a%2Fb": "https://example.org/a%2Fb/style.css",
		"http://127.0.0.1:1313/x/y": "http://127.0.0.1:1313/x/y/style.css",
	} {
		cfg := testConfig()
		cfg.Site.BaseURL = base
		out, _ := mustBuild(t, site, cfg, smallData())
		if got := testsupport.ReadFile(t, filepath.Join(out, "index.html")); got != want {
			t.Errorf("base_url %q: %q, want %q", base, got, want)
		}
	}
}

// A page without a title is named after its file, a leaf bundle
// (docs/index.md) after its folder, and a section without one after its
// folder, capitalised as in Hugo.
func TestUntitledPagesAreNamedAfterTheirPath(t *testing.T) {
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- layouts/home.html --
{{ range .Site.RegularPages }}[{{ .Title }}]{{ end }}|{{ range .Site.Sections }}[{{ .Title }}]{{ range .Sections }}({{ .Title }}){{ end }}{{ end }}
-- content/blog/_index.md --
blog
-- content/docs/index.md --
docs
-- content/notes.md --
notes
-- content/docs/guide.md --
guide
-- content/titled/_index.md --
---
title: Kept
---
kept
-- content/a/b/_index.md --
nested
`)
	out, _ := mustBuild(t, site, testConfig(), smallData())
	if got, want := testsupport.ReadFile(t, filepath.Join(out, "index.html")), "[docs][guide][notes]|[A](B)[Blog][Kept]"; got != want {
		t.Errorf("titles %s, want %s", got, want)
	}
}
