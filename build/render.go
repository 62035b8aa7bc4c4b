package build

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"path"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fediverse-observer/observer/build/internal/funcs"
)

// ownPage makes one of the observer's pages (live, 404), which have no
// content file.
func (s *Site) ownPage(kind, title, relPath string) *Page {
	p := &Page{kind: kind, title: title, typ: "page", relPath: relPath, site: s, params: map[string]any{}, scratch: funcs.NewScratch()}
	p.rel, p.perma = s.relPath(relPath), s.absPath(relPath)
	p.outFile = relPath
	if strings.HasSuffix(relPath, "/") {
		p.outFile += "index.html"
	}
	return p
}

// render writes every page in parallel: its HTML (every pager of a
// paginated list), the RSS feed of list pages, and the redirects of its
// aliases. Any error fails the whole build.
func (b *builder) render(ctx context.Context, pages []*Page) error {
	g, gctx := errgroup.WithContext(ctx)
	// Writing many small files waits on the file system more than on the
	// CPU (a directory and a file per page), so run more than one job per core.
	g.SetLimit(4 * runtime.GOMAXPROCS(0))
	for _, p := range pages {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			if err := b.renderHTML(p); err != nil {
				return err
			}
			if p.hasRSS() {
				if err := b.renderRSS(p); err != nil {
					return err
				}
			}
			return b.writeAliases(p)
		})
	}
	return g.Wait()
}

// source names a page in messages: its content file, or what it is.
func (p *Page) source() string {
	if p.file != "" {
		return "content/" + p.file
	}
	return "the " + p.kind + " page " + p.outFile
}

func (b *builder) renderHTML(p *Page) error {
	ls, err := b.tpl.set(layoutCandidates(p, "html"), true)
	if errors.Is(err, errNoLayout) {
		// The built-in theme has a layout for every kind; only a
		// missing file in it gets here.
		return fmt.Errorf("render %s: no layout among %s", p.source(), strings.Join(layoutCandidates(p, "html"), ", "))
	}
	if err != nil {
		return err
	}
	for n := 1; ; n++ {
		dot := *p
		dot.render = &renderState{page: p, pagerNumber: n}
		out, err := b.execute(ls, &dot)
		if err != nil {
			return err
		}
		rel := p.outFile
		if n > 1 {
			rel = pagerPath(p, n) + "index.html"
		}
		if err := b.out.writeFile(rel, p.source(), out); err != nil {
			return err
		}
		pg := dot.render.paginator
		if pg == nil {
			return nil
		}
		if n == 1 {
			// LIST/page/1/ is the list itself, as in Hugo.
			if err := b.writeAlias(strings.TrimPrefix(pagerPath(p, 1)+b.site.pagerPath+"/1/", "/"), p); err != nil {
				return err
			}
		}
		if n >= pg.TotalPages() {
			return nil
		}
	}
}

// renderView is .Render: a view of the page, such as its summary in a
// list, from layouts/TYPE/NAME.html or layouts/_default/NAME.html.
func (b *builder) renderView(p *Page, layout string) (template.HTML, error) {
	name := strings.TrimSuffix(layout, ".html") + ".html"
	var cands []string
	for _, dir := range []string{p.typ, p.section, "_default"} {
		if dir != "" && !slices.Contains(cands, dir+"/"+name) {
			cands = append(cands, dir+"/"+name)
		}
	}
	ls, err := b.tpl.set(cands, false)
	if errors.Is(err, errNoLayout) {
		return "", fmt.Errorf(".Render %q: no layout among %s", layout, strings.Join(cands, ", "))
	}
	if err != nil {
		return "", err
	}
	out, err := b.execute(ls, p)
	// The view was escaped by html/template itself.
	return template.HTML(out), err
}

func (b *builder) execute(ls *layoutSet, dot *Page) ([]byte, error) {
	es, err := ls.get()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(16 << 10)
	err = es.t.ExecuteTemplate(&buf, ls.entry, dot)
	ls.put(es)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", dot.source(), err)
	}
	if err := b.tpl.state.data.failed(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// renderRSS writes a list page's index.xml: with the site's or theme's
// rss.xml layout when there is one, else as Hugo's built-in RSS template
// does.
func (b *builder) renderRSS(p *Page) error {
	rel := p.relPath + "index.xml"
	ls, err := b.tpl.set(layoutCandidates(p, "rss.xml"), false)
	var out []byte
	switch {
	case errors.Is(err, errNoLayout):
		out = builtinRSS(p)
	case err != nil:
		return err
	default:
		dot := *p
		dot.render = &renderState{page: p, pagerNumber: 1}
		if out, err = b.execute(ls, &dot); err != nil {
			return err
		}
	}
	return b.out.writeFile(rel, "the RSS feed of "+p.source(), out)
}

// rssTime is the date format of RSS 2.0 (RFC 822 with a four-digit year).
const rssTime = "Mon, 02 Jan 2006 15:04:05 -0700"

// builtinRSS is what Hugo's built-in RSS template makes of a list page:
// the regular pages of the home page (all of them) or of a section, the
// pages of a term, the terms of a taxonomy, each with its summary.
func builtinRSS(p *Page) []byte {
	s := p.site
	var items Pages
	switch p.kind {
	case "home":
		items = s.regular
	case "section":
		items = p.RegularPages()
	default:
		items = p.pages
	}
	var b strings.Builder
	esc := func(t string) string {
		var w strings.Builder
		xml.EscapeText(&w, []byte(t))
		return w.String()
	}
	title := s.Title
	desc := "Recent content on " + s.Title
	if p.title != s.Title && p.title != "" {
		title = p.title + " on " + s.Title
		desc = "Recent content in " + p.title + " on " + s.Title
	}
	b.WriteString(`<?xml version="1.0" encoding="utf-8" standalone="yes"?>` + "\n")
	b.WriteString(`<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">` + "\n  <channel>\n")
	b.WriteString("    <title>" + esc(title) + "</title>\n")
	b.WriteString("    <link>" + esc(p.perma) + "</link>\n")
	b.WriteString("    <description>" + esc(desc) + "</description>\n")
	b.WriteString("    <generator>observer</generator>\n")
	if s.LanguageCode != "" {
		b.WriteString("    <language>" + esc(s.LanguageCode) + "</language>\n")
	}
	if s.Copyright != "" {
		b.WriteString("    <copyright>" + esc(s.Copyright) + "</copyright>\n")
	}
	if d := p.Date(); !d.IsZero() {
		b.WriteString("    <lastBuildDate>" + d.Format(rssTime) + "</lastBuildDate>\n")
	}
	b.WriteString(`    <atom:link href="` + esc(s.absPath(p.relPath+"index.xml")) + `" rel="self" type="application/rss+xml" />` + "\n")
	for _, it := range items {
		b.WriteString("    <item>\n")
		b.WriteString("      <title>" + esc(it.title) + "</title>\n")
		b.WriteString("      <link>" + esc(it.perma) + "</link>\n")
		b.WriteString("      <pubDate>" + it.date.Format(rssTime) + "</pubDate>\n")
		b.WriteString("      <guid>" + esc(it.perma) + "</guid>\n")
		// The summary is HTML; RSS readers unescape it once and render it.
		b.WriteString("      <description>" + esc(string(it.summary)) + "</description>\n")
		b.WriteString("    </item>\n")
	}
	b.WriteString("  </channel>\n</rss>\n")
	return []byte(b.String())
}

// aliasHTML is Hugo's redirect page for an alias.
var aliasHTML = template.Must(template.New("alias").Parse(`<!DOCTYPE html><html lang="{{ .Lang }}"><head><title>{{ .Permalink }}</title><link rel="canonical" href="{{ .Permalink }}"><meta name="robots" content="noindex"><meta charset="utf-8"><meta http-equiv="refresh" content="0; url={{ .Permalink }}"></head></html>
`))

// writeAliases writes a redirect at each of the page's aliases, paths
// from the site's root ("/old/", "/old.html").
func (b *builder) writeAliases(p *Page) error {
	for _, a := range p.aliases {
		rel := strings.TrimPrefix(path.Clean("/"+a), "/")
		if rel == "" {
			return fmt.Errorf("%s: alias %q would replace the home page", p.source(), a)
		}
		if path.Ext(rel) == "" {
			rel += "/"
		}
		if err := b.writeAlias(rel, p); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) writeAlias(rel string, p *Page) error {
	if strings.HasSuffix(rel, "/") {
		rel += "index.html"
	}
	var buf bytes.Buffer
	if err := aliasHTML.Execute(&buf, struct{ Lang, Permalink string }{p.site.LanguageCode, p.perma}); err != nil {
		return fmt.Errorf("alias %s of %s: %w", rel, p.source(), err)
	}
	return b.out.writeFile(rel, "an alias of "+p.source(), buf.Bytes())
}

// listDates gives list pages without a date of their own the newest
// date of what they list, as Hugo does (their RSS feed's lastBuildDate).
func listDates(pages Pages) {
	for _, p := range pages {
		if !p.date.IsZero() || p.kind == "page" {
			continue
		}
		var newest time.Time
		for _, q := range p.RegularPagesRecursive() {
			if q.date.After(newest) {
				newest = q.date
			}
		}
		if p.kind == "taxonomy" {
			for _, t := range p.pages {
				for _, q := range t.pages {
					if q.date.After(newest) {
						newest = q.date
					}
				}
			}
		}
		p.date = newest
	}
}
