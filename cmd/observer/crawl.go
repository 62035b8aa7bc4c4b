package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/hostname"
	"github.com/fediverse-observer/observer/internal/cliflag"
	"github.com/fediverse-observer/observer/lockfile"
	"github.com/fediverse-observer/observer/sandbox"
)

func runCrawl(ctx context.Context, e env, args []string) error {
	f, err := parseCrawlFlags(e, args)
	if err != nil {
		return err
	}
	// A signal before the first check is an interrupted pass like one
	// during the checks (exit 3), not the failure its context.Canceled
	// error would otherwise be reported as.
	beforeChecks := func(err error) error {
		if ctx.Err() != nil && !errors.As(err, new(cutShortError)) {
			return cutShortError{"interrupted before the first check"}
		}
		return err
	}
	r, err := setUpCrawl(ctx, e, f)
	if err != nil {
		return beforeChecks(err)
	}
	defer r.close(ctx)

	known, err := r.loadKnownHosts(ctx)
	if err != nil {
		return beforeChecks(err)
	}
	defer known.table.Close()
	// The schedule lives in the derived state: fold in what earlier passes
	// (and observer add) wrote, then read who is due.
	if err := deriveInChild(ctx, e, f.common); err != nil {
		return beforeChecks(err)
	}
	due, err := r.readDueHosts(ctx)
	if err != nil {
		return beforeChecks(err)
	}
	r.logPassStart(known, due)

	checker, stopCheckers, err := r.startCheckers(ctx, known.table)
	if err != nil {
		return beforeChecks(err)
	}
	defer stopCheckers()
	sum, runErr := r.runPass(ctx, checker, known.table.Set(), due)
	return r.finish(ctx, sum, runErr, due)
}

// crawlFlags are the crawl command's flags, checked. maxChecks, duration
// and concurrency stand in for the config's settings only where given.
type crawlFlags struct {
	common      common
	network     network
	maxChecks   int
	duration    durationFlag
	concurrency int
	isolation   string
	flushChecks int
	given       map[string]bool
}

func parseCrawlFlags(e env, args []string) (crawlFlags, error) {
	var f crawlFlags
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
	case f.maxChecks < 0:
		return crawlFlags{}, cliflag.Usagef("invalid -max-checks %d: must not be negative (0 = no limit)", f.maxChecks)
	case f.given["duration"] && f.duration.d == 0:
		// As crawl.duration: a pass without a budget would outlast the
		// interval between passes.
		return crawlFlags{}, cliflag.Usagef("invalid -duration 0: must be positive")
	case f.given["concurrency"] && (f.concurrency < 1 || f.concurrency > config.MaxConcurrency):
		return crawlFlags{}, cliflag.Usagef("invalid -concurrency %d: must be between 1 and %d", f.concurrency, config.MaxConcurrency)
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
		cfg.Crawl.Duration = config.Duration(f.duration.d)
	}
	if f.given["concurrency"] {
		cfg.Crawl.Concurrency = f.concurrency
	}
}

// crawlRun is one crawl pass as setUpCrawl wired it: what the flags and the
// config ask for, and the data directory the pass writes to.
type crawlRun struct {
	env     env
	flags   crawlFlags
	cfg     config.Config
	log     *slog.Logger
	opts    crawl.Options
	crawler *crawl.Crawler
	blocked *hostname.Blocklist
	seeds   []string // the seed list's hosts, read before anything was created

	store        *duck.Store
	lock         *lockfile.Lock
	writer       *duck.Writer
	writerClosed bool // finish closed the writer
	now          time.Time
	passID       string
}

// setUpCrawl reads the config (with the flags' overrides) and builds the
// logger, the crawler, the blocklist and the seed list, then opens the data
// directory, locked for this pass, with a writer for the pass's snapshots.
// close releases them. Every input is read and checked before the data
// directory is opened: a first run with a bad one must not create it.
func setUpCrawl(ctx context.Context, e env, f crawlFlags) (*crawlRun, error) {
	cfg, log, err := f.common.setup(e)
	if err != nil {
		return nil, err
	}
	f.overrideConfig(&cfg)
	opts, crawler, err := f.network.crawler(cfg, log)
	if err != nil {
		return nil, err
	}
	blocked, err := loadBlocklist(cfg, f.common.config)
	if err != nil {
		return nil, err
	}
	seeds, err := hostname.ReadSeedList(seedsPath(cfg, f.common.config))
	if err != nil {
		return nil, err
	}

	store, err := duck.Open(ctx, f.common.data, duck.Options{Create: true, Logger: log, MemoryLimit: cfg.Crawl.DuckDBMemoryLimit})
	if err != nil {
		return nil, err
	}
	lock, err := lockfile.Acquire(filepath.Join(store.Dir(), ".lock"))
	if err != nil {
		store.Close()
		return nil, err
	}
	now := f.common.at()
	passID := duck.NewPassID(now)
	writer, err := store.NewWriter(passID, duck.WriterOptions{FlushChecks: f.flushChecks})
	if err != nil {
		lock.Release()
		store.Close()
		return nil, err
	}
	return &crawlRun{
		env: e, flags: f, cfg: cfg, log: log, opts: opts, crawler: crawler, blocked: blocked, seeds: seeds,
		store: store, lock: lock, writer: writer, now: now, passID: passID,
	}, nil
}

// close releases the data directory. Whatever happened, what was recorded
// reaches disk: the final flush must not be cancelled by the signal that
// ended the pass.
func (r *crawlRun) close(ctx context.Context) {
	if !r.writerClosed {
		r.writer.Close(context.WithoutCancel(ctx))
	}
	r.lock.Release()
	r.store.Close()
}

// knownHosts are the hosts known before the pass, seeds included.
type knownHosts struct {
	// table is the crawl's one copy of them, shared read-only by the pass
	// and every checker process (docs/security.md, "The known set").
	table  *sandbox.SharedKnown
	seeded int // how many of them the seed list added
}

// loadKnownHosts reads the hosts the data directory knows into the known
// table and records the seed list's new ones. Knowing none is an error: the
// pass would have nothing to check. Close the table after the pass.
func (r *crawlRun) loadKnownHosts(ctx context.Context) (knownHosts, error) {
	// The snapshots alone: the derived state is derived after this, and
	// may be damaged or older than this observer until then.
	if err := r.store.CreateSnapshotViews(ctx); err != nil {
		return knownHosts{}, err
	}
	bound, err := r.store.KnownHostsBound(ctx)
	if err != nil {
		return knownHosts{}, err
	}
	var known knownHosts
	known.table, err = sandbox.BuildSharedKnown(bound+len(r.seeds), func(add func(string) (bool, error)) error {
		var addErr error
		if err := r.store.KnownHosts(ctx, func(h string) {
			if _, err := add(h); err != nil && addErr == nil {
				addErr = err
			}
		}); err != nil {
			return err
		}
		if addErr != nil {
			return addErr
		}
		known.seeded, err = addSeeds(ctx, r.seeds, add, r.writer, r.now)
		return err
	})
	if err != nil {
		return knownHosts{}, err
	}
	if known.table.Len() == 0 {
		known.table.Close()
		return knownHosts{}, fmt.Errorf("no hosts known in %s, and the seed list %s is missing or empty: add some with observer add HOST", r.store.Dir(), seedsPath(r.cfg, r.flags.common.config))
	}
	if known.seeded > 0 {
		// The seeds must be on disk before the schedule is derived.
		if err := r.writer.Flush(ctx); err != nil {
			known.table.Close()
			return knownHosts{}, err
		}
	}
	return known, nil
}

// readDueHosts defines the views over the derived state and reads the due
// list from them, less what this pass must not check (crawl.DueList).
func (r *crawlRun) readDueHosts(ctx context.Context) (*crawl.DueList, error) {
	if err := r.store.CreateViews(ctx, duck.ViewParams{Now: r.now, State: r.cfg.State, Blocklist: r.blocked.Entries()}); err != nil {
		return nil, err
	}
	if r.flags.common.now.Given {
		latest, ok, err := r.store.LatestCheck(ctx)
		if err != nil {
			return nil, err
		}
		if ok && latest.After(r.now) {
			// Not an error (a test of the schedule may go back), but a
			// pass that checks little or nothing should say why.
			r.log.Warn("--now is before the latest recorded check: hosts are due by their schedule from their last check, so few or none are",
				"now", r.now.UTC().Format(time.RFC3339), "latest_check", latest.UTC().Format(time.RFC3339))
		}
	}
	due := crawl.NewDueList(r.blocked.Blocked, r.cfg.Crawl.DomainBudget)
	if err := r.store.DueHosts(ctx, r.now, duck.PeersSchedule{Interval: r.cfg.Crawl.PeersInterval.D(), MinInterval: r.cfg.Crawl.PeersMinInterval.D()}, func(d duck.DueHost) {
		due.Offer(d.Host, d.New, crawl.PeersDue{Fetch: d.FetchPeers, PeersValidators: d.PeersValidators})
	}); err != nil {
		return nil, err
	}
	return due, nil
}

func (r *crawlRun) logPassStart(known knownHosts, due *crawl.DueList) {
	r.log.Info("crawl pass starting", "pass", r.passID, "due", len(due.Hosts), "blocklisted", due.Blocklisted, "over_domain_budget", due.OverDomainBudget,
		"known", known.table.Len(), "known_table_bytes", known.table.Bytes(), "seeded", known.seeded, "concurrency", r.cfg.Crawl.Concurrency, "max_checks", r.cfg.Crawl.MaxChecks,
		"duration", r.cfg.Crawl.Duration.D())
}

// startCheckers returns what runs the pass's checks: the crawler itself
// with --isolation none, else a pool of sandboxed checker processes. stop
// ends them.
func (r *crawlRun) startCheckers(ctx context.Context, known *sandbox.SharedKnown) (checker crawl.Checker, stop func(), err error) {
	if r.flags.isolation != "process" {
		return r.crawler, func() {}, nil
	}
	if os.Geteuid() == 0 {
		r.log.Warn("running as root: each checker drops every capability before it confines itself, but it keeps uid 0, " +
			"whose files only Landlock then keeps it from, and the orchestrator keeps every privilege; " +
			"run observer crawl as a user of its own (docs/operations.md)")
	}
	pool, err := sandbox.NewPool(ctx, sandbox.PoolOptions{Args: checkerArgs(r.flags.common, r.flags.network), Size: r.cfg.Crawl.Concurrency,
		Known: known, CheckTimeout: r.opts.CheckTimeout, CgroupParent: r.cfg.Crawl.CheckerCgroup, Logger: r.log,
		RequireConfinement: r.cfg.Crawl.RequireConfinement})
	var notConfined *sandbox.NotConfinedError
	if errors.As(err, &notConfined) {
		return nil, nil, fmt.Errorf("%w: crawl.require_confinement refuses to crawl without it (set it to false in %s to crawl anyway, less confined)",
			err, cmp.Or(r.flags.common.config, "observer.toml"))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("start sandboxed checkers (--isolation none runs checks in-process): %w", err)
	}
	return pool, func() { pool.Close() }, nil
}

// runPass checks the due hosts, recording each check through the writer and
// reporting progress on stderr until the pass ends.
func (r *crawlRun) runPass(ctx context.Context, checker crawl.Checker, known *crawl.KnownSet, due *crawl.DueList) (crawl.Summary, error) {
	prog := crawl.NewProgress(r.writer, len(due.Hosts), r.cfg.Crawl.Duration.D())
	reportCtx, stopReport := context.WithCancel(ctx)
	reported := make(chan struct{})
	go func() {
		defer close(reported)
		prog.Report(reportCtx, r.env.stderr, r.log, r.flags.common.quiet)
	}()
	// The pass clock starts now, not when the run was set up: the
	// derivation and the checkers' start-up came between, and checked_at
	// is when a check started. A --now is the pass's start as given.
	passStart := r.now
	if !r.flags.common.now.Given {
		passStart = time.Time{}
	}
	pass := crawl.Pass{
		Checker:       checker,
		Sink:          prog,
		Known:         known,
		Concurrency:   r.cfg.Crawl.Concurrency,
		MaxChecks:     r.cfg.Crawl.MaxChecks,
		Duration:      r.cfg.Crawl.Duration.D(),
		Now:           passStart,
		PassID:        r.passID,
		Peers:         due.Peers,
		Resolve:       r.crawler.Resolve,
		AddressBudget: r.cfg.Crawl.AddressBudget,
		MaxNewPerList: r.cfg.Crawl.MaxNewPerList,
		MaxNewPerPass: r.cfg.Crawl.MaxNewPerPass,
		// Hosts found in this pass are checked in it, within its budgets.
		CheckDiscovered: prog.Admitting(due.AdmitDiscovered(r.cfg.Crawl.DiscoveredChecks)),
		Logger:          r.log,
	}
	sum, err := pass.Run(ctx, due.Hosts)
	stopReport()
	<-reported
	return sum, err
}

// finish writes what the pass recorded to disk, prints its summary and
// records it in data/passes. It returns the pass's error, else a
// cutShortError when the pass ended before its due list did.
func (r *crawlRun) finish(ctx context.Context, sum crawl.Summary, runErr error, due *crawl.DueList) error {
	r.writerClosed = true
	// The writer's error is sticky: Close returns it whenever a flush
	// failed, and when the pass stopped on it, it is already in runErr.
	var cutReason string
	if err := r.writer.Close(context.WithoutCancel(ctx)); err != nil {
		if !errors.Is(runErr, err) {
			runErr = errors.Join(runErr, fmt.Errorf("write snapshots: %w", err))
		}
		lost := sum.KeepWritten(r.writer.Written())
		cutReason = fmt.Sprintf("writing the snapshots failed: %d finished checks were not written", lost)
	}
	if err := sum.Write(r.env.stdout); err != nil {
		// The summary is for a person; the pass is recorded regardless.
		r.log.Warn("print the pass summary", "err", err)
	}
	if cutReason == "" && runErr == nil {
		cutReason = sum.CutShort(ctx.Err() != nil)
	}
	if err := r.store.WritePass(context.WithoutCancel(ctx), sum.PassRow(due, cutReason)); err != nil {
		return errors.Join(runErr, fmt.Errorf("record pass: %w", err))
	}
	if runErr != nil {
		return runErr
	}
	if cutReason != "" {
		return cutShortError{cutReason}
	}
	return nil
}

// addSeeds records the seed list's hosts (readSeeds) that are not yet known,
// adding them to the known hosts with add.
func addSeeds(ctx context.Context, hosts []string, add func(string) (bool, error), w *duck.Writer, now time.Time) (int, error) {
	var ds []observer.Discovery
	for _, h := range hosts {
		added, err := add(h)
		if err != nil {
			return 0, err
		}
		if added {
			ds = append(ds, observer.Discovery{Host: h, DiscoveredAt: now, Via: observer.ViaSeed})
		}
	}
	return len(ds), w.Discover(ctx, ds...)
}
