package config

import (
	"cmp"

	"github.com/fediverse-observer/observer/build"
)

// BuildSettings are the site builder's settings from this config: [site],
// and what the pages tell of [crawl] (the User-Agent of this version) and
// [state] (the thresholds). The mapping lives here, beside the file's keys,
// so that observer build and serve and the builder's whole-site tests, which
// read an observer.toml of their own, map the file one way.
func (c Config) BuildSettings(version string) build.Settings {
	s := c.Site
	menus := make(map[string][]build.MenuSetting, len(s.Menus))
	for name, entries := range s.Menus {
		for _, e := range entries {
			menus[name] = append(menus[name], build.MenuSetting(e))
		}
	}
	if s.Menus == nil {
		menus = nil
	}
	return build.Settings{
		Title:            s.Title,
		BaseURL:          s.BaseURL,
		Language:         s.Language,
		Description:      s.Description,
		Theme:            s.Theme,
		Contact:          s.Contact,
		Copyright:        s.Copyright,
		UnsafeHTML:       s.UnsafeHTML,
		Params:           s.Params,
		Menus:            menus,
		PagerSize:        cmp.Or(s.Pagination.PagerSize, s.Paginate),
		PagerPath:        s.Pagination.Path,
		Taxonomies:       s.Taxonomies,
		SummaryLength:    s.SummaryLength,
		UserAgent:        c.Crawl.UserAgent(version),
		ProductToken:     c.Crawl.ProductToken,
		LiveWindow:       c.State.LiveWindow.D(),
		NewWindow:        c.State.NewWindow.D(),
		Warmup:           c.State.Warmup.D(),
		ActiveInterval:   c.State.ActiveInterval.D(),
		InactiveInterval: c.State.InactiveInterval.D(),
	}
}
