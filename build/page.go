package build

import (
	"cmp"
	"fmt"
	"html"
	"html/template"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/fediverse-observer/observer/build/internal/funcs"
)

// Page is the dot of every page template, as in Hugo: a content page, a
// list page (home, section, taxonomy, term) or one of the observer's own
// pages (live, 404). Templates read it through methods named as Hugo's.
// A Page is shared by every list it is in; what belongs to one render
// (which pager it is) lives in render, set on a copy.
type Page struct {
	kind        string // home, page, section, taxonomy, term, live, 404
	title       string
	linkTitle   string
	description string
	date        time.Time
	lastmod     time.Time
	publishDate time.Time
	expiryDate  time.Time
	weight      int
	draft       bool
	params      map[string]any // front matter, keys lower-cased as Hugo's
	content     template.HTML
	summary     template.HTML
	truncated   bool
	// file is the source file relative to content/ ("" for pages made
	// without one).
	file       string
	section    string // the first-level section, "" at the root
	typ        string // front matter type, else the section, else "page"
	layout     string // front matter layout, as written
	slug       string
	url        string
	aliases    []string
	rawMenus   any // front matter menu, for the menus
	terms      map[string][]string
	relPath    string // site path of the page's directory or file ("posts/a/")
	outFile    string // path of the HTML output in public/
	rel, perma string

	parent   *Page
	pages    Pages // for list pages: what .Pages lists
	sections Pages // sub-sections, for .Sections
	data     *pageData
	site     *Site
	dir      string // content folder of a section ("posts/2024"); "" for home

	scratch *funcs.Scratch

	render *renderState
}

// renderState is what one render of a page knows: which pager it is.
type renderState struct {
	page        *Page // the shared page this render is a copy of
	pagerNumber int
	paginator   *Pager
}

// Pages is a list of pages with Hugo's sorting methods.
type Pages []*Page

// pageData is .Data of list pages, as Hugo's: .Data.Pages everywhere,
// .Data.Terms and .Data.Singular/.Data.Plural on taxonomy pages, and
// .Data.Term on term pages.
type pageData struct {
	Pages    Pages
	Terms    Taxonomy
	Singular string
	Plural   string
	Term     string
}

func (p *Page) Title() string     { return p.title }
func (p *Page) Name() string      { return p.title }
func (p *Page) LinkTitle() string { return cmp.Or(p.linkTitle, p.title) }

// Description is the front matter's, or, on the home page, the site's.
func (p *Page) Description() string { return p.description }
func (p *Page) Date() time.Time     { return p.date }

// Lastmod is the front matter's lastmod, else the date, as Hugo's.
func (p *Page) Lastmod() time.Time {
	if p.lastmod.IsZero() {
		return p.date
	}
	return p.lastmod
}
func (p *Page) PublishDate() time.Time { return cmp.Or(p.publishDate, p.date) }
func (p *Page) ExpiryDate() time.Time  { return p.expiryDate }
func (p *Page) Weight() int            { return p.weight }
func (p *Page) Draft() bool            { return p.draft }
func (p *Page) Params() map[string]any { return p.params }
func (p *Page) Content() template.HTML { return p.content }

// Summary is the part before <!--more--> when there is one, else the
// front matter's summary, else the first 70 words of the text, as Hugo's.
func (p *Page) Summary() template.HTML { return p.summary }
func (p *Page) Truncated() bool        { return p.truncated }

// Plain is the content's text without its tags, worked out when asked
// for: held for every page, it made a build of many pages twice as big.
func (p *Page) Plain() string  { return html.UnescapeString(stripTags(string(p.content))) }
func (p *Page) WordCount() int { return len(strings.Fields(p.Plain())) }

// ReadingTime is in minutes at 213 words a minute, Hugo's figure.
func (p *Page) ReadingTime() int     { return (p.WordCount() + 212) / 213 }
func (p *Page) Permalink() string    { return p.perma }
func (p *Page) RelPermalink() string { return p.rel }
func (p *Page) Kind() string         { return p.kind }
func (p *Page) Type() string         { return p.typ }
func (p *Page) Section() string      { return p.section }
func (p *Page) Layout() string       { return p.layout }
func (p *Page) Slug() string         { return p.slug }
func (p *Page) Aliases() []string    { return p.aliases }
func (p *Page) IsHome() bool         { return p.kind == "home" }
func (p *Page) IsPage() bool         { return p.kind == "page" }
func (p *Page) IsSection() bool      { return p.kind == "section" }
func (p *Page) IsNode() bool         { return p.kind != "page" }
func (p *Page) Site() *Site          { return p.site }
func (p *Page) Sites() []*Site       { return []*Site{p.site} }
func (p *Page) Lang() string         { return p.site.Language.Lang }
func (p *Page) Language() *Language  { return &p.site.Language }

// Scratch and Store are the page's scratch pad, shared by every template
// that renders it in this build.
func (p *Page) Scratch() *funcs.Scratch { return p.scratch }
func (p *Page) Store() *funcs.Scratch   { return p.scratch }

// Page is the page itself, so that a template written for a dot with a
// .Page (partials given a dict, the observer's former dot) still works.
func (p *Page) Page() *Page { return p }

// Render runs the page through a view template (.Render "summary"):
// layouts/TYPE/NAME.html, else layouts/_default/NAME.html.
func (p *Page) Render(layout string) (template.HTML, error) {
	if p.site == nil || p.site.renderView == nil {
		return "", fmt.Errorf("render %q: no templates", layout)
	}
	return p.site.renderView(p, layout)
}

// Data is Hugo's .Data of list pages.
func (p *Page) Data() *pageData {
	if p.data == nil {
		return &pageData{Pages: p.pages}
	}
	return p.data
}

// Pages is what a list page lists: for the home page and a section, its
// regular pages and sections; for a taxonomy, its terms; for a term, its
// pages. A regular page has none.
func (p *Page) Pages() Pages { return p.pages }

// RegularPages is .Pages without the sections.
func (p *Page) RegularPages() Pages { return p.pages.regular() }

// RegularPagesRecursive is every regular page under a section or the home
// page, sub-sections' too.
func (p *Page) RegularPagesRecursive() Pages {
	switch p.kind {
	case "home":
		return p.site.regular
	case "section":
		var out Pages
		for _, q := range p.site.regular {
			if q.inSection(p) {
				out = append(out, q)
			}
		}
		return out
	}
	return p.RegularPages()
}

func (p *Page) Sections() Pages { return p.sections }

// Parent is the section a page is in (the home page for the top ones).
func (p *Page) Parent() *Page { return p.parent }

// CurrentSection is the page itself for list pages, its section for
// regular pages.
func (p *Page) CurrentSection() *Page {
	if p.kind == "page" {
		return p.parent
	}
	return p
}

// FirstSection is the first-level section the page is under.
func (p *Page) FirstSection() *Page {
	s := p.CurrentSection()
	for s != nil && s.parent != nil && s.parent.kind != "home" {
		s = s.parent
	}
	if s == nil {
		return p.site.home
	}
	return s
}

// self is the shared page: the one in the lists, of which a render's dot
// is a copy.
func (p *Page) self() *Page {
	if p.render != nil && p.render.page != nil {
		return p.render.page
	}
	return p
}

func (p *Page) inSection(s *Page) bool {
	s = s.self()
	for q := p.parent; q != nil; q = q.parent {
		if q == s {
			return true
		}
	}
	return false
}

// InSection reports whether p is in the same section as other.
func (p *Page) InSection(other *Page) bool {
	return other != nil && p.CurrentSection() == other.CurrentSection()
}

// IsAncestor reports whether p is a section above other.
func (p *Page) IsAncestor(other *Page) bool { return other != nil && other.inSection(p) }

// IsDescendant reports whether p is under the section other.
func (p *Page) IsDescendant(other *Page) bool { return other != nil && p.inSection(other) }

// Eq reports whether other is the same page.
func (p *Page) Eq(other any) bool {
	o, ok := other.(*Page)
	return ok && o != nil && o.rel == p.rel && o.kind == p.kind
}

// Param is Hugo's .Param: the page's parameter of that name (any case),
// else the site's.
func (p *Page) Param(key any) (any, error) {
	k, ok := key.(string)
	if !ok {
		return nil, fmt.Errorf("Param: want the name of a parameter, got %v", key)
	}
	if v, ok := lookupParam(p.params, k); ok && v != nil {
		return v, nil
	}
	v, _ := lookupParam(p.site.params, k)
	return v, nil
}

// lookupParam finds a key (dotted for nested tables, any case).
func lookupParam(m map[string]any, key string) (any, bool) {
	var cur any = m
	for part := range strings.SplitSeq(strings.ToLower(key), ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// GetTerms is the term pages of the page's terms in a taxonomy.
func (p *Page) GetTerms(taxonomy string) Pages {
	var out Pages
	for _, t := range p.terms[strings.ToLower(taxonomy)] {
		if tp := p.site.termPage(taxonomy, t); tp != nil {
			out = append(out, tp)
		}
	}
	return out
}

// Next and Prev step through the site's regular pages in their default
// order, as Hugo's.
func (p *Page) Next() *Page { return p.site.regular.neighbour(p, -1) }
func (p *Page) Prev() *Page { return p.site.regular.neighbour(p, 1) }

// NextInSection and PrevInSection step through the page's section.
func (p *Page) NextInSection() *Page {
	if p.parent == nil {
		return nil
	}
	return p.parent.pages.regular().neighbour(p, -1)
}
func (p *Page) PrevInSection() *Page {
	if p.parent == nil {
		return nil
	}
	return p.parent.pages.regular().neighbour(p, 1)
}

func (ps Pages) neighbour(p *Page, step int) *Page {
	i := slices.Index(ps, p.self())
	if i < 0 || i+step < 0 || i+step >= len(ps) {
		return nil
	}
	return ps[i+step]
}

// TableOfContents lists the page's h2 and h3 headings, as Hugo's
// default (startLevel 2, endLevel 3) does.
func (p *Page) TableOfContents() template.HTML {
	var b strings.Builder
	level := 0
	for _, m := range headingRE.FindAllStringSubmatch(string(p.content), -1) {
		l := int(m[1][0] - '0')
		for level < l-1 {
			b.WriteString("<ul>\n<li>")
			level++
		}
		for level > l-1 {
			b.WriteString("</li>\n</ul>")
			level--
		}
		if level == l-1 && b.Len() > 0 && !strings.HasSuffix(b.String(), "<li>") {
			b.WriteString("</li>\n<li>")
		}
		if level == 0 {
			b.WriteString("<ul>\n<li>")
			level = 1
		}
		b.WriteString(`<a href="#` + m[2] + `">` + stripTags(m[3]) + "</a>")
	}
	for ; level > 0; level-- {
		b.WriteString("</li>\n</ul>")
	}
	if b.Len() == 0 {
		return `<nav id="TableOfContents"></nav>`
	}
	return template.HTML(`<nav id="TableOfContents">` + "\n" + b.String() + "\n</nav>")
}

// headingRE finds the h2 and h3 headings goldmark writes, with their ids.
var headingRE = regexp.MustCompile(`<h([23]) id="([^"]*)">(.*?)</h[23]>`)

// File is Hugo's .File: the page's source file.
func (p *Page) File() *File {
	if p.file == "" {
		return nil
	}
	dir, base := path.Split(p.file)
	name := strings.TrimSuffix(base, path.Ext(base))
	f := &File{Path: p.file, Dir: dir, LogicalName: base, BaseFileName: name, TranslationBaseName: name, Ext: strings.TrimPrefix(path.Ext(base), "."), ContentBaseName: name}
	if name == "index" || name == "_index" {
		f.ContentBaseName = path.Base(strings.TrimSuffix(dir, "/"))
	}
	return f
}

// File describes a content file, with Hugo's names.
type File struct {
	Path, Dir, LogicalName, BaseFileName, TranslationBaseName, ContentBaseName, Ext string
}

// OutputFormat is one rendering of a page (HTML, RSS).
type OutputFormat struct {
	Name, Rel string
	// MediaType prints as "text/html" and has Hugo's .Type, .MainType,
	// .SubType and .Suffixes, which themes read.
	MediaType  funcs.MediaType
	rel, perma string
}

func (o OutputFormat) Permalink() string    { return o.perma }
func (o OutputFormat) RelPermalink() string { return o.rel }

var (
	htmlType = funcs.MediaType{Type: "text/html", MainType: "text", SubType: "html", Suffixes: []string{"html"}}
	rssType  = funcs.MediaType{Type: "application/rss+xml", MainType: "application", SubType: "rss", Suffixes: []string{"xml"}}
)

// OutputFormats lists a page's renderings, with Hugo's .Get.
type OutputFormats []OutputFormat

// Get returns the output format of that name (any case), nil if none.
func (o OutputFormats) Get(name string) *OutputFormat {
	for i := range o {
		if strings.EqualFold(o[i].Name, name) {
			return &o[i]
		}
	}
	return nil
}

// OutputFormats are HTML for every page and RSS for list pages, Hugo's
// defaults.
func (p *Page) OutputFormats() OutputFormats {
	rel := "canonical"
	out := OutputFormats{{Name: "HTML", Rel: rel, MediaType: htmlType, rel: p.rel, perma: p.perma}}
	if p.hasRSS() {
		out[0].Rel = "canonical"
		out = append(out, OutputFormat{Name: "RSS", Rel: "alternate", MediaType: rssType,
			rel: p.site.relPath(p.relPath + "index.xml"), perma: p.site.absPath(p.relPath + "index.xml")})
	}
	return out
}

// AlternativeOutputFormats are the formats other than the one rendered.
func (p *Page) AlternativeOutputFormats() OutputFormats { return p.OutputFormats()[1:] }

// RSSLink is the page's RSS feed, "" if it has none.
func (p *Page) RSSLink() string {
	if !p.hasRSS() {
		return ""
	}
	return p.site.absPath(p.relPath + "index.xml")
}

func (p *Page) hasRSS() bool {
	switch p.kind {
	case "home", "section", "taxonomy", "term":
		return true
	}
	return false
}

// IsMenuCurrent reports whether entry of the named menu links to p.
func (p *Page) IsMenuCurrent(menu string, entry *MenuEntry) bool {
	if entry == nil {
		return false
	}
	if entry.Page != nil {
		return entry.Page.rel == p.rel
	}
	return entry.URL == p.rel
}

// HasMenuCurrent reports whether one of entry's children links to p.
func (p *Page) HasMenuCurrent(menu string, entry *MenuEntry) bool {
	if entry == nil {
		return false
	}
	for _, c := range entry.Children {
		if p.IsMenuCurrent(menu, c) || p.HasMenuCurrent(menu, c) {
			return true
		}
	}
	return false
}

// Paginator is the pager of this render over .Pages (the pager size is
// site.pagination.pagerSize).
func (p *Page) Paginator() (*Pager, error) { return p.Paginate(p.pages) }

// Paginate splits a list of pages into pagers and returns this render's;
// the first call of a render fixes the list, as in Hugo.
func (p *Page) Paginate(list any, size ...int) (*Pager, error) {
	if p.render == nil {
		return nil, fmt.Errorf("%s: .Paginate and .Paginator work only on the page being rendered", p.rel)
	}
	if p.render.paginator != nil {
		return p.render.paginator, nil
	}
	if p.kind == "page" {
		return nil, fmt.Errorf("%s: pagination is for list pages (home, sections, taxonomies), not %s", p.rel, p.kind)
	}
	pages, err := toPages(list)
	if err != nil {
		return nil, fmt.Errorf("Paginate: %w", err)
	}
	n := p.site.pagerSize
	if len(size) > 0 && size[0] > 0 {
		n = size[0]
	}
	pg := newPaginator(p, pages, n)
	num := min(max(p.render.pagerNumber, 1), len(pg.pagers))
	p.render.paginator = pg.pagers[num-1]
	return p.render.paginator, nil
}

// toPages takes the lists templates pass around: Pages, a slice of pages
// or weighted pages, or a slice of anything holding them (what where and
// first give back).
func toPages(list any) (Pages, error) {
	switch l := list.(type) {
	case Pages:
		return l, nil
	case []*Page:
		return l, nil
	case WeightedPages:
		return l.Pages(), nil
	case nil:
		return nil, nil
	}
	v := reflect.ValueOf(list)
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return nil, fmt.Errorf("want a list of pages, got %T", list)
	}
	out := make(Pages, 0, v.Len())
	for i := range v.Len() {
		switch e := v.Index(i).Interface().(type) {
		case *Page:
			out = append(out, e)
		case WeightedPage:
			out = append(out, e.Page)
		default:
			return nil, fmt.Errorf("want a list of pages, got an element %T", e)
		}
	}
	return out, nil
}

func (ps Pages) regular() Pages {
	var out Pages
	for _, p := range ps {
		if p.kind == "page" {
			out = append(out, p)
		}
	}
	return out
}

func (ps Pages) Len() int { return len(ps) }

// sorted returns a sorted copy: a list is shared, sorting it in place
// would reorder every template's view of it.
func (ps Pages) sorted(f func(a, b *Page) int) Pages {
	out := slices.Clone(ps)
	slices.SortStableFunc(out, f)
	return out
}

// ByWeight is Hugo's default order: weight (unweighted last), then date,
// newest first, then link title, then file.
func (ps Pages) ByWeight() Pages { return ps.sorted(defaultOrder) }
func (ps Pages) ByDate() Pages {
	return ps.sorted(func(a, b *Page) int { return cmp.Or(a.date.Compare(b.date), defaultOrder(a, b)) })
}
func (ps Pages) ByPublishDate() Pages {
	return ps.sorted(func(a, b *Page) int { return cmp.Or(a.PublishDate().Compare(b.PublishDate()), defaultOrder(a, b)) })
}
func (ps Pages) ByLastmod() Pages {
	return ps.sorted(func(a, b *Page) int { return cmp.Or(a.Lastmod().Compare(b.Lastmod()), defaultOrder(a, b)) })
}
func (ps Pages) ByTitle() Pages {
	return ps.sorted(func(a, b *Page) int { return cmp.Or(cmp.Compare(a.title, b.title), defaultOrder(a, b)) })
}
func (ps Pages) ByLinkTitle() Pages {
	return ps.sorted(func(a, b *Page) int { return cmp.Or(cmp.Compare(a.LinkTitle(), b.LinkTitle()), defaultOrder(a, b)) })
}

// Reverse returns the list in the opposite order.
func (ps Pages) Reverse() Pages {
	out := slices.Clone(ps)
	slices.Reverse(out)
	return out
}

func defaultOrder(a, b *Page) int {
	if (a.weight == 0) != (b.weight == 0) {
		if a.weight == 0 {
			return 1
		}
		return -1
	}
	return cmp.Or(cmp.Compare(a.weight, b.weight), b.date.Compare(a.date),
		cmp.Compare(a.LinkTitle(), b.LinkTitle()), cmp.Compare(a.file, b.file), cmp.Compare(a.rel, b.rel))
}
