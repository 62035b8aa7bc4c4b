package config

import (
	"cmp"

	"github.com/fediverse-observer/observer/build"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/internal/crawlpass"
	"github.com/fediverse-observer/observer/sandbox"
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

// DeriveOptions are the derivation's options from [state]: its rules and
// DuckDB's memory limit.
func (c Config) DeriveOptions() duck.DeriveOptions {
	return duck.DeriveOptions{Rules: c.Rules(), MemoryLimit: c.State.MemoryLimit}
}

// CrawlOptions are the crawler's options from [crawl]: how it names itself
// (the User-Agent of this version), how long a check may take, the
// addresses it never connects to, and how many new hosts one peers list may
// yield (in a checker process too: the pass holds every checker to it
// again, crawl.Pass.MaxNewPerList).
func (c Config) CrawlOptions(version string) crawl.Options {
	cc := c.Crawl
	return crawl.Options{
		UserAgent: cc.UserAgent(version), ProductToken: cc.ProductToken,
		CheckTimeout: cc.CheckTimeout.D(), DenyAddrs: cc.DenyPrefixes(), MaxNewPeers: cc.MaxNewPerList,
	}
}

// PassOptions are a crawl pass's options from [crawl] and [state]: its
// budgets and politeness, the peers lists' schedule, the rules of its
// derivation's views and DuckDB's memory limit in the crawl process. The
// command adds what the run and its flags say: the data directory, the
// time, the hosts of the seed list and the blocklist, the crawler or the
// checker processes (PoolOptions), where output goes.
func (c Config) PassOptions() crawlpass.Options {
	cc := c.Crawl
	return crawlpass.Options{
		MemoryLimit: cc.DuckDBMemoryLimit, SeedList: cc.Seeds,
		Views:        duck.ViewParams{Rules: c.Rules()},
		Peers:        duck.PeersSchedule{Interval: cc.PeersInterval.D(), MinInterval: cc.PeersMinInterval.D(), Conditional: cc.PeersConditionalInterval.D()},
		DomainBudget: cc.DomainBudget, DiscoveredChecks: cc.DiscoveredChecks,
		Pass: crawl.Pass{
			Concurrency: cc.Concurrency, MaxChecks: cc.MaxChecks, Duration: cc.Duration.D(),
			AddressBudget: cc.AddressBudget, MaxNewPerList: cc.MaxNewPerList, MaxNewPerPass: cc.MaxNewPerPass,
		},
	}
}

// PoolOptions are the checker processes' options from [crawl]: one per
// check at once at most, each check's time, the cgroup they run in and
// whether a pass refuses to run them unconfined.
func (c Config) PoolOptions() sandbox.PoolOptions {
	cc := c.Crawl
	return sandbox.PoolOptions{Size: cc.Concurrency, CheckTimeout: cc.CheckTimeout.D(),
		CgroupParent: cc.CheckerCgroup, RequireConfinement: cc.RequireConfinement}
}
