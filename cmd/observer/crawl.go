package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/hostname"
	"github.com/fediverse-observer/observer/lockfile"
	"github.com/fediverse-observer/observer/sandbox"
)

func runCrawl(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "crawl", "[flags]")
	var c common
	var n network
	c.register(fs)
	n.register(fs)
	maxChecks := fs.Int("max-checks", 0, "stop after this many checks, 0 = no limit (default: crawl.max_checks from the config)")
	var duration durationFlag
	fs.Var(&duration, "duration", "time budget of the pass, a `duration` like 90m, 2h or 1d (default: crawl.duration from the config)")
	concurrency := fs.Int("concurrency", 0, "checks at once, at least 1 (default: crawl.concurrency from the config)")
	isolation := fs.String("isolation", defaultIsolation(), "where checks run: process (sandboxed checker processes) or none (in this process, for debugging)")
	flushChecks := fs.Int("flush-checks", 10_000, "write buffered checks to disk after this many (they are also written every 30 s)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	set := givenFlags(fs)
	switch {
	case *isolation != "process" && *isolation != "none":
		return usagef("invalid -isolation %q: want process or none", *isolation)
	case *flushChecks < 1:
		return usagef("invalid -flush-checks %d: must be at least 1", *flushChecks)
	case *maxChecks < 0:
		return usagef("invalid -max-checks %d: must not be negative (0 = no limit)", *maxChecks)
	case set["duration"] && duration.d == 0:
		// As crawl.duration: a pass without a budget would outlast the
		// interval between passes.
		return usagef("invalid -duration 0: must be positive")
	case set["concurrency"] && *concurrency < 1:
		return usagef("invalid -concurrency %d: must be at least 1", *concurrency)
	}
	cfg, err := c.loadConfig()
	if err != nil {
		return err
	}
	if set["max-checks"] {
		cfg.Crawl.MaxChecks = *maxChecks
	}
	if set["duration"] {
		cfg.Crawl.Duration = config.Duration(duration.d)
	}
	if set["concurrency"] {
		cfg.Crawl.Concurrency = *concurrency
	}
	log, err := c.logger(e.stderr)
	if err != nil {
		return err
	}
	opts, crawler, err := n.crawler(cfg, log)
	if err != nil {
		return err
	}
	blocked, err := loadBlocklist(cfg, c.config)
	if err != nil {
		return err
	}

	store, err := duck.Open(ctx, c.data, duck.Options{Create: true, Logger: log, MemoryLimit: cfg.Crawl.DuckDBMemoryLimit})
	if err != nil {
		return err
	}
	defer store.Close()
	lock, err := lockfile.Acquire(filepath.Join(store.Dir(), ".lock"))
	if err != nil {
		return err
	}
	defer lock.Release()
	now := c.at()
	passID := duck.NewPassID(now)
	writer, err := store.NewWriter(passID, duck.WriterOptions{FlushChecks: *flushChecks})
	if err != nil {
		return err
	}
	// Whatever happens below, what was recorded reaches disk: the final
	// flush must not be cancelled by the signal that ended the pass.
	flushed := false
	defer func() {
		if !flushed {
			writer.Close(context.WithoutCancel(ctx))
		}
	}()

	if err := store.CreateViews(ctx, duck.ViewParams{Now: now}); err != nil {
		return err
	}
	known := crawl.NewKnownSet(0)
	var knownHosts []string // for the checker processes, which drop known peers themselves
	if err := store.KnownHosts(ctx, func(h string) {
		known.Add(h)
		if *isolation == "process" {
			knownHosts = append(knownHosts, h)
		}
	}); err != nil {
		return err
	}
	seeded, err := addSeeds(ctx, cfg, c.config, known, writer, now)
	if err != nil {
		return err
	}
	if known.Len() == 0 {
		return fmt.Errorf("no hosts known in %s and no seed list at %s: add some with observer add HOST", store.Dir(), seedsPath(cfg, c.config))
	}
	if seeded > 0 {
		// The seeds must be on disk before the schedule is derived.
		if err := writer.Flush(ctx); err != nil {
			return err
		}
	}
	// The schedule lives in the derived state: fold in what earlier passes
	// (and observer add) wrote, then read who is due.
	if err := deriveInChild(ctx, e, c); err != nil {
		return err
	}
	if err := store.CreateViews(ctx, duck.ViewParams{Now: now, State: cfg.State, Blocklist: blocked.Entries()}); err != nil {
		return err
	}
	// The due list, less what this pass must not check: blocklisted hosts,
	// and new hosts past their registrable domain's budget (they stay due
	// and are taken a few at a time by later passes).
	var due []string
	peers := map[string]crawl.PeersDue{}
	budget := crawl.NewDomainBudget(cfg.Crawl.DomainBudget)
	blockedDue, overBudget := 0, 0
	if err := store.DueHosts(ctx, now, cfg.Crawl.PeersInterval.D(), func(d duck.DueHost) {
		switch {
		case blocked.Blocked(d.Host):
			blockedDue++
			return
		case d.New && !budget.Admit(d.Host):
			overBudget++
			return
		}
		due = append(due, d.Host)
		// Only what differs from "fetch it, unconditionally" is kept, so a
		// fresh pass over a million new hosts holds no map entry for them.
		if pd := (crawl.PeersDue{Fetch: d.FetchPeers, ETag: d.PeersETag, LastModified: d.PeersLastModified}); pd != (crawl.PeersDue{Fetch: true}) {
			peers[d.Host] = pd
		}
	}); err != nil {
		return err
	}
	log.Info("crawl pass starting", "pass", passID, "due", len(due), "blocklisted", blockedDue, "over_domain_budget", overBudget,
		"known", known.Len(), "seeded", seeded, "concurrency", cfg.Crawl.Concurrency, "max_checks", cfg.Crawl.MaxChecks,
		"duration", cfg.Crawl.Duration.D())

	var checker crawl.Checker = crawler
	if *isolation == "process" {
		pool, err := sandbox.NewPool(ctx, sandbox.PoolOptions{Args: checkerArgs(c, n), Size: cfg.Crawl.Concurrency,
			Known: knownHosts, CheckTimeout: opts.CheckTimeout, Logger: log})
		if err != nil {
			return fmt.Errorf("start sandboxed checkers (--isolation none runs checks in-process): %w", err)
		}
		defer pool.Close()
		checker = pool
	}
	knownHosts = nil
	prog := newProgress(writer, len(due), cfg.Crawl.Duration.D())
	reportCtx, stopReport := context.WithCancel(ctx)
	reported := make(chan struct{})
	go func() {
		defer close(reported)
		prog.report(reportCtx, e.stderr, log, c.quiet)
	}()
	pass := crawl.Pass{
		Checker:     checker,
		Sink:        prog,
		Known:       known,
		Concurrency: cfg.Crawl.Concurrency,
		MaxChecks:   cfg.Crawl.MaxChecks,
		Duration:    cfg.Crawl.Duration.D(),
		Now:         now,
		PassID:      passID,
		Peers: func(host string) crawl.PeersDue {
			if pd, ok := peers[host]; ok {
				return pd
			}
			return crawl.PeersDue{Fetch: true}
		},
		Resolve:       perAddress(opts, crawler, log),
		AddressBudget: cfg.Crawl.AddressBudget,
		Logger:        log,
	}
	sum, runErr := pass.Run(ctx, due)
	stopReport()
	<-reported
	flushed = true
	// The writer's error is sticky: when the pass stopped on it, it is
	// already in runErr and is not repeated.
	if err := writer.Close(context.WithoutCancel(ctx)); err != nil && !errors.Is(runErr, err) {
		return errors.Join(runErr, fmt.Errorf("write snapshots: %w", err))
	}
	sum.Write(e.stdout)
	var cut error
	switch {
	case runErr != nil:
	case ctx.Err() != nil:
		cut = cutShortError{"interrupted; finished checks were kept"}
	case sum.NotStarted > 0:
		cut = cutShortError{fmt.Sprintf("%d due hosts left for a later pass (budget reached)", sum.NotStarted)}
	}
	record := passRecord(sum, len(due), cut)
	record.Blocklisted, record.OverDomainBudget = int64(blockedDue), int64(overBudget)
	if err := store.WritePass(context.WithoutCancel(ctx), record); err != nil {
		return errors.Join(runErr, fmt.Errorf("record pass: %w", err))
	}
	if runErr != nil {
		return runErr
	}
	return cut
}

// passRecord turns the crawler's summary into the data/passes row.
func passRecord(sum crawl.Summary, due int, cut error) observer.Pass {
	p := observer.Pass{
		PassID:     sum.PassID,
		StartedAt:  sum.Started,
		EndedAt:    sum.Started.Add(sum.Duration),
		Due:        int64(due),
		Checked:    int64(sum.Checks),
		ByOutcome:  map[observer.Outcome]int64{},
		Discovered: int64(sum.Discovered),
		Bytes:      sum.Bytes,
		NotStarted: int64(sum.NotStarted),

		SkippedAddressBudget:   int64(sum.SkippedAddressBudget),
		Addresses:              int64(sum.Addresses),
		BusiestAddressRequests: int64(sum.BusiestAddressRequests),
		AddressesOverBudget:    int64(sum.AddressesOverBudget),
	}
	for o, n := range sum.ByOutcome {
		p.ByOutcome[o] = int64(n)
	}
	p.Errors = p.ByOutcome[observer.OutcomeError] + p.ByOutcome[observer.OutcomeCheckerFailed]
	if cut != nil {
		p.CutShort = cut.(cutShortError).reason
	}
	return p
}

// seedsPath resolves crawl.seeds against the config file's directory, so a
// site directory works from anywhere.
func seedsPath(cfg config.Config, configFile string) string {
	return resolve(cfg.Crawl.Seeds, configFile)
}

func resolve(path, configFile string) string {
	if filepath.IsAbs(path) || configFile == "" {
		return path
	}
	return filepath.Join(filepath.Dir(configFile), path)
}

// addSeeds records the seed list's hosts that are not yet known. A missing
// seed list is fine once the observer knows hosts; an invalid line is an
// error naming the file and line, and nothing is recorded.
func addSeeds(ctx context.Context, cfg config.Config, configFile string, known *crawl.KnownSet, w *duck.Writer, now time.Time) (int, error) {
	path := seedsPath(cfg, configFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("seed list: %w", err)
	}
	defer f.Close()
	hosts, errs := hostname.ReadList(f)
	if len(errs) > 0 {
		return 0, fmt.Errorf("seed list %s: %w", path, errs[0])
	}
	var ds []observer.Discovery
	for _, h := range hosts {
		if known.Add(h) {
			ds = append(ds, observer.Discovery{Host: h, DiscoveredAt: now, Via: observer.ViaSeed})
		}
	}
	return len(ds), w.Discover(ctx, ds...)
}

// perAddress is the pass's resolver for per-address politeness, or nil to
// turn it off. A --connect-to rule for every host (HOST *) sends every host
// to one address, as the simulated fediverse and staging setups do: limiting
// that one address would make the whole pass one check at a time, so the
// limit is off then, and the log says so.
func perAddress(opts crawl.Options, crawler *crawl.Crawler, log *slog.Logger) func(context.Context, string) (netip.AddrPort, error) {
	for _, ct := range opts.ConnectTo {
		if ct.Host == "" {
			log.Info("per-address politeness is off: a --connect-to rule sends every host to one address")
			return nil
		}
	}
	return crawler.Resolve
}
