package config

import (
	"cmp"

	"github.com/fediverse-observer/observer/build"
	"github.com/fediverse-observer/observer/duck"
)

// The config's mappings onto the packages' option structs live here,
// together and beside the file's keys: the commands, and the whole-site
// tests of the builder and the preview (which read an observer.toml of their
// own), then map the file one way. The packages never import config; config
// imports their option types, so the dependency still points one way.

// BuildSettings are the site builder's settings from this config: [site],
// and what the pages tell of [crawl] (the User-Agent of this version) and
// [state] (the thresholds).
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

// Rules are the [state] table as the rules duck derives the states, the
// lists and the schedule with.
func (c Config) Rules() duck.Rules {
	st := c.State
	return duck.Rules{
		FailuresToDead:   st.FailuresToDead,
		DeadAfter:        st.DeadAfter.D(),
		ReviveAfter:      st.ReviveAfter.D(),
		LiveWindow:       st.LiveWindow.D(),
		NewWindow:        st.NewWindow.D(),
		Warmup:           st.Warmup.D(),
		ActiveInterval:   st.ActiveInterval.D(),
		ActiveJitter:     st.ActiveJitter.D(),
		InactiveInterval: st.InactiveInterval.D(),
		InactiveJitter:   st.InactiveJitter.D(),
		BackoffMax:       st.BackoffMax.D(),
		DiscoveryDelay:   st.DiscoveryDelay.D(),
	}
}
