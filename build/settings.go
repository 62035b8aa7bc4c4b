package build

import "time"

// Settings are what a site says about itself: observer.toml's [site] table
// with Hugo's spellings already folded in, and what its pages tell of the
// crawler and the state thresholds. config.Config.BuildSettings maps the
// file to them; config validates them there, and newSite refuses what
// would be unsafe to publish (a base URL that is not http or https, a
// taxonomy that is no folder name).
type Settings struct {
	Title       string
	BaseURL     string
	Language    string
	Description string
	Theme       string
	Contact     string
	Copyright   string
	// UnsafeHTML lets raw HTML in Markdown through, as Hugo's
	// markup.goldmark.renderer.unsafe does.
	UnsafeHTML bool
	// Params are .Site.Params, keys in any case.
	Params map[string]any
	// Menus are the menus defined in the config, by menu name.
	Menus map[string][]MenuSetting
	// PagerSize is the number of pages on a pager (10 when 0), PagerPath
	// the path element of its pages ("page" when empty).
	PagerSize int
	PagerPath string
	// Taxonomies maps singular to plural names; nil means Hugo's default
	// (tag = "tags", category = "categories"), an empty map none.
	Taxonomies map[string]string
	// SummaryLength is the number of words of an automatic summary (70
	// when 0).
	SummaryLength int

	// UserAgent is the crawler's User-Agent header, ProductToken the word
	// robots.txt rules match.
	UserAgent    string
	ProductToken string
	// The state thresholds, for pages that explain the lists.
	LiveWindow, NewWindow, Warmup, ActiveInterval, InactiveInterval time.Duration
}

// MenuSetting is an entry of a menu defined in the config, with Hugo's
// fields; the site makes a MenuEntry of it.
type MenuSetting struct {
	Name       string
	URL        string
	PageRef    string
	Weight     int
	Parent     string
	Identifier string
	Pre        string
	Post       string
	Title      string
	Params     map[string]any
}
