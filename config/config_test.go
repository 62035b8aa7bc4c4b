package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
)

func TestMissingDefaultFileGivesDefaults(t *testing.T) {
	cfg, err := config.Load(filepath.Join(t.TempDir(), "observer.toml"), false)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Site.Theme != "default" || cfg.State.NewWindow.D() != 30*24*time.Hour {
		t.Fatalf("defaults not applied: %+v", cfg)
	}
}

func TestMissingExplicitFileIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.toml")
	_, err := config.Load(path, true)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("want error naming %s, got %v", path, err)
	}
}

func TestUnknownKeyNamesKeyAndFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "observer.toml")
	os.WriteFile(path, []byte("[site]\ntitle = \"x\"\ntheem = \"dark\"\n"), 0o644)
	_, err := config.Load(path, true)
	if err == nil || !strings.Contains(err.Error(), "site.theem") || !strings.Contains(err.Error(), path) {
		t.Fatalf("want error naming site.theem and %s, got %v", path, err)
	}
}

func TestValuesOverrideDefaults(t *testing.T) {
	var cfg = config.Default()
	err := config.Parse([]byte(`
[site]
title = "Mine"
[crawl]
concurrency = 3
check_timeout = "5s"
[state]
new_window = "14d"
`), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Site.Title != "Mine" || cfg.Crawl.Concurrency != 3 || cfg.Crawl.CheckTimeout.D() != 5*time.Second || cfg.State.NewWindow.D() != 14*24*time.Hour {
		t.Fatalf("values not applied: %+v", cfg)
	}
	if cfg.Site.Theme != "default" {
		t.Fatalf("unset key lost its default: %q", cfg.Site.Theme)
	}
}

func TestInvalidValues(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"[crawl]\nconcurrency = 0", "crawl.concurrency"},
		{"[crawl]\ncheck_timeout = \"soon\"", "invalid duration"},
		{"[site]\ntheme = \"../etc\"", "site.theme"},
		{"[crawl]\nproduct_token = \"a b\"", "product_token"},
		{"[crawl]\nproduct_token = \"Fedi\\u0001Obs\"", "crawl.product_token"},
		{"[crawl]\ncontact_url = \"\"\"\nhttps://example.org/observer\n\"\"\"", "crawl.contact_url"},
		{"[site\n", "line 1"},
		{"[state]\nmemory_limit = \"80%\"", "state.memory_limit"},
		{"[state]\nmemory_limit = \"1G\"", "state.memory_limit"},
		{"[crawl]\nduckdb_memory_limit = \"lots\"", "crawl.duckdb_memory_limit"},
		{"[crawl]\ndeny_addrs = [\"192.0.2.1\"]", `crawl.deny_addrs must hold CIDR prefixes such as "64:ff9b::/96" or "192.0.2.10/32", got "192.0.2.1"`},
		{"[crawl]\ndeny_addrs = [\"10.0.0.0/8\", \"nat64\"]", `got "nat64"`},
		{"[crawl]\nrequire_confinement = \"yes\"", "crawl.require_confinement"},
	} {
		cfg := config.Default()
		err := config.Parse([]byte(tc.toml), &cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: want error containing %q, got %v", tc.toml, tc.want, err)
		}
	}
}

func TestMemoryLimits(t *testing.T) {
	for _, v := range []string{"", "1GB", "512MiB", "1.5GB", "300 MB", "2TiB", "32MB", "1000TB"} {
		cfg := config.Default()
		if err := config.Parse([]byte("[state]\nmemory_limit = \""+v+"\""), &cfg); err != nil {
			t.Errorf("%q: %v", v, err)
		} else if cfg.State.MemoryLimit != v {
			t.Errorf("%q: read as %q", v, cfg.State.MemoryLimit)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "90s": 90 * time.Second, "29h": 29 * time.Hour, "0d": 0} {
		got, err := config.ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"d", "1.5d", "-1h", "xd", ""} {
		if _, err := config.ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

// A bare number for a duration has no unit; go-toml would store it in the
// int64 under Duration as nanoseconds, and a 5ns check timeout fails every
// check of a pass.
func TestDurationWithoutQuotesIsRefused(t *testing.T) {
	for _, tc := range []struct{ toml, key, line string }{
		{"[crawl]\ncheck_timeout = 5", "crawl.check_timeout", "line 2, column 17"},
		{"[crawl]\nconcurrency = 3\nduration = 45", "crawl.duration", "line 3, column 12"},
		{"[state]\nactive_interval = 0", "state.active_interval", "line 2"},
		{"crawl.peers_interval = 7", "crawl.peers_interval", "line 1"},
		{"crawl = { check_timeout = 5 }", "crawl.check_timeout", "line 1"},
		// go-toml matches keys ignoring case, so the check must too.
		{"[Crawl]\nCheck_Timeout = 5", "crawl.check_timeout", "line 2"},
		{"[crawl]\ncheck_timeout = 1.5", "crawl.check_timeout", "line 2"},
		{"[crawl]\ncheck_timeout = true", "crawl.check_timeout", "line 2"},
	} {
		cfg := config.Default()
		err := config.Parse([]byte(tc.toml), &cfg)
		if err == nil || !strings.Contains(err.Error(), tc.key) || !strings.Contains(err.Error(), tc.line) ||
			!strings.Contains(err.Error(), `"90s"`) {
			t.Errorf("%q: want error naming %s at %s and asking for e.g. \"90s\", got %v", tc.toml, tc.key, tc.line, err)
		}
	}
}

// A misspelt duration is reported at its key, not only at its position.
func TestInvalidDurationNamesKey(t *testing.T) {
	cfg := config.Default()
	err := config.Parse([]byte("[crawl]\ncheck_timeout = \"soon\""), &cfg)
	if err == nil || !strings.Contains(err.Error(), "line 2, column 17: crawl.check_timeout: invalid duration \"soon\"") {
		t.Fatalf("want the key and position of the invalid duration, got %v", err)
	}
}

func TestTypeErrorNamesKeyFileAndWantedType(t *testing.T) {
	path := filepath.Join(t.TempDir(), "observer.toml")
	os.WriteFile(path, []byte("[crawl]\nconcurrency = \"5\"\n"), 0o644)
	_, err := config.Load(path, true)
	if err == nil || !strings.Contains(err.Error(), path) ||
		!strings.Contains(err.Error(), `line 2, column 15: crawl.concurrency must be an integer, got the string "5"`) {
		t.Fatalf("want error naming %s, crawl.concurrency and the wanted type, got %v", path, err)
	}
	for _, tc := range []struct{ toml, want string }{
		{"[site]\nunsafe_html = \"yes\"", `site.unsafe_html must be true or false, got the string "yes"`},
		{"[site]\ntitle = 5", "site.title must be a string, got the number 5"},
		{"[crawl]\nconcurrency = 5.5", "crawl.concurrency must be an integer, got the number 5.5"},
		{"[crawl]\nconcurrency = [1]", "crawl.concurrency must be an integer, got an array"},
		{"crawl.concurrency = \"5\"", "crawl.concurrency must be an integer"},
		{"crawl = { concurrency = \"5\" }", "crawl.concurrency must be an integer"},
		{"[site]\nparams = 5", "site.params must be a table, got the number 5"},
		{"site = 5", "site must be a table, got the number 5"},
		{"[crawl.concurrency]\nx = 1", "crawl.concurrency must be an integer, got a table"},
		{"[crawl.concurrency]", "line 1, column 8: crawl.concurrency must be an integer, got a table"},
		{"crawl.concurrency.x = 1", "crawl.concurrency must be an integer, got a table"},
		// Errors go-toml finds itself carry the key too.
		{"[serve]\nport = 99999999999999999999", "line 2, column 8: serve.port: "},
		{"[crawl]\nconcurrency = 1\nconcurrency = 2", "line 3, column 1: key concurrency is already defined"},
		// The same setting under keys that differ in case: go-toml would
		// fill it from both.
		{"[Crawl]\nConcurrency = 1\nconcurrency = 2", "line 3: crawl.concurrency is set twice, as Crawl.concurrency and on line 2 as Crawl.Concurrency"},
		{"[crawl]\nconcurrency = 1\n[Crawl]\nconcurrency = 2", "line 4: crawl.concurrency is set twice, as Crawl.concurrency and on line 2 as crawl.concurrency"},
		{"crawl = { concurrency = 1, Concurrency = 2 }", "crawl.concurrency is set twice"},
		// go-toml matches keys ignoring case but reports them as written;
		// the error names the key as documented, which is what a user
		// looks up.
		{"[Serve]\nPort = 99999999999999999999", "line 2, column 8: serve.port: "},
		{"SERVE.port = 99999999999999999999", "line 1, column 14: serve.port: "},
		{"[Crawl]\nCheck_Timeout = \"soon\"", `line 2, column 17: crawl.check_timeout: invalid duration "soon"`},
	} {
		cfg := config.Default()
		err := config.Parse([]byte(tc.toml), &cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "struct field") {
			t.Errorf("%q: want error containing %q, got %v", tc.toml, tc.want, err)
		}
	}
}

// Site params are free-form: the type check must not refuse what templates
// may read.
func TestParamsTakeAnyValue(t *testing.T) {
	cfg := config.Default()
	err := config.Parse([]byte("[site.params]\nn = 5\ns = \"x\"\nd = 1979-05-27\nlist = [1, \"a\"]\ninline = { a = 1 }\n[site.params.nested]\nb = true\n"), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Site.Params["n"] != int64(5) || cfg.Site.Params["nested"].(map[string]any)["b"] != true {
		t.Fatalf("params not decoded: %#v", cfg.Site.Params)
	}
}

func TestOutOfRangeValues(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"[crawl]\nduration = \"0s\"", "crawl.duration must be positive"},
		{"[serve]\nport = 70000", "serve.port must be between 0 and 65535, got 70000"},
		{"[serve]\nport = -1", "serve.port must be between 0 and 65535, got -1"},
		{"[crawl]\ndomain_budget = -1", "crawl.domain_budget must not be negative, got -1"},
		{"[crawl]\naddress_budget = -1", "crawl.address_budget must not be negative, got -1"},
		{"[crawl]\nmax_checks = -1", "crawl.max_checks must not be negative, got -1"},
		{"[crawl]\nmax_new_per_list = 0", "crawl.max_new_per_list must be between 1 and 200000, got 0"},
		{"[crawl]\nmax_new_per_list = 200001", "crawl.max_new_per_list must be between 1 and 200000, got 200001"},
		{"[crawl]\nmax_new_per_pass = 0", "crawl.max_new_per_pass must be positive, got 0"},
		{"[crawl]\nconcurrency = -1", "crawl.concurrency must be between 1 and 10000, got -1"},
		{"[crawl]\npeers_interval = \"0s\"", "crawl.peers_interval must be positive"},
		{"[crawl]\npeers_conditional_interval = \"0s\"", "crawl.peers_conditional_interval must be positive"},
		{"[state]\nactive_interval = \"0s\"", "state.active_interval must be positive"},
		{"[state]\ninactive_interval = \"0d\"", "state.inactive_interval must be positive"},
		{"[state]\nactive_interval = \"2h\"\nactive_jitter = \"2h\"", "state.active_jitter must be less than state.active_interval (2h0m0s), got 2h0m0s"},
		{"[state]\ninactive_jitter = \"200h\"", "state.inactive_jitter must be less than state.inactive_interval (167h0m0s), got 200h0m0s"},
		// A jitter as long as its interval could make a host due again at
		// once; the bound itself is out, for both intervals.
		{"[state]\ninactive_interval = \"7d\"\ninactive_jitter = \"7d\"", "state.inactive_jitter must be less than state.inactive_interval (168h0m0s), got 168h0m0s"},
		// A zero check timeout would fail every check at once.
		{"[crawl]\ncheck_timeout = \"0s\"", "crawl.check_timeout must be positive, got 0s"},
		{"[crawl]\nconcurrency = 0", "crawl.concurrency must be between 1 and 10000, got 0"},
		{"[crawl]\nconcurrency = 10001", "crawl.concurrency must be between 1 and 10000, got 10001"},
		{"[state]\nfailures_to_dead = -1", "state.failures_to_dead must not be negative, got -1"},
		{"[crawl]\nconcurrency = 2000000000", "crawl.concurrency must be between 1 and 10000, got 2000000000"},
		{"[state]\nlive_window = \"0s\"", "state.live_window must be positive"},
		{"[state]\nnew_window = \"0d\"", "state.new_window must be positive"},
		{"[state]\nwarmup = \"-1h\"", "state.warmup: invalid duration"},
		// DuckDB cannot work in these, or they mean nothing.
		{"[state]\nmemory_limit = \"1KB\"", "state.memory_limit must be empty (no limit) or a size from 32MB to 1PB"},
		{"[state]\nmemory_limit = \"30MiB\"", "state.memory_limit"},
		{"[state]\nmemory_limit = \"99999999TB\"", "state.memory_limit"},
		{"[crawl]\nduckdb_memory_limit = \"2000TB\"", "crawl.duckdb_memory_limit"},
		{"[crawl]\nchecker_cgroup = \"observer\"", "crawl.checker_cgroup must be an absolute path"},
	} {
		cfg := config.Default()
		err := config.Parse([]byte(tc.toml), &cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: want error containing %q, got %v", tc.toml, tc.want, err)
		}
	}
}

// The bounds themselves are valid: port 0 lets the system pick one, a zero
// budget means none, as max_checks = 0 does, and no jitter is no jitter.
// One check at a time and MaxConcurrency are both allowed, and the state
// delays may be zero: dead or revived at once, and no warm-up.
func TestBoundaryValuesAreValid(t *testing.T) {
	for _, s := range []string{
		"[crawl]\nconcurrency = 1",
		fmt.Sprintf("[crawl]\nconcurrency = %d", config.MaxConcurrency),
		"[state]\ndead_after = \"0s\"\nrevive_after = \"0s\"\nwarmup = \"0s\"",
		"[state]\ninactive_interval = \"7d\"\ninactive_jitter = \"167h59m59s\"",
		"[crawl]\ncheck_timeout = \"1ns\"",
		"[serve]\nport = 0",
		"[serve]\nport = 65535",
		"[crawl]\ndomain_budget = 0\naddress_budget = 0\nmax_checks = 0",
		"[state]\nactive_jitter = \"0s\"\ninactive_jitter = \"0s\"\nfailures_to_dead = 0",
		"[state]\nactive_interval = \"2h\"\nactive_jitter = \"119m\"",
	} {
		cfg := config.Default()
		if err := config.Parse([]byte(s), &cfg); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
}

// Validate is also called on configurations built in code (build.Build), so
// it checks the values, not only what Parse let through.
func TestValidateChecksValuesSetInCode(t *testing.T) {
	cfg := config.Default()
	cfg.Serve.Port = 70000
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "serve.port") {
		t.Errorf("port 70000: want error naming serve.port, got %v", err)
	}
	cfg = config.Default()
	cfg.Crawl.Duration = 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "crawl.duration") {
		t.Errorf("zero duration: want error naming crawl.duration, got %v", err)
	}
	// TOML durations cannot be negative; values set in code can.
	for name, set := range map[string]func(*config.State){
		"state.dead_after":   func(s *config.State) { s.DeadAfter = -1 },
		"state.revive_after": func(s *config.State) { s.ReviveAfter = -1 },
		"state.warmup":       func(s *config.State) { s.Warmup = -1 },
	} {
		cfg = config.Default()
		set(&cfg.State)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), name+" must not be negative") {
			t.Errorf("negative %s: got %v", name, err)
		}
	}
}

// Editors that write a byte order mark do not make a config unreadable.
func TestByteOrderMarkIsIgnored(t *testing.T) {
	cfg := config.Default()
	if err := config.Parse([]byte("\xef\xbb\xbf[crawl]\nconcurrency = 7\n"), &cfg); err != nil || cfg.Crawl.Concurrency != 7 {
		t.Fatalf("concurrency %d, err %v", cfg.Crawl.Concurrency, err)
	}
}

// The shipped observer.toml shows every default, as its header says: read
// over nothing, it gives Default() exactly.
func TestShippedConfigIsTheDefault(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "observer.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	if err := config.Parse(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, config.Default()) {
		t.Errorf("observer.toml reads as\n%+v\nDefault() is\n%+v", cfg, config.Default())
	}
}

// crawl.deny_addrs reach the crawler as prefixes, masked; confinement is
// required by default where the sandbox is built, and can be let go.
func TestDenyAddrsAndRequireConfinement(t *testing.T) {
	cfg := config.Default()
	if cfg.Crawl.RequireConfinement != (runtime.GOOS == "linux") {
		t.Errorf("require_confinement defaults to %v on %s", cfg.Crawl.RequireConfinement, runtime.GOOS)
	}
	err := config.Parse([]byte("[crawl]\nrequire_confinement = false\ndeny_addrs = [\"64:ff9b::/96\", \"203.0.113.7/24\"]\n"), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Crawl.DenyPrefixes()
	if cfg.Crawl.RequireConfinement || len(got) != 2 || got[0].String() != "64:ff9b::/96" || got[1].String() != "203.0.113.0/24" {
		t.Errorf("require_confinement %v, deny prefixes %v", cfg.Crawl.RequireConfinement, got)
	}
}

// Every [state] key reaches duck's rules, each to its own field.
func TestRulesMapEveryStateKey(t *testing.T) {
	cfg := config.Default()
	err := config.Parse([]byte(`
[state]
failures_to_dead = 7
dead_after = "1h"
revive_after = "2h"
live_window = "3h"
new_window = "4h"
warmup = "5h"
active_interval = "6h"
active_jitter = "30m"
inactive_interval = "8h"
inactive_jitter = "45m"
backoff_max = "10h"
discovery_delay = "11h"
`), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := duck.Rules{FailuresToDead: 7, DeadAfter: time.Hour, ReviveAfter: 2 * time.Hour, LiveWindow: 3 * time.Hour,
		NewWindow: 4 * time.Hour, Warmup: 5 * time.Hour, ActiveInterval: 6 * time.Hour, ActiveJitter: 30 * time.Minute,
		InactiveInterval: 8 * time.Hour, InactiveJitter: 45 * time.Minute, BackoffMax: 10 * time.Hour, DiscoveryDelay: 11 * time.Hour}
	if got := cfg.Rules(); got != want {
		t.Fatalf("Rules() = %+v, want %+v", got, want)
	}
}

// The files a config names are found from the config file's directory
// whatever the working directory, unless absolute; with no file, from the
// directory observer.toml was looked for in.
func TestLoadTakesNamedFilesFromTheConfigDir(t *testing.T) {
	dir := t.TempDir()
	abs := filepath.Join(t.TempDir(), "blocked.txt")
	path := filepath.Join(dir, "site", "observer.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("[crawl]\nseeds = \"lists/seeds.txt\"\nblocklist = \""+abs+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "site", "lists", "seeds.txt"); cfg.Crawl.Seeds != want {
		t.Errorf("seeds %q, want %q", cfg.Crawl.Seeds, want)
	}
	if cfg.Crawl.Blocklist != abs {
		t.Errorf("blocklist %q, want %q as given", cfg.Crawl.Blocklist, abs)
	}
	cfg, err = config.Load(filepath.Join(dir, "none", "observer.toml"), false)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "none", "data", "blocklist.txt"); cfg.Crawl.Blocklist != want {
		t.Errorf("default blocklist %q, want %q", cfg.Crawl.Blocklist, want)
	}
	cfg, err = config.Load("observer-missing.toml", false)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Crawl.Seeds != "data/seeds.txt" {
		t.Errorf("default seeds without a config dir %q, want data/seeds.txt", cfg.Crawl.Seeds)
	}
}

// A named config file must exist and is the one in use; with none named,
// observer.toml in the working directory is read when it exists. The site
// is the named file's directory, or the working directory.
func TestTheConfigFileInUse(t *testing.T) {
	t.Chdir(t.TempDir())
	if got := config.InUse(""); got != "" {
		t.Errorf("InUse(\"\") without observer.toml = %q, want \"\"", got)
	}
	if _, err := config.LoadNamed(""); err != nil {
		t.Errorf("LoadNamed(\"\") without observer.toml: %v", err)
	}
	if _, err := config.LoadNamed("other.toml"); err == nil || !strings.Contains(err.Error(), "other.toml") {
		t.Errorf("LoadNamed of a missing named file: %v, want an error naming it", err)
	}
	if err := os.WriteFile(config.DefaultFile, []byte("[crawl]\nconcurrency = 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := config.InUse(""); got != config.DefaultFile {
		t.Errorf("InUse(\"\") with observer.toml = %q", got)
	}
	if cfg, err := config.LoadNamed(""); err != nil || cfg.Crawl.Concurrency != 5 {
		t.Errorf("LoadNamed(\"\") read concurrency %d, %v; want observer.toml's 5", cfg.Crawl.Concurrency, err)
	}
	if got := config.InUse("site/x.toml"); got != "site/x.toml" {
		t.Errorf("InUse of a named file = %q", got)
	}
	if config.SiteDir("") != "." || config.SiteDir(filepath.Join("a", "b.toml")) != "a" {
		t.Errorf("SiteDir: %q, %q", config.SiteDir(""), config.SiteDir(filepath.Join("a", "b.toml")))
	}
}

// Every [crawl] key a crawl pass, its crawler or its checker processes
// take reaches its option, each to its own field, and [state]'s memory
// limit the derivation's.
func TestCrawlMappingsCarryEveryKey(t *testing.T) {
	cfg := config.Default()
	err := config.Parse([]byte(`
[crawl]
contact_url = "https://example.org/about"
product_token = "testbot"
seeds = "s.txt"
concurrency = 11
max_checks = 12
duration = "13m"
check_timeout = "14s"
peers_interval = "15h"
peers_min_interval = "16m"
peers_conditional_interval = "22h"
discovered_checks = 17
domain_budget = 18
address_budget = 19
max_new_per_list = 20
max_new_per_pass = 21
duckdb_memory_limit = "222MB"
checker_cgroup = "/sys/fs/cgroup/x"
require_confinement = false
deny_addrs = ["203.0.113.0/24"]
[state]
memory_limit = "2GB"
`), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.CrawlOptions("v1")
	if c.UserAgent != cfg.Crawl.UserAgent("v1") || c.ProductToken != "testbot" || c.CheckTimeout != 14*time.Second ||
		c.MaxNewPeers != 20 || len(c.DenyAddrs) != len(cfg.Crawl.DenyPrefixes()) {
		t.Errorf("CrawlOptions = %+v", c)
	}
	p := cfg.PassOptions()
	if p.MemoryLimit != "222MB" || p.SeedList != cfg.Crawl.Seeds || p.Views.Rules != cfg.Rules() ||
		p.Peers.Interval != 15*time.Hour || p.Peers.MinInterval != 16*time.Minute || p.Peers.Conditional != 22*time.Hour || p.DiscoveredChecks != 17 || p.DomainBudget != 18 {
		t.Errorf("PassOptions = %+v", p)
	}
	if q := p.Pass; q.Concurrency != 11 || q.MaxChecks != 12 || q.Duration != 13*time.Minute ||
		q.AddressBudget != 19 || q.MaxNewPerList != 20 || q.MaxNewPerPass != 21 {
		t.Errorf("PassOptions().Pass = %+v", q)
	}
	if o := cfg.PoolOptions(); o.Size != 11 || o.CheckTimeout != 14*time.Second || o.CgroupParent != "/sys/fs/cgroup/x" || o.RequireConfinement {
		t.Errorf("PoolOptions = %+v", o)
	}
	if d := cfg.DeriveOptions(); d.MemoryLimit != "2GB" || d.Rules != cfg.Rules() {
		t.Errorf("DeriveOptions = %+v", d)
	}
}
