package build

import (
	"cmp"
	"context"
	"fmt"
	"html/template"
	"iter"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fediverse-observer/observer"
)

// Language is .Site.Language, as Hugo's; printed, it is the language code.
type Language struct {
	Lang, LanguageCode, LanguageName, LanguageDirection string
}

func (l Language) String() string { return l.Lang }

// Site is `site` and .Site in templates, with Hugo's fields and methods,
// and the observer's own: its data (.Data.observer) and crawler details.
type Site struct {
	Title        string
	BaseURL      string // always ends in "/"
	LanguageCode string
	Language     Language
	Copyright    string
	Description  string
	Theme        string
	// Contact is [site] contact, for the footer.
	Contact string
	// Params are [site.params], keys lower-cased so that any case finds
	// them, as in Hugo; params.mainSections defaults to the section with
	// the most pages.
	Params     map[string]any
	Menus      Menus
	Taxonomies map[string]Taxonomy
	// Data is Hugo's site data; the observer's is Data.observer (a
	// *DataView).
	Data map[string]any
	// Now is the build time.
	Now time.Time
	// UserAgent is the crawler's User-Agent header, ProductToken the word
	// robots.txt rules match.
	UserAgent    string
	ProductToken string
	// FeedURL is the path of the Atom feed of new instances.
	FeedURL string
	// LiveWindow, NewWindow, Warmup, ActiveInterval and InactiveInterval are
	// the state thresholds, for pages that explain the lists.
	LiveWindow, NewWindow, Warmup, ActiveInterval, InactiveInterval time.Duration

	home    *Page
	all     Pages // every page of every kind
	regular Pages
	byRef   map[string]*Page
	// renderView runs a layout of the page's type (or _default/) with
	// the page as its dot, for .Render.
	renderView   func(p *Page, layout string) (template.HTML, error)
	terms        map[string]map[string]*Page
	taxonomyList []taxonomyDef
	params       map[string]any
	pagerSize    int
	pagerPath    string
	summaryLen   int
	menuConfig   map[string][]MenuSetting
	unsafeHTML   bool

	base     *url.URL
	basePath string // always ends in "/"
}

type taxonomyDef struct{ singular, plural string }

// Pages is every page of the site: home, sections, regular pages,
// taxonomies and terms.
func (s *Site) Pages() Pages { return s.all }

// RegularPages is every regular (content) page, in Hugo's default order.
func (s *Site) RegularPages() Pages { return s.regular }

// Sections are the first-level sections.
func (s *Site) Sections() Pages { return s.home.sections }

// Home is the home page.
func (s *Site) Home() *Page { return s.home }

// IsServer is false: observer serve rebuilds the same files.
func (s *Site) IsServer() bool { return false }

// BuildDrafts is false: drafts are never published.
func (s *Site) BuildDrafts() bool { return false }

// LanguagePrefix is empty: a site has one language.
func (s *Site) LanguagePrefix() string { return "" }

// Author is the params' author table, where Hugo's former [author] was.
func (s *Site) Author() map[string]any {
	m, _ := s.params["author"].(map[string]any)
	return m
}

// Config is the part of Hugo's .Site.Config that themes read: the RSS
// limit (-1, none) and the privacy settings of services the observer
// never loads.
func (s *Site) Config() siteConfig {
	var c siteConfig
	c.Services.RSS.Limit = -1
	c.Privacy.GoogleAnalytics.Disable = true
	c.Privacy.Disqus.Disable = true
	return c
}

type siteConfig struct {
	Services struct {
		RSS             struct{ Limit int }
		Disqus          struct{ Shortname string }
		GoogleAnalytics struct{ ID string }
	}
	Privacy struct {
		GoogleAnalytics, Disqus struct{ Disable bool }
	}
}

// MainSections is params.mainSections.
func (s *Site) MainSections() any { return s.params["mainsections"] }

// Lastmod is the newest date of a regular page.
func (s *Site) Lastmod() time.Time {
	var t time.Time
	for _, p := range s.regular {
		if l := p.Lastmod(); l.After(t) {
			t = l
		}
	}
	return t
}

// GetPage finds a page by its path in content/ ("/posts", "posts/a.md",
// "/about"), nil if there is none.
func (s *Site) GetPage(ref string) *Page {
	key := normRef(ref)
	if p, ok := s.byRef[key]; ok || strings.Contains(key, "/") {
		return p
	}
	// A bare name ("about", "life") is looked up by the last element of
	// the pages' paths, as Hugo does, when one page alone has it.
	var found *Page
	for k, p := range s.byRef {
		if path.Base(k) == key {
			if found != nil && found != p {
				return nil
			}
			found = p
		}
	}
	return found
}

// ref is the ref and relref functions: the URL of the page at a path in
// content/, with any #fragment kept; a page that is not there is an error.
func (s *Site) ref(ref string, abs bool) (string, error) {
	p, frag, _ := strings.Cut(ref, "#")
	if frag != "" {
		frag = "#" + frag
	}
	if p == "" {
		return frag, nil
	}
	pg := s.GetPage(p)
	if pg == nil {
		return "", fmt.Errorf("ref %q: no such page in content/", ref)
	}
	if abs {
		return pg.perma + frag, nil
	}
	return pg.rel + frag, nil
}

func normRef(ref string) string {
	ref = strings.ToLower(strings.Trim(path.Clean("/"+ref), "/"))
	ref = strings.TrimSuffix(ref, ".md")
	ref = strings.TrimSuffix(strings.TrimSuffix(ref, "/_index"), "/index")
	if ref == "_index" || ref == "index" {
		ref = ""
	}
	return ref
}

func newSite(opts Options) (*Site, error) {
	sc := opts.Site
	u, err := url.Parse(sc.BaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		// Every link, feed and sitemap entry starts with it: a
		// javascript: scheme or a user:password@ would be published
		// everywhere, a query or fragment silently dropped.
		return nil, fmt.Errorf("site.base_url must be an http or https URL without credentials, query or fragment, such as https://example.org/, got %q", sc.BaseURL)
	}
	bp := u.Path
	if !strings.HasSuffix(bp, "/") {
		bp += "/"
	}
	s := &Site{
		Title:            sc.Title,
		BaseURL:          sc.BaseURL,
		LanguageCode:     sc.Language,
		Language:         Language{Lang: sc.Language, LanguageCode: sc.Language, LanguageName: sc.Language, LanguageDirection: "ltr"},
		Copyright:        sc.Copyright,
		Description:      sc.Description,
		Theme:            sc.Theme,
		Contact:          sc.Contact,
		Params:           lowerKeys(sc.Params),
		Now:              opts.Now.UTC(),
		UserAgent:        sc.UserAgent,
		ProductToken:     sc.ProductToken,
		LiveWindow:       sc.LiveWindow,
		NewWindow:        sc.NewWindow,
		Warmup:           sc.Warmup,
		ActiveInterval:   sc.ActiveInterval,
		InactiveInterval: sc.InactiveInterval,
		pagerSize:        cmp.Or(sc.PagerSize, 10),
		pagerPath:        cmp.Or(sc.PagerPath, "page"),
		summaryLen:       cmp.Or(sc.SummaryLength, 70),
		menuConfig:       sc.Menus,
		unsafeHTML:       sc.UnsafeHTML,
		base:             u,
		basePath:         bp,
	}
	if s.Params == nil {
		s.Params = map[string]any{}
	}
	s.params = s.Params
	taxonomies := sc.Taxonomies
	if taxonomies == nil {
		taxonomies = map[string]string{"tag": "tags", "category": "categories"}
	}
	for _, singular := range slices.Sorted(maps.Keys(taxonomies)) {
		plural := strings.ToLower(taxonomies[singular])
		if plural == "" || strings.ContainsAny(plural, "/\\") || plural == "." || plural == ".." {
			return nil, fmt.Errorf("site.taxonomies.%s must name a folder such as tags, got %q", singular, taxonomies[singular])
		}
		s.taxonomyList = append(s.taxonomyList, taxonomyDef{singular: strings.ToLower(singular), plural: plural})
	}
	if !strings.HasSuffix(u.Path, "/") {
		// Templates append paths to it ("{{ .Site.BaseURL }}style.css"),
		// as in Hugo, whose base URL ends in "/": written without one,
		// that made https://example.org/obsstyle.css.
		bu := *u
		bu.Path = bp
		if bu.RawPath != "" {
			bu.RawPath += "/"
		}
		s.BaseURL = bu.String()
	}
	s.FeedURL = s.relPath("new.atom")
	return s, nil
}

// lowerKeys copies a table with its keys lower-cased, tables within too,
// which is how Hugo makes params keys case-insensitive.
func lowerKeys(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = lowerValue(v)
	}
	return out
}

func lowerValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return lowerKeys(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = lowerValue(e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = lowerKeys(e)
		}
		return out
	}
	return v
}

// RelURL is the template function relURL: a site path with the base URL's
// path in front ("about/#opting-out" is "/sub/about/#opting-out"). As in
// Hugo, a query and a fragment are kept as they are, and an absolute URL
// ("https://…", "//host/…", "mailto:…") is returned unchanged: put into
// the path, they came out as "/sub/about/%23opting-out" and
// "/sub/https://…".
func (s *Site) RelURL(ref string) string {
	if isAbsURL(ref) {
		return ref
	}
	p, rest := splitRef(ref)
	return s.relPath(p) + rest
}

// AbsURL is the template function absURL: RelURL as an absolute URL.
func (s *Site) AbsURL(ref string) string {
	if isAbsURL(ref) {
		return ref
	}
	p, rest := splitRef(ref)
	return s.absPath(p) + rest
}

func isAbsURL(ref string) bool {
	if strings.HasPrefix(ref, "//") {
		return true
	}
	u, err := url.Parse(ref)
	return err == nil && u.Scheme != ""
}

// splitRef splits a link into its path and what follows it ("?x=1#top").
func splitRef(ref string) (path, rest string) {
	if i := strings.IndexAny(ref, "?#"); i >= 0 {
		return ref[:i], ref[i:]
	}
	return ref, ""
}

// relPath turns a site path ("about/") into a path from the server root
// that includes the base URL's path ("/sub/about/"), escaped: a page made
// from content/what?.md is at /what%3F/, not at /what. Unlike RelURL it
// takes every character as part of the path, since it is given file names.
func (s *Site) relPath(p string) string {
	return (&url.URL{Path: s.sitePath(p)}).EscapedPath()
}

// absPath turns a site path into an absolute URL, as relPath does.
func (s *Site) absPath(p string) string {
	u := *s.base
	u.Path, u.RawPath = s.sitePath(p), ""
	return u.String()
}

func (s *Site) sitePath(p string) string {
	return s.basePath + strings.TrimPrefix(p, "/")
}

// FeedLink names one per-software Atom feed.
type FeedLink struct {
	Software     string // as the instances report it (untrusted text)
	RelPermalink string
	Count        int
	file         string // path in public/
}

// DataView is .Data in templates. The new list and the stats are read once
// per build; the live list is streamed each time a template ranges over it.
type DataView struct {
	ctx     context.Context
	data    Data
	newList []observer.Instance
	stats   observer.Stats
	feeds   []FeedLink

	mu  sync.Mutex
	err error // first error of a streamed list, reported after rendering
}

// New returns the new instances, newest first.
func (d *DataView) New() []observer.Instance { return d.newList }

// Stats returns the summary counts.
func (d *DataView) Stats() observer.Stats { return d.stats }

// Feeds returns the per-software feeds of new instances, by software name.
func (d *DataView) Feeds() []FeedLink { return d.feeds }

// Live streams the live instances sorted by host; use it with range. An
// error stops the range and fails the build.
func (d *DataView) Live() iter.Seq[observer.Instance] {
	return func(yield func(observer.Instance) bool) {
		for inst, err := range d.data.LiveInstances(d.ctx) {
			if err != nil {
				d.fail(fmt.Errorf("live instances: %w", err))
				return
			}
			if !yield(inst) {
				return
			}
		}
	}
}

// History describes Stats.Days for chart labels.
type History struct {
	Days              []observer.DayCount
	First, Last       time.Time
	PeakLive, PeakNew int64
	LastLive, LastNew int64
}

// History returns the daily history with its range and peaks.
func (d *DataView) History() History {
	h := History{Days: d.stats.Days}
	if n := len(h.Days); n > 0 {
		h.First, h.Last = h.Days[0].Day, h.Days[n-1].Day
		h.LastLive, h.LastNew = h.Days[n-1].Live, h.Days[n-1].New
	}
	for _, day := range h.Days {
		h.PeakLive = max(h.PeakLive, day.Live)
		h.PeakNew = max(h.PeakNew, day.New)
	}
	return h
}

// Transitions returns the most recent state changes, newest first.
func (d *DataView) Transitions(limit int) ([]observer.Transition, error) {
	t, err := d.data.RecentTransitions(d.ctx, limit)
	if err != nil {
		return nil, fmt.Errorf("recent transitions: %w", err)
	}
	return t, nil
}

func (d *DataView) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil {
		d.err = err
	}
}

func (d *DataView) failed() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}
