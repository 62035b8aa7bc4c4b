// Package crawlpass runs one crawl pass over a data directory, from the
// hosts it knows to the row that records the pass (data/passes). Run locks
// the data directory, records the seed list's new hosts, has the state
// derived (Options.Derive; DeriveInChild derives in a child process, where
// the derivation's memory is returned when it ends), reads the due list and
// the known hosts from it (in a data directory that knew no host, the seeds
// are both), writes the known hosts into the table the checkers share, runs
// the checks (crawl.Pass) in sandboxed checker processes (started as the
// pass begins, so that their start overlaps all this) or in this one, and
// writes the snapshots, the summary and the passes row. Into a data
// directory that does not exist yet, the seeds' checks start while it is
// created and opened (seedsFirst). The caller reads and checks every input
// (the config, the crawler, the seed list, the blocklist) first: a first
// run with a bad one must not create the data directory.
package crawlpass

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/hostname"
	"github.com/fediverse-observer/observer/lockfile"
	"github.com/fediverse-observer/observer/sandbox"
)

// Options say what one pass does.
type Options struct {
	// Data is the data directory, created when missing; MemoryLimit is
	// DuckDB's in this process (crawl.duckdb_memory_limit), FlushChecks
	// how many checks the writer buffers.
	Data        string
	MemoryLimit string
	FlushChecks int
	// Now is the pass's time; NowGiven says it was given (--now) rather
	// than read from the clock.
	Now      time.Time
	NowGiven bool
	// Seeds are the seed list's hosts, recorded when not yet known;
	// SeedList is its path, named when no host is known at all.
	Seeds    []observer.Host
	SeedList string
	// Blocklist is the operator's (nil: none).
	Blocklist *hostname.Blocklist
	// Views are the views' parameters: their Rules (Now and Blocklist are
	// the pass's).
	Views duck.ViewParams
	// Peers is the peers lists' schedule.
	Peers duck.PeersSchedule
	// DomainBudget caps the due hosts of one registrable domain
	// (crawl.DueList); DiscoveredChecks the hosts discovered in the pass
	// that it checks too.
	DomainBudget     int
	DiscoveredChecks int
	// Pass holds the pass's budgets and politeness (Concurrency,
	// MaxChecks, Duration, Resolve, AddressBudget, MaxNewPerList,
	// MaxNewPerPass); Run fills in the rest.
	Pass crawl.Pass
	// Crawler runs the checks in this process when Pool is nil; Pool
	// starts the sandboxed checker processes (Run fills in Known and
	// Logger).
	Crawler *crawl.Crawler
	Pool    *sandbox.PoolOptions
	// Checker, when set, runs the checks instead of Crawler and Pool: a
	// simulation of the network (the discovery-latency benchmark's model
	// of a million instances), never set by observer crawl.
	Checker crawl.Checker
	// ConfigFile is named when crawl.require_confinement refuses to
	// crawl ("" is observer.toml).
	ConfigFile string
	// Derive folds new snapshots into the derived state, which holds the
	// schedule and the known hosts, before the due list and the known
	// hosts are read (not in a data directory's first pass from its
	// seeds: see dueAndKnownHosts).
	Derive func(context.Context) error
	// Progress is where progress is shown (a terminal, or else the log),
	// unless Quiet; Summary where the pass's summary is printed.
	Progress io.Writer
	Quiet    bool
	Summary  io.Writer
	Logger   *slog.Logger
}

// CutShortError is a pass that ended before its due list did: a budget, a
// signal, a failed write. What it recorded is kept.
type CutShortError struct{ Reason string }

func (c *CutShortError) Error() string { return "pass cut short: " + c.Reason }

// Run runs one pass. It returns a *CutShortError when the pass ended before
// its due list did, including when ctx ended before the first check.
func Run(ctx context.Context, o Options) error {
	beforeChecks := func(err error) error { return BeforeChecks(ctx, err) }
	known, err := sandbox.NewPendingKnown()
	if err != nil {
		return beforeChecks(err)
	}
	defer known.Close()
	// The checker processes start now, beside the reading of the due list
	// and of the known hosts into their table, which they wait for.
	checkers := o.startCheckers(ctx, known)
	defer checkers.stop()
	passID := duck.NewPassID(o.Now)
	checksCtx, cancelChecks := context.WithCancelCause(ctx)
	defer cancelChecks(nil)
	var (
		r   *passRun
		due *crawl.DueList
		// opened is closed once r is open (or failed to open: openErr),
		// the seeds recorded.
		opened  = make(chan struct{})
		openErr error
	)
	defer func() {
		<-opened
		if r != nil {
			r.close(ctx)
		}
	}()
	if o.seedsFirst() {
		// Nothing to read: the seeds are the due list and the known
		// hosts, and the checks start while DuckDB opens the directory.
		due = seedsDue(o.Seeds, nil, o.DomainBudget)
		if err := writeKnown(known, o.Seeds); err != nil {
			close(opened)
			return beforeChecks(err)
		}
		go func() {
			defer close(opened)
			r, openErr = open(ctx, o, passID)
			if openErr == nil {
				_, openErr = r.recordSeeds(ctx)
			}
			if openErr != nil {
				// The checks under way are not recorded.
				cancelChecks(openErr)
				return
			}
			r.logStart(due, known, len(o.Seeds))
		}()
	} else {
		r, err = open(ctx, o, passID)
		close(opened)
		if err != nil {
			return beforeChecks(err)
		}
		seeded, err := r.recordSeeds(ctx)
		if err != nil {
			return beforeChecks(err)
		}
		if due, err = r.dueAndKnownHosts(ctx, seeded, known); err != nil {
			return beforeChecks(err)
		}
		r.logStart(due, known, len(seeded.added))
	}
	checker, err := checkers.ready()
	if err != nil {
		return beforeChecks(err)
	}
	// The checks record into the data directory's writer, waiting for it
	// if it is still being opened.
	sink := sinkFunc(func(ctx context.Context, res observer.Result) error {
		<-opened
		if openErr != nil {
			return openErr
		}
		return r.writer.Record(ctx, res)
	})
	sum, runErr := o.runChecks(checksCtx, passID, sink, checker, known.Set(), due, func() *passRun { <-opened; return r })
	// Killed and reaped while the snapshots are written.
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		checkers.stop()
	}()
	defer func() { <-stopped }()
	<-opened
	if openErr != nil {
		return beforeChecks(openErr)
	}
	return r.finish(ctx, sum, runErr, due)
}

// seedsFirst says whether the pass can check its seeds before it opens the
// data directory: the directory does not exist yet (in one that does), so
// it knows no host, and the seeds are both the due list and the known
// hosts (dueAndKnownHosts's shortcut), none of them named by a blocklist,
// which DuckDB would match. DuckDB's start then overlaps the first checks
// instead of holding them up: it took longer than the checkers' (the
// first-pass benchmark). Should the directory still fail to open, the
// checks stop unrecorded with its error. Another pass creating the same
// directory meanwhile would have to take its lock and finish within the
// few milliseconds this one takes to open it.
func (o Options) seedsFirst() bool {
	if len(o.Seeds) == 0 || o.Blocklist.Len() > 0 || o.Views.Rules.Warmup <= 0 {
		return false
	}
	if _, err := os.Lstat(o.Data); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	parent, err := os.Stat(filepath.Dir(o.Data))
	return err == nil && parent.IsDir()
}

// BeforeChecks is err, which ended a pass before its first check, unless
// ctx ended: a signal before the first check is an interrupted pass like
// one during the checks, not the failure its context.Canceled error would
// otherwise be reported as. The caller uses it for what it prepares before
// Run.
func BeforeChecks(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && !errors.As(err, new(*CutShortError)) {
		return &CutShortError{"interrupted before the first check"}
	}
	return err
}

// passRun is one pass with its data directory open.
type passRun struct {
	Options
	log          *slog.Logger
	store        *duck.Store
	lock         *lockfile.Lock
	writer       *duck.Writer
	writerClosed bool // finish closed the writer
	passID       string
}

// open opens the data directory, locked for this pass, with a writer for
// the pass's snapshots. close releases them.
func open(ctx context.Context, o Options, passID string) (*passRun, error) {
	log := o.logger()
	store, err := duck.Open(ctx, o.Data, duck.Options{Create: true, Logger: log, MemoryLimit: o.MemoryLimit})
	if err != nil {
		return nil, err
	}
	lock, err := lockfile.Acquire(filepath.Join(store.Dir(), ".lock"))
	if err != nil {
		store.Close()
		return nil, err
	}
	writer, err := store.Snapshots.NewWriter(passID, duck.WriterOptions{FlushChecks: o.FlushChecks})
	if err != nil {
		lock.Release()
		store.Close()
		return nil, err
	}
	return &passRun{Options: o, log: log, store: store, lock: lock, writer: writer, passID: passID}, nil
}

// close releases the data directory. Whatever happened, what was recorded
// reaches disk: the final flush must not be cancelled by the signal that
// ended the pass.
func (r *passRun) close(ctx context.Context) {
	if !r.writerClosed {
		r.writer.Close(context.WithoutCancel(ctx))
	}
	r.lock.Release()
	r.store.Close()
}

// seeding is what the pass did with the seed list before deriving.
type seeding struct {
	added []observer.Host // the seed list's hosts not known before, now recorded
	fresh bool            // the data directory knew no host before this pass
}

// recordSeeds records the seed list's hosts that the snapshots do not know
// yet, before the derivation, which makes them due in this pass. Knowing
// no host at all is an error: the pass would have nothing to check.
func (r *passRun) recordSeeds(ctx context.Context) (seeding, error) {
	// The snapshots alone: the derived state is derived after this, and
	// may be damaged or older than this observer until then.
	if err := r.store.Reader.CreateSnapshotViews(ctx); err != nil {
		return seeding{}, err
	}
	knowsAny, err := r.store.Reader.KnowsAnyHost(ctx)
	if err != nil {
		return seeding{}, err
	}
	known := map[observer.Host]bool{}
	if knowsAny {
		if known, err = r.store.Reader.KnownAmong(ctx, r.Seeds); err != nil {
			return seeding{}, err
		}
	}
	s := seeding{fresh: !knowsAny}
	var ds []observer.Discovery
	for _, h := range r.Seeds {
		if !known[h] {
			known[h] = true
			s.added = append(s.added, h)
			ds = append(ds, observer.Discovery{Host: h, DiscoveredAt: r.Now, Via: observer.ViaSeed})
		}
	}
	if s.fresh && len(s.added) == 0 {
		return seeding{}, fmt.Errorf("no hosts known in %s, and the seed list %s is missing or empty: add some with observer add HOST", r.store.Dir(), r.SeedList)
	}
	return s, r.writer.Discover(ctx, ds...)
}

// dueAndKnownHosts are the pass's due list and its known hosts, both read
// from the state derived (by Options.Derive) from the snapshots, the seeds
// just recorded included; close the known table after the pass. The known
// hosts are the derived state's, one row per host, written once into the
// table the pass and every checker process share (docs/security.md, "The
// known set").
//
// A data directory that knew no host before this pass is not derived:
// its state would hold the seeds alone, each never checked and discovered
// now, at the observer's earliest discovery, which the schedule has due at
// once during state.warmup (sql/views/state.sql). The seeds are the due
// list, by name as the schedule orders hosts due at one time, and the known
// hosts; the derivation, which costs a first pass more than the checks of
// its seeds and what they lead to, waits for the next pass.
func (r *passRun) dueAndKnownHosts(ctx context.Context, s seeding, known *sandbox.SharedKnown) (*crawl.DueList, error) {
	if s.fresh && r.Views.Rules.Warmup > 0 {
		// Without a blocklist, as for the hosts the pass discovers
		// (blockedAmong), DuckDB is not asked: the seeds wait for it.
		var blocked map[observer.Host]string
		if r.Blocklist.Len() > 0 {
			if err := r.store.Reader.CreateBlocklistViews(ctx, r.Blocklist.Entries()); err != nil {
				return nil, err
			}
			var err error
			if blocked, err = r.store.Reader.BlockedAmong(ctx, s.added); err != nil {
				return nil, err
			}
		}
		return seedsDue(s.added, blocked, r.DomainBudget), writeKnown(known, s.added)
	}
	if len(s.added) > 0 {
		// The seeds must be on disk before the schedule is derived.
		if err := r.writer.Flush(ctx); err != nil {
			return nil, err
		}
	}
	if err := r.Derive(ctx); err != nil {
		return nil, err
	}
	due, err := r.readDueHosts(ctx)
	if err != nil {
		return nil, err
	}
	n, err := r.store.Reader.KnownHostsCount(ctx)
	if err != nil {
		return nil, err
	}
	err = known.Write(n, func(add func(observer.Host) (bool, error)) error {
		var addErr error
		err := r.store.Reader.KnownHosts(ctx, func(h observer.Host) {
			if _, err := add(h); err != nil && addErr == nil {
				addErr = err
			}
		})
		return cmp.Or(err, addErr)
	})
	return due, err
}

// seedsDue is the due list of a data directory's first pass: its seeds,
// by name as the schedule orders hosts due at one time, less those blocked
// names.
func seedsDue(seeds []observer.Host, blocked map[observer.Host]string, domainBudget int) *crawl.DueList {
	due := crawl.NewDueList(domainBudget)
	for _, h := range slices.Sorted(slices.Values(seeds)) {
		_, isBlocked := blocked[h]
		due.Offer(h, true, isBlocked, crawl.PeersDue{Fetch: true})
	}
	return due
}

// writeKnown writes hosts, a data directory's first pass's seeds, into the
// known table.
func writeKnown(known *sandbox.SharedKnown, hosts []observer.Host) error {
	return known.Write(len(hosts), func(add func(observer.Host) (bool, error)) error {
		for _, h := range hosts {
			if _, err := add(h); err != nil {
				return err
			}
		}
		return nil
	})
}

// readDueHosts defines the views over the derived state and reads the due
// list from them, less what this pass must not check (crawl.DueList).
func (r *passRun) readDueHosts(ctx context.Context) (*crawl.DueList, error) {
	views := r.Views
	views.Now, views.Blocklist = r.Now, r.Blocklist.Entries()
	if err := r.store.Reader.CreateViews(ctx, views); err != nil {
		return nil, err
	}
	if r.NowGiven {
		latest, ok, err := r.store.Reader.LatestCheck(ctx)
		if err != nil {
			return nil, err
		}
		if ok && latest.After(r.Now) {
			// Not an error (a test of the schedule may go back), but a
			// pass that checks little or nothing should say why.
			r.log.Warn("--now is before the latest recorded check: hosts are due by their schedule from their last check, so few or none are",
				"now", r.Now.UTC().Format(time.RFC3339), "latest_check", latest.UTC().Format(time.RFC3339))
		}
	}
	due := crawl.NewDueList(r.DomainBudget)
	if err := r.store.Reader.DueHosts(ctx, r.Now, r.Options.Peers, func(d duck.DueHost) {
		due.Offer(d.Host, d.New, d.Blocked, crawl.PeersDue{Fetch: d.FetchPeers, PeersValidators: d.PeersValidators})
	}); err != nil {
		return nil, err
	}
	return due, nil
}

// checkers is what runs the pass's checks: Options.Checker when set, the
// crawler itself without a Pool, else a pool of sandboxed checker processes,
// which start in the background (startCheckers).
type checkers struct {
	checker  crawl.Checker
	cancel   context.CancelFunc
	started  chan struct{} // closed when the pool's start is over
	pool     *sandbox.Pool
	err      error
	stopOnce sync.Once
}

// startCheckers starts the pass's checkers: one per CPU at once (at most
// crawl.concurrency), whose start, from exec to confinement, overlaps the
// pass's preparation until known, the table they map, is written.
func (o Options) startCheckers(ctx context.Context, known *sandbox.SharedKnown) *checkers {
	c := &checkers{checker: o.Checker, cancel: func() {}, started: make(chan struct{})}
	if c.checker != nil || o.Pool == nil {
		if c.checker == nil {
			c.checker = o.Crawler
		}
		close(c.started)
		return c
	}
	log := o.logger()
	if os.Geteuid() == 0 {
		log.Warn("running as root: each checker drops every capability before it confines itself, but it keeps uid 0, " +
			"whose files only Landlock then keeps it from, and the orchestrator keeps every privilege; " +
			"run observer crawl as a user of its own (docs/operations.md)")
	}
	po := *o.Pool
	po.Known, po.Logger = known, log
	// The pool starts more as checks need them, up to one per CPU without
	// asking whether the CPUs have room: a pass with due hosts for more
	// than one check at once would start them on its first checks.
	po.Prestart = runtime.GOMAXPROCS(0)
	var startCtx context.Context
	startCtx, c.cancel = context.WithCancel(ctx)
	go func() {
		defer close(c.started)
		pool, err := sandbox.NewPool(startCtx, po)
		var notConfined *sandbox.NotConfinedError
		switch {
		case errors.As(err, &notConfined):
			c.err = fmt.Errorf("%w: crawl.require_confinement refuses to crawl without it (set it to false in %s to crawl anyway, less confined)",
				err, cmp.Or(o.ConfigFile, "observer.toml"))
		case err != nil:
			c.err = fmt.Errorf("start sandboxed checkers (--isolation none runs checks in-process): %w", err)
		default:
			c.pool, c.checker = pool, pool
		}
	}()
	return c
}

// ready waits for the checkers' start and returns what runs the checks.
func (c *checkers) ready() (crawl.Checker, error) {
	<-c.started
	return c.checker, c.err
}

// stop ends the checkers, or their start if it is under way.
func (c *checkers) stop() {
	c.stopOnce.Do(func() {
		c.cancel()
		<-c.started
		if c.pool != nil {
			c.pool.Close()
		}
	})
}

// logStart logs what the pass is about to check.
func (r *passRun) logStart(due *crawl.DueList, known *sandbox.SharedKnown, seeded int) {
	r.log.Info("crawl pass starting", "pass", r.passID, "due", len(due.Hosts), "blocklisted", due.Blocklisted, "over_domain_budget", due.OverDomainBudget,
		"known", known.Len(), "known_table_bytes", known.Bytes(), "seeded", seeded, "concurrency", r.Pass.Concurrency, "max_checks", r.Pass.MaxChecks,
		"duration", r.Pass.Duration)
}

// runChecks checks the due hosts of pass passID, recording each check
// through sink and reporting progress until the pass ends; opened waits
// for the data directory, open, and returns it (nil if it failed to open).
func (o Options) runChecks(ctx context.Context, passID string, sink crawl.Sink, checker crawl.Checker, known *crawl.KnownSet, due *crawl.DueList,
	opened func() *passRun) (crawl.Summary, error) {
	log := o.logger()
	prog := crawl.NewProgress(sink, len(due.Hosts), o.Pass.Duration)
	reportCtx, stopReport := context.WithCancel(ctx)
	reported := make(chan struct{})
	go func() {
		defer close(reported)
		prog.Report(reportCtx, o.Progress, log, o.Quiet)
	}()
	pass := o.Pass
	pass.Checker, pass.Sink, pass.Known, pass.Logger = checker, prog, known, log
	pass.PassID, pass.Peers = passID, due.Peers
	// The pass clock starts now, not when the run was set up: the
	// derivation and the checkers' start-up came between, and checked_at
	// is when a check started. A given Now is the pass's start as given.
	pass.Now = time.Time{}
	if o.NowGiven {
		pass.Now = o.Now
	}
	// Hosts found in this pass are checked in it, within its budgets.
	pass.CheckDiscovered = prog.Admitting(due.AdmitDiscovered(o.DiscoveredChecks, o.blockedAmong(ctx, opened)))
	sum, err := pass.Run(ctx, due.Hosts)
	stopReport()
	<-reported
	return sum, err
}

// blockedAmong says which of the hosts a check discovered the blocklist
// names, matched by the views the due list was read with. When it cannot
// say, it counts them all as named: they stay recorded discoveries, which
// the next pass's due list matches again. Without a blocklist it names
// none and asks nothing: that query, one for each check that discovers
// hosts, was a fifth of the million-instance model's CPU.
func (o Options) blockedAmong(ctx context.Context, opened func() *passRun) func([]observer.Host) map[observer.Host]bool {
	return func(hosts []observer.Host) map[observer.Host]bool {
		blocked := map[observer.Host]bool{}
		if o.Blocklist.Len() == 0 {
			return blocked
		}
		named, err := map[observer.Host]string(nil), errors.New("the data directory is not open")
		if r := opened(); r != nil {
			named, err = r.store.Reader.BlockedAmong(ctx, hosts)
		}
		if err != nil && ctx.Err() == nil {
			o.logger().Warn("match discovered hosts against the blocklist; they are left to a later pass", "hosts", len(hosts), "err", err)
		}
		for _, h := range hosts {
			if _, ok := named[h]; ok || err != nil {
				blocked[h] = true
			}
		}
		return blocked
	}
}

// sinkFunc is a function as a crawl.Sink.
type sinkFunc func(context.Context, observer.Result) error

func (f sinkFunc) Record(ctx context.Context, r observer.Result) error { return f(ctx, r) }

// logger is the pass's logger.
func (o Options) logger() *slog.Logger { return cmp.Or(o.Logger, slog.New(slog.DiscardHandler)) }

// finish writes what the pass recorded to disk, prints its summary and
// records it in data/passes. It returns the pass's error, else a
// *CutShortError when the pass ended before its due list did.
func (r *passRun) finish(ctx context.Context, sum crawl.Summary, runErr error, due *crawl.DueList) error {
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
	if err := sum.Write(r.Summary); err != nil {
		// The summary is for a person; the pass is recorded regardless.
		r.log.Warn("print the pass summary", "err", err)
	}
	if cutReason == "" && runErr == nil {
		cutReason = sum.CutShort(ctx.Err() != nil)
	}
	if err := r.store.Snapshots.WritePass(context.WithoutCancel(ctx), sum.PassRow(due, cutReason)); err != nil {
		return errors.Join(runErr, fmt.Errorf("record pass: %w", err))
	}
	if runErr != nil {
		return runErr
	}
	if cutReason != "" {
		return &CutShortError{cutReason}
	}
	return nil
}
