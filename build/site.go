package build

import (
	"context"
	"fmt"
	"html/template"
	"iter"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/config"
)

// Context is the dot of every template: the page being rendered, the site
// and the derived data.
type Context struct {
	Page *Page
	Site *Site
	Data *DataView
}

// Page is one rendered page: a content page or one of the generated ones.
type Page struct {
	// Kind is "home", "page", "live" or "404".
	Kind        string
	Title       string
	Description string
	Date        time.Time
	Weight      int
	Draft       bool
	// Params holds the front matter keys other than the ones above.
	Params  map[string]any
	Content template.HTML
	// RelPermalink is the path of the page including the base URL's path,
	// e.g. "/about/"; Permalink is the absolute URL.
	RelPermalink string
	Permalink    string
	// File is the source file relative to content/ ("" for generated pages).
	File string

	outPath string
	layout  string // front matter layout, as written; also in Params
	inMenu  bool   // front matter menu names main
}

// Site is .Site in templates: the [site] settings plus what the build knows.
type Site struct {
	config.Site
	// Pages are the published content pages (not the home page), by weight
	// (unweighted last), then title.
	Pages []*Page
	// Now is the build time.
	Now time.Time
	// UserAgent is the crawler's User-Agent header, ProductToken the word
	// robots.txt rules match.
	UserAgent    string
	ProductToken string
	// FeedURL is the path of the Atom feed of new instances.
	FeedURL string
	// Menu are the pages whose front matter menu names main (`menu: main`,
	// `menu: [main]` or a table with the key main), in the order of Pages.
	Menu []*Page
	// LiveWindow, NewWindow, Warmup, ActiveInterval and InactiveInterval are
	// the state thresholds, for pages that explain the lists.
	LiveWindow, NewWindow, Warmup, ActiveInterval, InactiveInterval time.Duration

	base     *url.URL
	basePath string // always ends in "/"
}

func newSite(opts Options) (*Site, error) {
	cfg := opts.Config
	u, err := url.Parse(cfg.Site.BaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		// Every link, feed and sitemap entry starts with it: a
		// javascript: scheme or a user:password@ would be published
		// everywhere, a query or fragment silently dropped.
		return nil, fmt.Errorf("site.base_url must be an http or https URL without credentials, query or fragment, such as https://example.org/, got %q", cfg.Site.BaseURL)
	}
	bp := u.Path
	if !strings.HasSuffix(bp, "/") {
		bp += "/"
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s := &Site{
		Site:             cfg.Site,
		Now:              opts.Now.UTC(),
		UserAgent:        cfg.Crawl.UserAgent(version),
		ProductToken:     cfg.Crawl.ProductToken,
		LiveWindow:       cfg.State.LiveWindow.D(),
		NewWindow:        cfg.State.NewWindow.D(),
		Warmup:           cfg.State.Warmup.D(),
		ActiveInterval:   cfg.State.ActiveInterval.D(),
		InactiveInterval: cfg.State.InactiveInterval.D(),
		base:             u,
		basePath:         bp,
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
	if s.Params == nil {
		s.Params = map[string]any{}
	}
	s.FeedURL = s.relPath("new.atom")
	return s, nil
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
