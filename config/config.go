// Package config reads observer.toml, the one configuration file of a site:
// the [site] table for the builder, [crawl] for the crawler, [state] for
// the thresholds of the derived instance states and [serve] for the preview.
// Every setting has a default, so a missing file is a valid configuration;
// an unknown key is an error that names the key and the file, because a
// misspelt setting silently ignored is worse than a refusal.
//
// Only the commands (cmd/) import config: the packages take plain option
// structs, which the commands fill from it through the mappings in
// options.go (BuildSettings for the builder; Rules and DeriveOptions for
// duck; CrawlOptions for the crawler; PassOptions and PoolOptions for a
// crawl pass and its checker processes), adding what the flags say.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"golang.org/x/net/http/httpguts"

	"github.com/fediverse-observer/observer/sandbox"
)

// Config is the whole of observer.toml.
type Config struct {
	Site  Site  `toml:"site"`
	Crawl Crawl `toml:"crawl"`
	State State `toml:"state"`
	Serve Serve `toml:"serve"`
}

// Site configures the static site.
type Site struct {
	Title       string `toml:"title"`
	BaseURL     string `toml:"base_url"`
	Language    string `toml:"language"`
	Description string `toml:"description"`
	Theme       string `toml:"theme"`
	Contact     string `toml:"contact"`
	// UnsafeHTML lets raw HTML in Markdown through, as Hugo's
	// markup.goldmark.renderer.unsafe does. Off by default.
	UnsafeHTML bool `toml:"unsafe_html"`
	// Params are free values that templates read as .Site.Params (keys
	// in any case, as Hugo's).
	Params map[string]any `toml:"params"`

	// Hugo's names for the same settings, so that a hugo.toml's keys can
	// be moved under [site] as they are: baseURL is base_url and
	// languageCode is language (Parse folds them in; both spellings of
	// one is an error).
	HugoBaseURL      string `toml:"baseURL"`
	HugoLanguageCode string `toml:"languageCode"`
	// Copyright is .Site.Copyright, shown in the footer and the RSS feeds.
	Copyright string `toml:"copyright"`
	// Menus are Hugo's menus defined in the config, by menu name; menu
	// is Hugo's other name for them (Parse folds it in).
	Menus    map[string][]MenuEntry `toml:"menus"`
	HugoMenu map[string][]MenuEntry `toml:"menu"`
	// Paginate is Hugo's former name of Pagination.PagerSize.
	Paginate   int        `toml:"paginate"`
	Pagination Pagination `toml:"pagination"`
	// Taxonomies maps singular to plural names; nil means Hugo's default
	// (tag = "tags", category = "categories"), an empty table none.
	Taxonomies map[string]string `toml:"taxonomies"`
	// SummaryLength is the number of words of an automatic summary
	// (Hugo's default, 70, when 0).
	SummaryLength int `toml:"summaryLength"`
}

// MenuEntry is an entry of a menu in the config, with Hugo's keys.
type MenuEntry struct {
	Name       string         `toml:"name"`
	URL        string         `toml:"url"`
	PageRef    string         `toml:"pageRef"`
	Weight     int            `toml:"weight"`
	Parent     string         `toml:"parent"`
	Identifier string         `toml:"identifier"`
	Pre        string         `toml:"pre"`
	Post       string         `toml:"post"`
	Title      string         `toml:"title"`
	Params     map[string]any `toml:"params"`
}

// Pagination is Hugo's [pagination] table.
type Pagination struct {
	PagerSize int    `toml:"pagerSize"` // 10 when 0
	Path      string `toml:"path"`      // "page" when empty
}

// Crawl configures the crawl pass.
type Crawl struct {
	// ProductToken is the robots.txt product token and the first word of the
	// User-Agent. Admins opt out by disallowing it.
	ProductToken string `toml:"product_token"`
	// ContactURL goes into the User-Agent so admins can reach the operator.
	ContactURL string `toml:"contact_url"`
	// Seeds is the seed list's path; Load takes a relative one (as
	// Blocklist's) from the config file's directory, so that a site works
	// from any working directory.
	Seeds        string   `toml:"seeds"`
	Concurrency  int      `toml:"concurrency"`
	MaxChecks    int      `toml:"max_checks"` // 0: no limit
	Duration     Duration `toml:"duration"`   // time budget of one pass
	CheckTimeout Duration `toml:"check_timeout"`
	// PeersInterval is how often a peers list that named no new host
	// lately is fetched; PeersMinInterval how often one that keeps naming
	// new hosts may be, if its server gives validators (a conditional
	// fetch of an unchanged list costs a 304). Between the two, a list
	// earns its rate by the hosts first discovered through it within the
	// last PeersInterval (duck/sql/due.sql). PeersConditionalInterval is
	// how often a quiet list whose server gives validators is fetched:
	// conditionally, so an unchanged list costs a 304 (taken between the
	// two others).
	PeersInterval            Duration `toml:"peers_interval"`
	PeersMinInterval         Duration `toml:"peers_min_interval"`
	PeersConditionalInterval Duration `toml:"peers_conditional_interval"`
	// DiscoveredChecks caps how many hosts discovered in a pass it checks
	// in the same pass (0: none, they wait for a later pass); the domain
	// and address budgets apply to them as to the due list.
	DiscoveredChecks int `toml:"discovered_checks"`
	// DomainBudget caps how many new hosts of one registrable domain are
	// checked per pass, so subdomain farms cost little.
	DomainBudget int `toml:"domain_budget"`
	// AddressBudget caps requests to one IPv4 address or IPv6 /64 per pass
	// (0: no limit), each MiB read from the network counting as one more:
	// a /64 is routinely one machine or LAN.
	AddressBudget int `toml:"address_budget"`
	// MaxNewPerList caps the new hosts kept from one peers list in one
	// check, and MaxNewPerPass those recorded by one pass: what one source
	// (or a few) can add to the known set, which every later pass checks
	// and keeps in memory. What is dropped is counted in the passes view.
	MaxNewPerList int `toml:"max_new_per_list"`
	MaxNewPerPass int `toml:"max_new_per_pass"`
	// Blocklist is the operator's blocklist file ("": none).
	Blocklist string `toml:"blocklist"`
	// DuckDBMemoryLimit bounds DuckDB's memory in the crawl process, which
	// reads the due list and writes the snapshots (its memory_limit; past
	// it, DuckDB spills to data/tmp). The derivation before the pass runs
	// in a child process of its own, under state.memory_limit.
	DuckDBMemoryLimit string `toml:"duckdb_memory_limit"`
	// CheckerCgroup, if set, is a cgroup v2 directory delegated to the
	// crawl's user, in which each sandboxed checker gets a cgroup of its own
	// whose memory.max the kernel enforces however the checker allocates.
	// Empty: the checkers' own limits and the orchestrator's watchdog only.
	CheckerCgroup string `toml:"checker_cgroup"`
	// RequireConfinement makes a pass refuse to start when a sandboxed
	// checker could not apply a layer of its confinement (sandbox.
	// RequiredLayers), naming it, instead of logging it and crawling with
	// less. On by default on Linux, where the sandbox is built.
	RequireConfinement bool `toml:"require_confinement"`
	// DenyAddrs are CIDR prefixes the address guard refuses on top of its
	// built-in list of addresses that are not public: a NAT64 prefix inside
	// 2000::/3, the crawler's own public addresses, a provider's metadata
	// service on a public address.
	DenyAddrs []string `toml:"deny_addrs"`
}

// DenyPrefixes are DenyAddrs parsed (Validate has refused any that is not
// a CIDR prefix).
func (c Crawl) DenyPrefixes() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(c.DenyAddrs))
	for _, s := range c.DenyAddrs {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
		}
	}
	return out
}

// State holds the thresholds of the instance state machine and the lists.
type State struct {
	// FailuresToDead: dying (or moving) becomes dead (or moved) after more
	// than this many failed checks in a row...
	FailuresToDead int `toml:"failures_to_dead"`
	// ...and when the first of them is at least this old.
	DeadAfter Duration `toml:"dead_after"`
	// ReviveAfter: reviving becomes live after staying alive this long.
	ReviveAfter Duration `toml:"revive_after"`
	// LiveWindow: a host is listed as live if it was alive within this window.
	LiveWindow Duration `toml:"live_window"`
	// NewWindow: a host is new if its first alive check is this recent...
	NewWindow Duration `toml:"new_window"`
	// ...and it was not already known during the observer's first Warmup.
	Warmup Duration `toml:"warmup"`
	// Check intervals and their jitter (±).
	ActiveInterval   Duration `toml:"active_interval"`
	ActiveJitter     Duration `toml:"active_jitter"`
	InactiveInterval Duration `toml:"inactive_interval"`
	InactiveJitter   Duration `toml:"inactive_jitter"`
	// BackoffMax caps the interval of hosts that back off: dead ones
	// (inactive_interval doubled with each failed check past the one that
	// made them dead) and checked ones never alive (active_interval
	// doubled with each check).
	BackoffMax Duration `toml:"backoff_max"`
	// DiscoveryDelay: new discoveries are due at a random time within this
	// delay, except during the observer's first Warmup, when they are due at once.
	DiscoveryDelay Duration `toml:"discovery_delay"`
	// MemoryLimit bounds DuckDB's memory while it derives the states and
	// answers queries (a crawl's derivation before its pass, build, sql,
	// serve), e.g. "1GB"; past it, DuckDB spills to data/tmp. Empty means
	// DuckDB's default, 80% of the machine's memory. 1GB is the edge for a
	// full derivation of a million hosts × 30 days, which may run out of
	// memory at it; the default, 1.5GB, holds it (docs/benchmarks.md).
	MemoryLimit string `toml:"memory_limit"`
}

// Serve configures the live preview.
type Serve struct {
	Port int `toml:"port"`
}

// Default returns the configuration used when observer.toml is missing or
// silent. The thresholds and the schedule follow the reference crawler the
// project started from (docs/data.md gives the rules).
func Default() Config {
	return Config{
		Site: Site{
			Title:       "Fediverse Observer",
			BaseURL:     "http://localhost:1313/",
			Language:    "en",
			Description: "Newly created Fediverse instances, found by a polite crawler.",
			Theme:       "default",
		},
		Crawl: Crawl{
			ProductToken:     "FediverseObserver",
			ContactURL:       "https://github.com/fediverse-observer/observer",
			Seeds:            "data/seeds.txt",
			Concurrency:      64,
			Duration:         Duration(90 * time.Minute),
			CheckTimeout:     Duration(60 * time.Second),
			PeersInterval:    Duration(14 * 24 * time.Hour),
			PeersMinInterval: Duration(time.Hour),
			// Measured on the spread model (docs/benchmarks.md).
			PeersConditionalInterval: Duration(12 * time.Hour),
			DomainBudget:             10,
			DiscoveredChecks:         20_000,
			AddressBudget:            50,
			MaxNewPerList:            2000,
			MaxNewPerPass:            100_000,
			Blocklist:                "data/blocklist.txt",
			// The orchestrator's memory goal is 1 GiB with a million hosts;
			// DuckDB would otherwise keep far more (docs/benchmarks.md).
			DuckDBMemoryLimit: "256MB",
			// Elsewhere than Linux checkers cannot be confined at all.
			RequireConfinement: sandbox.Confines,
		},
		State: State{
			FailuresToDead:   6,
			DeadAfter:        Duration(7 * 24 * time.Hour),
			ReviveAfter:      Duration(7 * 24 * time.Hour),
			LiveWindow:       Duration(7 * 24 * time.Hour),
			NewWindow:        Duration(30 * 24 * time.Hour),
			Warmup:           Duration(7 * 24 * time.Hour),
			ActiveInterval:   Duration(29 * time.Hour),
			ActiveJitter:     Duration(2 * time.Hour),
			InactiveInterval: Duration(167 * time.Hour),
			InactiveJitter:   Duration(11*time.Hour + 30*time.Minute),
			BackoffMax:       Duration(90 * 24 * time.Hour),
			DiscoveryDelay:   Duration(4 * time.Hour),
			// DuckDB's own default, 80% of the machine's memory, let a
			// crawl's derivation of ten million known hosts take 1.6 GiB
			// and of twenty million 3.1 GiB, past the unit's MemoryMax;
			// a full derivation of a million hosts x 30 days needs this
			// much (docs/benchmarks.md).
			MemoryLimit: "1.5GB",
		},
		Serve: Serve{Port: 1313},
	}
}

// DefaultFile is the config file read when none is named: observer.toml in
// the working directory, when it exists.
const DefaultFile = "observer.toml"

// LoadNamed reads the config file a command was given (--config), which
// must exist, or else DefaultFile, read when it exists.
func LoadNamed(named string) (Config, error) {
	if named != "" {
		return Load(named, true)
	}
	return Load(DefaultFile, false)
}

// InUse is the config file LoadNamed(named) reads, and "" when there is
// none, every setting being a default.
func InUse(named string) string {
	if named != "" {
		return named
	}
	if _, err := os.Stat(DefaultFile); err == nil {
		return DefaultFile
	}
	return ""
}

// SiteDir is the site directory (content/, layouts/, static/, themes/) of
// the config file named: its directory, so that a site builds from
// anywhere, or the working directory when none was named.
func SiteDir(named string) string {
	if named == "" {
		return "."
	}
	return filepath.Dir(named)
}

// Load reads path over the defaults. A missing file is not an error when
// mustExist is false (the default path); a file named explicitly must exist.
// The files the config names (crawl.seeds, crawl.blocklist) are taken from
// the config file's directory when relative.
func Load(path string, mustExist bool) (Config, error) {
	cfg := Default()
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !mustExist {
			cfg.relativeTo(filepath.Dir(path))
			return cfg, nil
		}
		return cfg, fmt.Errorf("read config %s: %w", path, err)
	}
	if err := Parse(data, &cfg); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	cfg.relativeTo(filepath.Dir(path))
	return cfg, nil
}

// relativeTo takes the relative paths of the files the config names as
// relative to dir.
func (c *Config) relativeTo(dir string) {
	for _, p := range []*string{&c.Crawl.Seeds, &c.Crawl.Blocklist} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
}

// Parse decodes TOML over cfg, rejecting unknown keys and invalid values.
// A UTF-8 byte order mark, which some editors write, is not part of it.
func Parse(data []byte, cfg *Config) error {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if err := checkTypes(data); err != nil {
		return err
	}
	before := cfg.Site
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) && len(strict.Errors) > 0 {
			keys := make([]string, 0, len(strict.Errors))
			for _, e := range strict.Errors {
				keys = append(keys, strings.Join(e.Key(), "."))
			}
			return fmt.Errorf("unknown key %s", strings.Join(keys, ", "))
		}
		var derr *toml.DecodeError
		if errors.As(err, &derr) {
			row, col := derr.Position()
			msg := strings.TrimPrefix(derr.Error(), "toml: ")
			// Some of go-toml's messages (duplicate keys) name the key already.
			if key := derr.Key(); len(key) > 0 && !strings.Contains(msg, strings.Join(key, ".")) {
				return fmt.Errorf("line %d, column %d: %s: %s", row, col, canonicalKey(key), msg)
			}
			return fmt.Errorf("line %d, column %d: %s", row, col, msg)
		}
		return err
	}
	if err := foldHugoKeys(&cfg.Site, before); err != nil {
		return err
	}
	if len(cfg.Site.Params) == 0 {
		// go-toml reads an empty [site.params] table as nil but
		// `params = {}` as an empty map; one form, so that a config written
		// back reads the same.
		cfg.Site.Params = nil
	}
	if len(cfg.Crawl.DenyAddrs) == 0 {
		cfg.Crawl.DenyAddrs = nil // likewise for `deny_addrs = []`
	}
	return cfg.Validate()
}

// foldHugoKeys moves Hugo's spelling of a setting into the observer's,
// refusing a file that gives both different values.
func foldHugoKeys(s *Site, before Site) error {
	if s.HugoBaseURL != "" {
		if s.BaseURL != before.BaseURL && s.BaseURL != s.HugoBaseURL {
			return fmt.Errorf("site.baseURL and site.base_url are the same setting, given twice (%q and %q): keep one", s.HugoBaseURL, s.BaseURL)
		}
		s.BaseURL, s.HugoBaseURL = s.HugoBaseURL, ""
	}
	if s.HugoLanguageCode != "" {
		if s.Language != before.Language && s.Language != s.HugoLanguageCode {
			return fmt.Errorf("site.languageCode and site.language are the same setting, given twice (%q and %q): keep one", s.HugoLanguageCode, s.Language)
		}
		s.Language, s.HugoLanguageCode = s.HugoLanguageCode, ""
	}
	if s.HugoMenu != nil {
		if s.Menus != nil {
			return fmt.Errorf("site.menu and site.menus are the same setting, given twice: keep one")
		}
		s.Menus, s.HugoMenu = s.HugoMenu, nil
	}
	if s.Paginate != 0 && s.Pagination.PagerSize == 0 {
		s.Pagination.PagerSize = s.Paginate
	}
	return nil
}

// Validate rejects values no pass or build could work with, and those the
// crawler would read as something else: a negative budget would mean no
// budget at all, and a zero interval or a jitter as long as its interval
// would recheck a host in every pass, breaking the politeness promised in
// docs/security.md.
func (c Config) Validate() error {
	for _, s := range []struct {
		key string
		err error
		got any
	}{
		{"crawl.concurrency", CheckConcurrency(c.Crawl.Concurrency), c.Crawl.Concurrency},
		{"crawl.max_checks", CheckMaxChecks(c.Crawl.MaxChecks), c.Crawl.MaxChecks},
		{"crawl.duration", CheckDuration(c.Crawl.Duration.D()), c.Crawl.Duration.D()},
		{"serve.port", CheckPort(c.Serve.Port), c.Serve.Port},
	} {
		if s.err != nil {
			return fmt.Errorf("%s %v, got %v", s.key, s.err, s.got)
		}
	}
	switch {
	case c.Site.Pagination.PagerSize < 0 || c.Site.Paginate < 0:
		return fmt.Errorf("site.pagination.pagerSize must not be negative, got %d", min(c.Site.Pagination.PagerSize, c.Site.Paginate))
	case c.Site.SummaryLength < 0:
		return fmt.Errorf("site.summaryLength must not be negative, got %d", c.Site.SummaryLength)
	case strings.Contains(c.Site.Pagination.Path, "/") || c.Site.Pagination.Path == "." || c.Site.Pagination.Path == "..":
		return fmt.Errorf("site.pagination.path must be one path element such as page, got %q", c.Site.Pagination.Path)
	case c.Crawl.CheckTimeout <= 0:
		return fmt.Errorf("crawl.check_timeout must be positive, got %s", c.Crawl.CheckTimeout.D())
	case c.Crawl.PeersInterval <= 0:
		return fmt.Errorf("crawl.peers_interval must be positive, got %s", c.Crawl.PeersInterval.D())
	case c.Crawl.DiscoveredChecks < 0:
		return fmt.Errorf("crawl.discovered_checks must not be negative, got %d", c.Crawl.DiscoveredChecks)
	case c.Crawl.DomainBudget < 0:
		return fmt.Errorf("crawl.domain_budget must not be negative, got %d", c.Crawl.DomainBudget)
	case c.Crawl.AddressBudget < 0:
		return fmt.Errorf("crawl.address_budget must not be negative, got %d", c.Crawl.AddressBudget)
	case c.Crawl.MaxNewPerList < 1 || c.Crawl.MaxNewPerList > MaxNewPerListLimit:
		return fmt.Errorf("crawl.max_new_per_list must be between 1 and %d, got %d", MaxNewPerListLimit, c.Crawl.MaxNewPerList)
	case c.Crawl.MaxNewPerPass < 1:
		return fmt.Errorf("crawl.max_new_per_pass must be positive, got %d", c.Crawl.MaxNewPerPass)
	case c.Crawl.ProductToken == "" || strings.ContainsAny(c.Crawl.ProductToken, " /") ||
		!httpguts.ValidHeaderFieldValue(c.Crawl.ProductToken):
		return fmt.Errorf("crawl.product_token must be one word without '/' or control characters, got %q", c.Crawl.ProductToken)
	case !httpguts.ValidHeaderFieldValue(c.Crawl.ContactURL):
		// Both go into the User-Agent, which Go's client refuses to send
		// with a control character in it: every check of every pass would
		// fail, and be recorded as failed. A multi-line TOML string ends in
		// a newline.
		return fmt.Errorf("crawl.contact_url must not contain control characters such as a line break, got %q", c.Crawl.ContactURL)
	case c.State.DeadAfter < 0:
		return fmt.Errorf("state.dead_after must not be negative, got %s", c.State.DeadAfter.D())
	case c.State.ReviveAfter < 0:
		return fmt.Errorf("state.revive_after must not be negative, got %s", c.State.ReviveAfter.D())
	case c.State.LiveWindow <= 0:
		// A zero window would list no host as live, ever.
		return fmt.Errorf("state.live_window must be positive, got %s", c.State.LiveWindow.D())
	case c.State.NewWindow <= 0:
		return fmt.Errorf("state.new_window must be positive, got %s", c.State.NewWindow.D())
	case c.State.Warmup < 0:
		return fmt.Errorf("state.warmup must not be negative, got %s", c.State.Warmup.D())
	case c.State.FailuresToDead < 0:
		return fmt.Errorf("state.failures_to_dead must not be negative, got %d", c.State.FailuresToDead)
	case c.State.ActiveInterval <= 0:
		return fmt.Errorf("state.active_interval must be positive, got %s", c.State.ActiveInterval.D())
	case c.State.InactiveInterval <= 0:
		return fmt.Errorf("state.inactive_interval must be positive, got %s", c.State.InactiveInterval.D())
	case c.State.ActiveJitter < 0 || c.State.ActiveJitter >= c.State.ActiveInterval:
		return fmt.Errorf("state.active_jitter must be less than state.active_interval (%s), got %s",
			c.State.ActiveInterval.D(), c.State.ActiveJitter.D())
	case c.State.InactiveJitter < 0 || c.State.InactiveJitter >= c.State.InactiveInterval:
		return fmt.Errorf("state.inactive_jitter must be less than state.inactive_interval (%s), got %s",
			c.State.InactiveInterval.D(), c.State.InactiveJitter.D())
	case c.State.BackoffMax < c.State.ActiveInterval || c.State.BackoffMax < c.State.InactiveInterval:
		return fmt.Errorf("state.backoff_max must be at least state.active_interval (%s) and state.inactive_interval (%s), got %s",
			c.State.ActiveInterval.D(), c.State.InactiveInterval.D(), c.State.BackoffMax.D())
	case c.Crawl.PeersMinInterval <= 0 || c.Crawl.PeersMinInterval > c.Crawl.PeersInterval:
		return fmt.Errorf("crawl.peers_min_interval must be positive and at most crawl.peers_interval (%s), got %s",
			c.Crawl.PeersInterval.D(), c.Crawl.PeersMinInterval.D())
	case c.Crawl.PeersConditionalInterval <= 0:
		return fmt.Errorf("crawl.peers_conditional_interval must be positive, got %s", c.Crawl.PeersConditionalInterval.D())
	case c.Site.Theme == "" || strings.ContainsAny(c.Site.Theme, `/\`) || c.Site.Theme == "." || c.Site.Theme == "..":
		return fmt.Errorf("site.theme must be a directory name, got %q", c.Site.Theme)
	case c.Crawl.CheckerCgroup != "" && !filepath.IsAbs(c.Crawl.CheckerCgroup):
		return fmt.Errorf("crawl.checker_cgroup must be an absolute path (a cgroup v2 directory like /sys/fs/cgroup/observer), got %q", c.Crawl.CheckerCgroup)
	case !validMemorySize(c.Crawl.DuckDBMemoryLimit):
		return fmt.Errorf("crawl.duckdb_memory_limit must be empty (no limit) or a size from 32MB to 1PB like 256MB or 1GiB, got %q", c.Crawl.DuckDBMemoryLimit)
	case badPrefix(c.Crawl.DenyAddrs) != "":
		return fmt.Errorf("crawl.deny_addrs must hold CIDR prefixes such as \"64:ff9b::/96\" or \"192.0.2.10/32\", got %q", badPrefix(c.Crawl.DenyAddrs))
	case !validMemorySize(c.State.MemoryLimit):
		return fmt.Errorf("state.memory_limit must be empty (no limit) or a size from 32MB to 1PB like 1GB or 512MiB, got %q", c.State.MemoryLimit)
	}
	return nil
}

// badPrefix is the first of ss that is not a CIDR prefix, or "".
func badPrefix(ss []string) string {
	for _, s := range ss {
		if _, err := netip.ParsePrefix(s); err != nil {
			return s
		}
	}
	return ""
}

// The rules of the settings a command's flag can stand in for (observer
// crawl's -concurrency, -max-checks and -duration, observer serve's -port):
// each says what is wrong with a value, nil when nothing is, for the config
// file's error and the flag's alike.

// CheckConcurrency is crawl.concurrency's rule.
func CheckConcurrency(n int) error {
	if n < 1 || n > MaxConcurrency {
		return fmt.Errorf("must be between 1 and %d", MaxConcurrency)
	}
	return nil
}

// CheckMaxChecks is crawl.max_checks's rule (0 is no limit).
func CheckMaxChecks(n int) error {
	if n < 0 {
		return errors.New("must not be negative")
	}
	return nil
}

// CheckDuration is crawl.duration's rule: crawl.Pass reads zero as no time
// budget, and a pass without one would outlast the interval between passes.
func CheckDuration(d time.Duration) error {
	if d <= 0 {
		return errors.New("must be positive")
	}
	return nil
}

// CheckPort is serve.port's rule (0 picks a free port).
func CheckPort(n int) error {
	if n < 0 || n > 65535 {
		return errors.New("must be between 0 and 65535")
	}
	return nil
}

// MaxNewPerListLimit bounds crawl.max_new_per_list: the most discoveries a
// sandboxed checker's result carries (sandbox.MaxDiscoveries).
const MaxNewPerListLimit = 200_000

// MaxConcurrency bounds crawl.concurrency (and --concurrency): each check
// at once is a goroutine, a connection and, with process isolation, a
// checker process; far beyond this the orchestrator would run out of memory
// before its first check instead of saying why.
const MaxConcurrency = 10_000

// memorySize is what DuckDB's memory_limit accepts, less its rarely used
// spellings: a number and a unit of 1000^i (KB…TB) or 1024^i (KiB…TiB).
var memorySize = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?) ?(([KMGT])(i?)B)$`)

// The sizes a memory limit may take: below 32 MB DuckDB cannot run the
// derivation's queries at all (it fails with "Out of Memory" on the first
// one, naming no setting), and past 1 PB the number means nothing.
const (
	minMemoryLimit = 32e6
	maxMemoryLimit = 1e15
)

// validMemorySize reports whether s is empty (no limit) or a size DuckDB
// takes and can work within, so that a typo or an unusable size is refused
// with the setting's name, before any DuckDB message about a SET statement
// the user never wrote.
func validMemorySize(s string) bool {
	if s == "" {
		return true
	}
	m := memorySize.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return false
	}
	base := 1000.0
	if m[5] == "i" {
		base = 1024
	}
	n *= math.Pow(base, float64(strings.Index("KMGT", m[4])+1))
	return n >= minMemoryLimit && n <= maxMemoryLimit
}

// UserAgent is the header the crawler sends: product token, version and a
// contact URL, as crawler operators conventionally do.
func (c Crawl) UserAgent(version string) string {
	return fmt.Sprintf("%s/%s (+%s)", c.ProductToken, version, c.ContactURL)
}

// Duration is a time.Duration written in TOML as a string: Go's syntax
// ("90s", "29h") plus a "d" suffix for whole days ("7d"). It stays an int64
// underneath so that callers convert to and from time.Duration, which lets
// go-toml store a bare TOML integer in it as nanoseconds: Parse refuses one
// before decoding (checkTypes).
type Duration time.Duration

// D returns the standard library value.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// ParseDuration accepts Go durations and whole days ("30d").
func ParseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok && days != "" {
		var n int
		if _, err := fmt.Sscanf(days, "%d", &n); err == nil && fmt.Sprint(n) == days && n >= 0 {
			if time.Duration(n) > math.MaxInt64/(24*time.Hour) {
				// n days would overflow time.Duration.
				return 0, fmt.Errorf("invalid duration %q: too long", s)
			}
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (want e.g. 90s, 29h or 7d)", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("invalid duration %q: negative", s)
	}
	return v, nil
}
