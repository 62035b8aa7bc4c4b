package main

import (
	"context"
	"crypto/x509"

	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/hostname"
	"github.com/fediverse-observer/observer/internal/cliflag"
	"github.com/fediverse-observer/observer/internal/crawlpass"
)

// runCrawl runs one crawl pass (crawlpass.Run) with the settings the
// config and the flags ask for. Every input is read and checked before the
// pass opens the data directory: a first run with a bad one must not create
// it.
func runCrawl(ctx context.Context, e env, args []string) error {
	f, err := parseCrawlFlags(e, args)
	if err != nil {
		return err
	}
	o, err := f.passOptions(e)
	if err != nil {
		return crawlpass.BeforeChecks(ctx, err)
	}
	o.Derive = crawlpass.DeriveInChild(deriveArgs(f.common), e.stderr)
	return crawlpass.Run(ctx, o)
}

// crawlFlags are the crawl command's flags, checked. maxChecks, duration
// and concurrency stand in for the config's settings only where given.
type crawlFlags struct {
	common      common
	network     network
	maxChecks   int
	duration    cliflag.Duration
	concurrency int
	isolation   string
	flushChecks int
	given       map[string]bool
}

func parseCrawlFlags(e env, args []string) (crawlFlags, error) {
	f := crawlFlags{duration: cliflag.Duration{Parse: config.ParseDuration}}
	fs := newFlagSet(e, "crawl", "[flags]")
	f.common.register(fs)
	f.network.register(fs)
	fs.IntVar(&f.maxChecks, "max-checks", 0, "check at most this many due hosts, the rest waiting for a later pass; 0 = no limit (default: crawl.max_checks from the config)")
	fs.Var(&f.duration, "duration", "time budget of the pass, a `duration` like 90m, 2h or 1d (default: crawl.duration from the config)")
	fs.IntVar(&f.concurrency, "concurrency", 0, "checks at once, 1 to 10000 (default: crawl.concurrency from the config)")
	fs.StringVar(&f.isolation, "isolation", defaultIsolation(), "where checks run: process (sandboxed checker processes) or none (in this process, for debugging)")
	fs.IntVar(&f.flushChecks, "flush-checks", 10_000, "write buffered checks to disk after this many (they are also written every 30 s)")
	if err := cliflag.ParseNoArgs(fs, args); err != nil {
		return crawlFlags{}, err
	}
	f.given = cliflag.Given(fs)
	switch {
	case f.isolation != "process" && f.isolation != "none":
		return crawlFlags{}, cliflag.Usagef("invalid -isolation %q: want process or none", f.isolation)
	case f.flushChecks < 1:
		return crawlFlags{}, cliflag.Usagef("invalid -flush-checks %d: must be at least 1", f.flushChecks)
	}
	// The flags that stand in for config settings follow their rules.
	for _, s := range []struct {
		flag string
		err  error
		got  any
	}{
		{"max-checks", config.CheckMaxChecks(f.maxChecks), f.maxChecks},
		{"duration", config.CheckDuration(f.duration.Value), f.duration.Value},
		{"concurrency", config.CheckConcurrency(f.concurrency), f.concurrency},
	} {
		if f.given[s.flag] && s.err != nil {
			return crawlFlags{}, cliflag.Usagef("invalid -%s %v: %v", s.flag, s.got, s.err)
		}
	}
	return f, nil
}

// overrideConfig puts the crawl settings given as flags in place of the
// config's.
func (f crawlFlags) overrideConfig(cfg *config.Config) {
	if f.given["max-checks"] {
		cfg.Crawl.MaxChecks = f.maxChecks
	}
	if f.given["duration"] {
		cfg.Crawl.Duration = config.Duration(f.duration.Value)
	}
	if f.given["concurrency"] {
		cfg.Crawl.Concurrency = f.concurrency
	}
}

// passOptions reads the config (with the flags' overrides) and builds the
// logger, the crawler, the blocklist and the seed list into the pass's
// options.
func (f crawlFlags) passOptions(e env) (crawlpass.Options, error) {
	cfg, log, err := f.common.setup(e)
	if err != nil {
		return crawlpass.Options{}, err
	}
	f.overrideConfig(&cfg)
	if f.isolation == "process" {
		// The checkers make the pass's connections; this process's crawler
		// only resolves names, so it trusts no root (an empty pool fails
		// closed) and spares the system's being parsed before the pass
		// begins. The pool reads them beside its start (PoolOptions.Roots).
		f.network.roots = x509.NewCertPool()
	}
	_, crawler, err := f.network.crawler(cfg, log)
	if err != nil {
		return crawlpass.Options{}, err
	}
	blocked, err := hostname.ReadBlocklistFile(cfg.Crawl.Blocklist)
	if err != nil {
		return crawlpass.Options{}, err
	}
	seeds, err := hostname.ReadSeedList(cfg.Crawl.Seeds)
	if err != nil {
		return crawlpass.Options{}, err
	}
	o := cfg.PassOptions()
	o.Data, o.FlushChecks = f.common.data, f.flushChecks
	o.Now, o.NowGiven = f.common.at(), f.common.now.Given
	o.Seeds, o.Blocklist = seeds, blocked
	o.Crawler, o.Pass.Resolve = crawler, crawler.Resolve
	o.ConfigFile = f.common.config
	o.Progress, o.Quiet, o.Summary, o.Logger = e.stderr, f.common.logging.Quiet, e.stdout, log
	if f.isolation == "process" {
		// The system roots' files are read once, by the pool, rather than
		// by every checker; where crypto/x509 does not load them from files
		// (elsewhere than on Linux), each checker loads its own.
		pool := cfg.PoolOptions()
		pool.Args, pool.ConnectTo = checkerArgs(f.common, f.network), f.network.connectTo
		pool.Roots, pool.RootsArgs = crawl.SystemRootsDER, []string{"-roots-inherited"}
		pool.DropCapabilities = true
		o.Pool = &pool
	}
	return o, nil
}
