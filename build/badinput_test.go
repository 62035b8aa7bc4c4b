package build_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/build"
	"github.com/fediverse-observer/observer/build/buildtest"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// A partial that includes itself, directly or through another, fails the
// build with a message naming it; it used to recurse until the stack
// overflowed, which killed the process (observer serve with it).
func TestRecursivePartialIsAnError(t *testing.T) {
	const page = `
-- layouts/page.html --
<p>{{ partial "r.html" . }}</p>
-- content/a.md --
---
title: A
---
a
`
	for name, partials := range map[string]string{
		"itself": `
-- layouts/_partials/r.html --
{{ partial "r.html" . }}
`,
		"mutual": `
-- layouts/_partials/r.html --
{{ partial "s.html" . }}
-- layouts/_partials/s.html --
x{{ partial "r.html" . }}
`,
	} {
		_, _, err := run(t, buildtest.WriteArchive(t, t.TempDir(), page+partials), testConfig(), smallData())
		if err == nil {
			t.Fatalf("%s: built", name)
		}
		msg := err.Error()
		if !strings.Contains(msg, "partials nested more than 100 deep (does it include itself?)") ||
			!strings.Contains(msg, "content/a.md") || !strings.Contains(msg, "layouts/_partials/") {
			t.Errorf("%s: %v, want the page, the partial and the nesting named", name, err)
		}
		if n := strings.Count(msg, "error calling partial"); n != 1 {
			t.Errorf("%s: %q names %d partial calls, want 1", name, msg, n)
		}
	}
	// Nesting that ends is fine.
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- layouts/page.html --
<p>{{ partial "count.html" 50 }}</p>
-- layouts/_partials/count.html --
{{ if gt . 0 }}{{ partial "count.html" (sub . 1) }}{{ else }}bottom{{ end }}
-- content/a.md --
---
title: A
---
a
`)
	out, _ := mustBuild(t, site, testConfig(), smallData())
	assertContains(t, "a/index.html", testsupport.ReadFile(t, filepath.Join(out, "a", "index.html")), "<p>bottom</p>")
}

// A front matter error names the line of the content file, in one line:
// YAML's lines used to be counted from after the opening ---, and TOML's
// errors had no line at all.
func TestFrontMatterErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"---\ntitle: A\ndescription: B\nbad: [unclosed\n---\nbody", "content/x.md:4: front matter: "},
		{"---\r\ntitle: A\r\n\r\n: :\r\n---\r\n", "content/x.md:4: front matter: "},
		{"---\ntitle: A\ntitle: B\n---\n", "content/x.md:3: front matter: mapping key \"title\" already defined at line 2"},
		{"+++\ntitle = \"A\"\n\nweight = \n+++\n", "content/x.md:4: front matter: "},
		{"+++\ntitle = \"A\"\ntitle = \"B\"\n+++\n", "content/x.md:3: front matter: "},
		// Values of the wrong type, found after decoding, name the key's
		// line too (they had none), and quote text (`weight: "10"` read
		// "got 10").
		{"---\ntitle: A\n# note\ndate: yesterday\n---\n", `content/x.md:4: front matter date: want a date such as 2024-05-01 or 2024-05-01T10:00:00Z, got "yesterday"`},
		{"---\ntitle: A\nweight: \"10\"\n---\n", `content/x.md:3: front matter weight: want a whole number, got "10"`},
		{"---\r\n\"Draft\": \"yes\"\r\n---\r\n", `content/x.md:2: front matter Draft: want true or false, got "yes"`},
		{"---\n{title: A, layout: 3}\n---\n", "content/x.md:2: front matter layout: want the name of a layout such as wide.html, got 3"},
		{"---\ntitle: A\nparams:\n  menu: 1\nmenu:\n  - main\nMenu: x\n---\n", "content/x.md:5: front matter has both Menu and menu"},
		{"+++\ntitle = \"A\"\n\ndate = \"soon\"\n[params]\ndate = 1\n+++\n", `content/x.md:4: front matter date: want a date`},
		{"+++\ntitle = \"A\"\n\"weight\" = 1.5\n+++\n", "content/x.md:3: front matter weight: want a whole number, got 1.5"},
		{"+++\ntitle = \"A\"\nsite.weight = 1\n\"draft\" = \"no\"\n+++\n", `content/x.md:4: front matter draft: want true or false, got "no"`},
	} {
		_, _, err := run(t, buildtest.WriteTree(t, t.TempDir(), map[string]string{"content/x.md": c.src}), testConfig(), smallData())
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("%q: %q, want one line with %q", c.src, err, c.want)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// layouts/, static/ and a theme's directories that are there but are not
// directories are errors naming them; they used to count as absent, so the
// build used the theme's files and said nothing.
func TestInputDirectoriesThatAreNotDirectories(t *testing.T) {
	// A complete theme "mine", so that only the case's flaw can fail it.
	const mine = `
-- themes/mine/layouts/home.html --
home
-- themes/mine/layouts/page.html --
page
-- themes/mine/layouts/live.html --
live
-- themes/mine/layouts/404.html --
404
`
	for _, c := range []struct {
		name, theme string
		setup       func(t *testing.T, site string)
		want        string
	}{
		{"layouts file", "default", func(t *testing.T, site string) {
			buildtest.WriteArchive(t, site, `
-- layouts --
x
`)
		}, "layouts: not a directory"},
		{"static file", "default", func(t *testing.T, site string) {
			buildtest.WriteArchive(t, site, `
-- static --
x
`)
		}, "static: not a directory"},
		{"theme layouts file", "default", func(t *testing.T, site string) {
			buildtest.WriteArchive(t, site, `
-- themes/default/static/x.css --
x
-- themes/default/layouts --
x
`)
		}, "themes/default/layouts: not a directory"},
		{"theme static file", "mine", func(t *testing.T, site string) {
			buildtest.WriteArchive(t, site, mine)
			buildtest.WriteArchive(t, site, `
-- themes/mine/static --
x
`)
		}, "themes/mine/static: not a directory"},
		{"theme file", "default", func(t *testing.T, site string) {
			buildtest.WriteArchive(t, site, `
-- themes/default --
x
`)
		}, "themes/default: not a directory"},
		{"dangling layouts link", "default", func(t *testing.T, site string) {
			symlink(t, filepath.Join(site, "nowhere"), filepath.Join(site, "layouts"))
		}, "layouts: a symbolic link to something that does not exist"},
	} {
		site := t.TempDir()
		c.setup(t, site)
		cfg := testConfig()
		cfg.Site.Theme = c.theme
		_, _, err := run(t, site, cfg, smallData())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// Symbolic links inside content/, layouts/ and static/ (the site's or a
// theme's) are refused, naming the link: they used to be skipped, so a
// linked layouts/page.html lost to the theme's without a word. They are not
// followed either, so that a site cannot publish files from outside itself.
func TestLinksInsideInputsAreRefused(t *testing.T) {
	for _, c := range []struct{ link, target string }{
		{"layouts/page.html", "other/page.html"},
		{"layouts/_partials/observer/footer.html", "other/page.html"},
		{"static/passwd", "/etc/passwd"},
		{"static/dir", "other"},
		{"content/about.md", "other/about.md"},
		{"content/docs", "other"},
		{"themes/default/layouts/page.html", "other/page.html"},
		{"themes/default/static/x.css", "other/page.html"},
	} {
		site := buildtest.WriteArchive(t, t.TempDir(), `
-- other/page.html --
<p>linked</p>
-- other/about.md --
about
-- content/a.md --
a
-- layouts/404.html --
404
-- static/s.txt --
s
-- themes/default/layouts/live.html --
live
-- themes/default/static/y.css --
y
`)
		target := c.target
		if !filepath.IsAbs(target) {
			target = filepath.Join(site, target)
		}
		symlink(t, target, filepath.Join(site, filepath.FromSlash(c.link)))
		_, _, err := run(t, site, testConfig(), smallData())
		if err == nil || !strings.Contains(err.Error(), c.link+": is a symbolic link") {
			t.Errorf("%s: %v, want a refusal naming it", c.link, err)
		}
	}
	// Hidden entries stay ignored, links among them: editors leave lock
	// files such as .#page.html that are links to nowhere.
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- content/a.md --
a
`)
	symlink(t, "user@host.1234", filepath.Join(site, "layouts", ".#page.html"))
	symlink(t, "user@host.1234", filepath.Join(site, "content", ".#a.md"))
	mustBuild(t, site, testConfig(), smallData())
}

// A page's layout must be text naming a layout that is there. A number was
// ignored without a word, and a missing layout was reported without the
// content/ prefix or where it was looked for.
func TestPageLayoutErrors(t *testing.T) {
	for _, c := range []struct{ fm, want string }{
		{"layout: 3", "content/bad.md:2: front matter layout: want the name of a layout such as wide.html, got 3"},
		{"Layout: [wide.html]", "content/bad.md:2: front matter Layout: want the name of a layout such as wide.html, got [wide.html]"},
	} {
		site := buildtest.WriteTree(t, t.TempDir(), map[string]string{"content/bad.md": "---\n" + c.fm + "\n---\nbad\n"})
		if _, _, err := run(t, site, testConfig(), smallData()); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.fm, err, c.want)
		}
	}
	// "wide" names layouts/wide.html, as in Hugo, and the key is
	// case-insensitive like the other keys. A layout that is not there
	// is passed over for the next candidate, as in Hugo: the page still
	// renders, with page.html.
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- layouts/wide.html --
<p>wide {{ .Title }}</p>
-- layouts/page.html --
<p>page {{ .Title }}</p>
-- content/a.md --
---
title: A
layout: wide
---
a
-- content/b.md --
---
title: B
Layout: wide.html
---
b
-- content/c.md --
---
title: C
layout: nonexistent
---
c
`)
	out, _ := mustBuild(t, site, testConfig(), smallData())
	assertContains(t, "a/index.html", testsupport.ReadFile(t, filepath.Join(out, "a", "index.html")), "<p>wide A</p>")
	assertContains(t, "b/index.html", testsupport.ReadFile(t, filepath.Join(out, "b", "index.html")), "<p>wide B</p>")
	assertContains(t, "c/index.html", testsupport.ReadFile(t, filepath.Join(out, "c", "index.html")), "<p>page C</p>")
}

// The home page's layout can be named in content/_index.md like any
// page's.
func TestHomePageLayout(t *testing.T) {
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- layouts/landing.html --
<p>landing {{ .Title }}</p>
-- content/_index.md --
---
title: Hello
layout: landing
---
intro
`)
	out, _ := mustBuild(t, site, testConfig(), smallData())
	assertContains(t, "index.html", testsupport.ReadFile(t, filepath.Join(out, "index.html")), "<p>landing Hello</p>")
}

// A content that is there but is not a readable directory is an error
// naming content: a regular file used to fail as `invalid output path "."`,
// and a link in a loop was blamed on the output.
func TestContentThatIsNotADirectory(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, site string)
		want  string
	}{
		{"file", func(t *testing.T, site string) {
			buildtest.WriteArchive(t, site, `
-- content --
x
`)
		}, "content: not a directory"},
		{"dangling link", func(t *testing.T, site string) {
			symlink(t, filepath.Join(site, "nowhere"), filepath.Join(site, "content"))
		}, "content: a symbolic link to something that does not exist"},
		{"looping link", func(t *testing.T, site string) {
			symlink(t, filepath.Join(site, "content"), filepath.Join(site, "content"))
		}, "content: too many levels of symbolic links"},
		{"looping static link", func(t *testing.T, site string) {
			symlink(t, filepath.Join(site, "static"), filepath.Join(site, "static"))
		}, "static: too many levels of symbolic links"},
	} {
		site := t.TempDir()
		c.setup(t, site)
		_, _, err := run(t, site, testConfig(), smallData())
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "output") {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// Markdown under another extension than .md would be copied as an asset,
// front matter, drafts and all: it is refused, naming it.
func TestMarkdownNotNamedMdIsRefused(t *testing.T) {
	for _, name := range []string{"Post.MD", "notes.markdown", "docs/x.Md"} {
		site := t.TempDir()
		buildtest.WriteTree(t, site, map[string]string{"content/" + name: "---\ntitle: secret\ndraft: true\n---\nnot yet\n"})
		_, _, err := run(t, site, testConfig(), smallData())
		if err == nil || !strings.Contains(err.Error(), "content/"+name) || !strings.Contains(err.Error(), ".md") {
			t.Errorf("%s: %v, want an error naming it", name, err)
		}
	}
}

// CheckOutDir's error about a source it cannot resolve is a SourceError,
// so that observer build does not report it as a bad -out; an error about
// the output is not.
func TestCheckOutDirTellsSourceErrorsApart(t *testing.T) {
	site := t.TempDir()
	content := filepath.Join(site, "content")
	symlink(t, content, content)
	err := build.CheckOutDir(filepath.Join(site, "public"), site)
	se, ok := errors.AsType[*build.SourceError](err)
	if !ok || se.Path != content || err.Error() != content+": too many levels of symbolic links" {
		t.Errorf("content in a loop: %v (%T), want a SourceError naming %s", err, err, content)
	}
	os.Remove(content)
	err = build.CheckOutDir(filepath.Join(site, "content", "public"), site)
	if _, ok := errors.AsType[*build.SourceError](err); err == nil || ok {
		t.Errorf("output inside content: %v (%T), want an error that is not a SourceError", err, err)
	}
}

// A theme whose layouts start with a define but that has no baseof.html
// is an error naming the layout: its pages used to build blank.
func TestMainWithoutBaseofIsAnError(t *testing.T) {
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- themes/mine/layouts/home.html --
{{ define "main" }}home{{ end }}
-- themes/mine/layouts/page.html --
page
`)
	cfg := testConfig()
	cfg.Site.Theme = "mine"
	want := `themes/mine/layouts/home.html starts with a define, but there is no baseof.html to frame it (looked in themes/mine/layouts)`
	if _, _, err := run(t, site, cfg, smallData()); err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	// A baseof.html in the site's layouts/ does frame it.
	buildtest.WriteArchive(t, site, `
-- layouts/baseof.html --
<main>{{ block "main" . }}{{ end }}</main>
`)
	out, _ := mustBuild(t, site, cfg, smallData())
	if got := testsupport.ReadFile(t, filepath.Join(out, "index.html")); got != "<main>home</main>" {
		t.Errorf("index.html = %q", got)
	}
}

// A theme directory without layouts/ (a theme of static files) builds
// with the built-in default theme's layouts, framed by the site's own.
func TestThemeWithoutLayoutsFolder(t *testing.T) {
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- themes/mine/static/style.css --
body{}
-- layouts/baseof.html --
<body class="mine">{{ block "main" . }}{{ end }}</body>
`)
	cfg := testConfig()
	cfg.Site.Theme = "mine"
	out, _ := mustBuild(t, site, cfg, smallData())
	home := testsupport.ReadFile(t, filepath.Join(out, "index.html"))
	assertContains(t, "index.html", home, `<body class="mine">`, "New instances", "alpha.example")
	assertContains(t, "live/index.html", testsupport.ReadFile(t, filepath.Join(out, "live", "index.html")), `<body class="mine">`, "By software")
	assertContains(t, "style.css", testsupport.ReadFile(t, filepath.Join(out, "style.css")), "body{}")
}

// Hugo's layout folders are read: partials/ as well as _partials/,
// _default/, and section and type folders, a file of the site's
// layouts/ over the theme's.
func TestLayoutFolders(t *testing.T) {
	site := buildtest.WriteArchive(t, t.TempDir(), `
-- themes/mine/layouts/_default/baseof.html --
<html>{{ partial "head.html" . }}{{ block "main" . }}{{ end }}</html>
-- themes/mine/layouts/_default/single.html --
{{ define "main" }}single {{ .Title }}{{ end }}
-- themes/mine/layouts/_default/list.html --
{{ define "main" }}list {{ .Title }}{{ end }}
-- themes/mine/layouts/partials/head.html --
<head>theme head</head>
-- themes/mine/layouts/posts/single.html --
{{ define "main" }}post {{ .Title }}{{ end }}
-- layouts/partials/head.html --
<head>site head</head>
-- layouts/_partials/sub/x.html --
sub {{ .Title }}
-- layouts/notes/single.html --
{{ define "main" }}note {{ partial "partials/sub/x.html" . }}{{ end }}
-- content/posts/p.md --
---
title: P
---
p

-- content/notes/n.md --
---
title: N
---
n

-- content/about.md --
---
title: About
---
a

`)
	cfg := testConfig()
	cfg.Site.Theme = "mine"
	out, _ := mustBuild(t, site, cfg, smallData())
	for file, want := range map[string]string{
		"posts/p/index.html": "<html><head>site head</head>post P</html>",
		"notes/n/index.html": "<html><head>site head</head>note sub N</html>",
		"about/index.html":   "<html><head>site head</head>single About</html>",
		"posts/index.html":   "<html><head>site head</head>list Posts</html>",
		"index.html":         "<html><head>site head</head>list Test Observer</html>",
	} {
		if got := testsupport.ReadFile(t, filepath.Join(out, filepath.FromSlash(file))); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
}
