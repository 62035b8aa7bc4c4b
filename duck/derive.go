package duck

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fediverse-observer/observer/lockfile"
)

// DeriveOptions configures Derive.
type DeriveOptions struct {
	// Rules are the state machine's thresholds the fold applies.
	Rules Rules
	// MemoryLimit, if set, bounds DuckDB's memory for the derivation (e.g.
	// "1GB"): past it, DuckDB spills to data/tmp.
	MemoryLimit string
	// Full rebuilds from every snapshot instead of folding only the files
	// the previous derivation had not seen.
	Full bool

	// For tests: fold every host with windows (fold_runs), split the
	// windowed fold into buckets of this many checks (0: the default), keep
	// retired files for this long (nil: defaultRetiredGrace), and merge the
	// transitions and live events files beyond this many (0: the default).
	windowOnly       bool
	foldBucketChecks int64
	retiredGrace     *time.Duration
	maxDerivedParts  int
	// For tests: hold the new checks of hosts checked more than once in a
	// table up to this many (0: maxSeveralInMemory; below 0: never).
	severalInMemory int64
	// For tests: check snapshot files as if their footers had no null
	// counts.
	noNullCounts bool
	// For tests: key the edge picks and the windowed fold by host name, as
	// when two of the checked hosts' hashes collide.
	keyByHostName bool
	// For tests: keep the alive days as a bitstring whatever the span of
	// the step's days.
	aliveDaysBitstring bool
	// For tests: the fraction of the base's rows up to which a step folds
	// the hosts it touches alone and keeps a delta (0: maxDeltaFraction;
	// below 0: never).
	deltaFraction float64
}

// DeriveReport says what a derivation did.
type DeriveReport struct {
	Full        bool   // whether this was a full rebuild
	FullReason  string // why, when Full was not asked for
	Generation  int64  // the generation now in force
	Files       int    // snapshot files folded by this step
	Hosts       int64  // hosts in the derived state
	Transitions int64  // transitions found by this step
	Windowed    int64  // hosts with new checks folded with windows (fold_runs)
	Windowless  int64  // hosts with several new checks folded without (fold_step)
	OneCheck    int64  // hosts whose one new check was folded onto their carried state (fold_step)
	Duration    time.Duration
}

// defaultMaxDerivedParts is how many transitions (and live events) files a
// derivation lets accumulate, one per incremental step that found any,
// before its own file takes them all in: a derivation follows every crawl
// pass (every 2 hours as deployed) and every build, and `observer
// serve` derives at every flush of a crawl, so without it readers would
// open thousands of small files. A merge rewrites every transition once per
// this many steps.
const defaultMaxDerivedParts = 32

// derivation runs the SQL of one derivation step on one connection: the
// files of sql/derivation, rendered with what the step has learnt so far
// (params: the thresholds, then the span of days and the host key), each
// first run in the order of derivationOrder, and the plumbing between them.
type derivation struct {
	ctx    context.Context
	conn   *sql.Conn
	log    *slog.Logger
	params sqlParams
	// reached is the latest place in derivationOrder a step ran at, and
	// ran the steps that did.
	reached int
	ran     map[string]bool
	// checkFiles are the paths of the step's checks files, and
	// foldsEveryCheck whether fold_checks holds every check of them (a
	// full derivation), so that their footers give its span (hostParams).
	checkFiles      []string
	foldsEveryCheck bool
}

func (s *Deriver) newDerivation(ctx context.Context, conn *sql.Conn, rules Rules) *derivation {
	return &derivation{ctx: ctx, conn: conn, log: s.log, params: rules.foldParams(), reached: -1, ran: map[string]bool{}}
}

// sql renders the step name (a file of sql/derivation) with d.params and
// more, once every step listed before it in derivationOrder may have run:
// running a step listed earlier than one already run is an error, since it
// would read relations that step has not yet defined or has dropped. A step
// may run again (the windowed fold's, once per bucket).
func (d *derivation) sql(name string, more sqlParams) (string, error) {
	at := slices.Index(derivationOrder, name)
	if at < 0 {
		return "", fmt.Errorf("derive: step %s is not in sql/derivation/order.txt", name)
	}
	if at < d.reached && !d.ran[name] {
		return "", fmt.Errorf("derive: step %s runs after %s, against sql/derivation/order.txt", name, derivationOrder[d.reached])
	}
	d.reached, d.ran[name] = max(d.reached, at), true
	params := maps.Clone(d.params)
	maps.Copy(params, more)
	return renderSQL("derivation/"+name+".sql", params)
}

// step runs the step name (see sql).
func (d *derivation) step(name string, more sqlParams) error {
	query, err := d.sql(name, more)
	if err != nil {
		return err
	}
	return d.exec(name, query)
}

// exec runs one piece of the fold (one or more statements), logging how
// long it took under what.
func (d *derivation) exec(what, query string) error {
	timer := startTimer()
	if _, err := d.conn.ExecContext(d.ctx, query); err != nil {
		return fmt.Errorf("derive (%s): %w", what, err)
	}
	timer.log(d.log, what)
	return nil
}

// stepTimer times a piece of a derivation for the debug log: its wall time,
// and the process's CPU time meanwhile, which says more than the wall clock
// on a shared machine (DuckDB's threads are the process's).
type stepTimer struct {
	wall time.Time
	cpu  time.Duration
}

func startTimer() stepTimer { return stepTimer{time.Now(), processCPU()} }

// log logs what as a step that took t's time so far, with attrs.
func (t stepTimer) log(log *slog.Logger, what string, attrs ...any) {
	log.Debug("derive step", append([]any{"step", what, "duration", time.Since(t.wall), "cpu", processCPU() - t.cpu}, attrs...)...)
}

// processCPU is the user and system CPU time of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Derive folds the snapshot files not yet folded into the derived state
// under data/derived, or rebuilds it from every snapshot when opts.Full is
// set (or when there is no previous state, its thresholds differ, a file of
// it or its manifest is damaged, or a new file holds a check older than its
// host's last folded check, which the fold could not place in order). Only
// the files listed at the start are folded, so a crawl writing meanwhile
// loses nothing: its later files are folded next time. Derivations of one
// data directory are serialised by a lock file.
func (s *Deriver) Derive(ctx context.Context, opts DeriveOptions) (DeriveReport, error) {
	start := time.Now()
	rep := DeriveReport{}
	derived := s.path(DerivedDir)
	for _, d := range []string{derived, s.path(TmpDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return rep, fmt.Errorf("derive: %w", err)
		}
	}
	// data/derived is the derivation's own: what stands where its lock
	// file or its directories belong (a directory, a file) is damage to
	// clear, not a reason to fail every later run.
	s.clearInTheWay(filepath.Join(derived, lockFileName), 0)
	lock, err := lockfile.Wait(ctx, filepath.Join(derived, lockFileName), func(held *lockfile.HeldError) {
		s.log.Info("derive: waiting for another derivation of this data directory to finish", "lock", held.Path, "pid", held.PID)
	})
	if err != nil {
		return rep, fmt.Errorf("derive: %w", err)
	}
	defer lock.Release()
	for _, dir := range []string{transitionsDir, liveEventsDir} {
		s.clearInTheWay(filepath.Join(derived, dir), fs.ModeDir)
	}
	// A build or `observer sql` killed while it spilled left its spill
	// directory behind; a derivation is the next writer those commands run.
	s.removeOrphanedTmp()
	if opts.MemoryLimit != "" {
		restore, err := s.limitDerivationMemory(ctx, opts.MemoryLimit)
		if err != nil {
			return rep, fmt.Errorf("derive: %w", err)
		}
		defer restore()
	}

	plan, err := s.planDerivation(ctx, opts.Rules, opts.Full, &rep)
	if err != nil {
		return rep, err
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return rep, fmt.Errorf("derive: duckdb connection: %w", err)
	}
	defer conn.Close()
	d := s.newDerivation(ctx, conn, opts.Rules)
	defer d.dropTemporary()

	step, err := s.prepareStep(d, &plan, opts, &rep)
	if err != nil {
		return rep, err
	}
	if step.nothingNew {
		// Only an incremental step finds nothing new, and planDerivation
		// read the state's row count from its footer for it.
		rep.Generation, rep.Hosts = plan.old.Generation, plan.oldHosts
		rep.Duration = time.Since(start)
		return rep, nil
	}
	rep.Full = plan.full
	rep.Files = len(step.checks) + len(step.discoveries)

	parts, err := s.fold(d, plan.full, opts, &rep)
	defer removeFiles(parts)
	if err != nil {
		return rep, s.blameStep(ctx, conn, plan, step, err)
	}

	next := plan.nextManifest(step)
	maxParts := opts.maxDerivedParts
	if maxParts <= 0 {
		maxParts = defaultMaxDerivedParts
	}
	// The events are written first and their tables dropped, so that the
	// state's last steps (foldState) have the memory they held: at the
	// benchmark's 1 GB memory_limit, a million hosts' state spilled 300 MB
	// to disk while they were still there.
	if err := s.writeEvents(ctx, conn, next, maxParts, &rep); err != nil {
		return rep, s.blameStep(ctx, conn, plan, step, err)
	}
	if err := foldState(d); err != nil {
		return rep, s.blameStep(ctx, conn, plan, step, err)
	}
	if err := s.writeState(ctx, conn, plan, step, next); err != nil {
		return rep, s.blameStep(ctx, conn, plan, step, err)
	}
	if err := s.countHosts(ctx, conn, plan, step, next); err != nil {
		return rep, err
	}
	grace := defaultRetiredGrace
	if opts.retiredGrace != nil {
		grace = *opts.retiredGrace
	}
	next.Retired = retire(plan.old, next, grace)
	if plan.old == nil && len(plan.unindexed.Files) > 0 {
		next.Retired = append(next.Retired, plan.unindexed)
	}
	if err := s.writeManifest(next); err != nil {
		return rep, err
	}
	s.collectGarbage(next)
	rep.Generation, rep.Hosts = next.Generation, next.Hosts
	rep.Duration = time.Since(start)
	s.log.Info("derived", "generation", rep.Generation, "full", rep.Full, "files", rep.Files,
		"hosts", rep.Hosts, "transitions", rep.Transitions, "windowed", rep.Windowed, "windowless", rep.Windowless, "one_check", rep.OneCheck,
		"duration", rep.Duration)
	return rep, nil
}

// clearInTheWay removes what is at path unless it is the type want
// (fs.FileMode.Type: 0 for a regular file, fs.ModeDir for a directory), or
// a link to a directory where one is wanted, with a warning: an operator
// may keep derived/transitions on another disk.
func (s *Deriver) clearInTheWay(path string, want fs.FileMode) {
	info, err := os.Lstat(path)
	if err != nil || info.Mode().Type() == want {
		return
	}
	// Not the lock file's: locking it writes into it, which through a
	// link would be into whatever file it names.
	if target, err := os.Stat(path); err == nil && want == fs.ModeDir && target.Mode().Type() == want {
		return
	}
	s.log.Warn("derive: removing what stands where the derived state's own file or directory belongs", "path", path, "mode", info.Mode().String())
	os.RemoveAll(path)
}

// blameStep names the damaged file behind err, an error of a derivation
// step, among the files it read (its new snapshots, and the carried derived
// files of an incremental step), when err looks like damage.
func (s *Deriver) blameStep(ctx context.Context, conn *sql.Conn, plan derivePlan, step foldStep, err error) error {
	if !looksDamaged(err) {
		return err
	}
	var paths []string
	for _, f := range append(slices.Clone(step.checks), step.discoveries...) {
		paths = append(paths, s.snapshotPath(f))
	}
	if !plan.full && plan.old != nil {
		for _, f := range plan.old.files() {
			paths = append(paths, s.derivedPath(f))
		}
	}
	err = blameDamaged(ctx, conn, paths, err)
	if isDamagedFile(err) {
		return fmt.Errorf("derive: %w", err)
	}
	return err
}

// limitDerivationMemory makes limit (e.g. "1GB") DuckDB's memory_limit for
// this Store, so that operators beyond it spill into data/tmp, and returns
// the function that restores the insertion order it relaxes.
func (s *Deriver) limitDerivationMemory(ctx context.Context, limit string) (restore func(), err error) {
	if err := s.limitMemory(ctx, limit); err != nil {
		return nil, err
	}
	if _, err := s.db.ExecContext(ctx, "SET preserve_insertion_order = false"); err != nil {
		return nil, err
	}
	// The setting is global: queries run on this Store after the
	// derivation (observer sql, a build) keep the order of what they
	// read, as without a limit.
	return func() { s.db.ExecContext(context.Background(), "RESET preserve_insertion_order") }, nil
}

// derivePlan is what a derivation starts from: the previous derivation
// (nil when there is none to build on) and its count of hosts (read for an
// incremental step only), every snapshot file on disk, and whether this
// step rebuilds from all of them.
type derivePlan struct {
	old                         *manifest
	oldHosts                    int64
	rules                       string
	checks, discoveries, passes []string
	sizes                       map[string]int64 // of those files
	full                        bool
	// Without a manifest (none yet, or lost): the derived files on disk,
	// retired by this step, and the highest generation among them.
	unindexed      retired
	lastGeneration int64
}

// planDerivation reads the previous derivation's manifest and lists the
// snapshots, and decides whether the step must be a full one, saying why in
// rep.FullReason when it was not asked for.
func (s *Deriver) planDerivation(ctx context.Context, rules Rules, wantFull bool, rep *DeriveReport) (derivePlan, error) {
	plan := derivePlan{rules: rules.fingerprint(), full: wantFull}
	old, err := s.readManifest()
	var damaged *damagedManifestError
	if errors.As(err, &damaged) {
		// The manifest is the cache's index; without it the cache is
		// rebuilt from the snapshots, like a damaged file of it.
		rep.FullReason = err.Error()
		s.log.Warn("derive: rebuilding the derived state from the snapshots", "reason", rep.FullReason)
		old, err = nil, nil
	}
	if err != nil {
		return plan, err
	}
	plan.old = old
	if old == nil {
		plan.unindexed, plan.lastGeneration = s.unindexed(time.Now().UTC())
	}
	for _, kind := range []struct {
		dir  string
		list *[]string
	}{{ChecksDir, &plan.checks}, {DiscoveriesDir, &plan.discoveries}, {PassesDir, &plan.passes}} {
		if *kind.list, err = s.listSnapshots(kind.dir); err != nil {
			return plan, err
		}
	}
	if plan.sizes, err = s.snapshotSizes(plan.checks, plan.discoveries, plan.passes); err != nil {
		return plan, err
	}
	// A file moved away since it was listed is not part of this step.
	for _, list := range []*[]string{&plan.checks, &plan.discoveries, &plan.passes} {
		*list = slices.DeleteFunc(*list, func(f string) bool { _, ok := plan.sizes[f]; return !ok })
	}
	var changed string
	if old != nil {
		changed = changedSnapshot(old, plan.sizes)
	}
	switch {
	case plan.full:
	case old == nil && rep.FullReason != "":
		plan.full = true
	case old == nil:
		plan.full, rep.FullReason = true, "no previous derivation"
	case !rules.carries(old.Rules):
		plan.full, rep.FullReason = true, "state thresholds or the state's schema changed"
	case changed != "":
		plan.full, rep.FullReason = true, changed
		s.log.Warn("derive: rebuilding the derived state from the snapshots", "reason", rep.FullReason)
	default:
		// data/derived is a cache of the snapshots: a damaged file of it (a
		// disk error, a hand edit) is rebuilt from them, not an error.
		hosts, err := s.readable(ctx, old)
		if err != nil {
			first, _, _ := strings.Cut(err.Error(), "\n")
			plan.full, rep.FullReason = true, "a derived file is unreadable: "+first
			s.log.Warn("derive: rebuilding the derived state from the snapshots", "reason", rep.FullReason)
		}
		plan.oldHosts = hosts
	}
	return plan, nil
}

// snapshotSizes stats the snapshot files of each list (relative to the
// data directory).
func (s *Deriver) snapshotSizes(lists ...[]string) (map[string]int64, error) {
	sizes := map[string]int64{}
	for _, list := range lists {
		for _, f := range list {
			info, err := os.Stat(s.snapshotPath(f))
			if errors.Is(err, fs.ErrNotExist) {
				continue // moved away since it was listed: not changed, gone
			}
			if err != nil {
				return nil, fmt.Errorf("derive: %w", err)
			}
			sizes[f] = info.Size()
		}
	}
	return sizes, nil
}

// changedSnapshot says which snapshot file the manifest old recorded is now
// of another size (sizes, of the files on disk), or "" when none is. A
// folded file that is gone is not changed: what it held stays folded.
func changedSnapshot(old *manifest, sizes map[string]int64) string {
	for _, list := range [][]string{old.Checks, old.Discoveries, old.Passes} {
		for _, f := range list {
			was, recorded := old.Sizes[f]
			now, onDisk := sizes[f]
			if recorded && onDisk && now != was {
				return fmt.Sprintf("snapshot file %s has changed since it was folded (%d bytes then, %d now): snapshots are never rewritten", f, was, now)
			}
		}
	}
	return ""
}

// foldStep is what one derivation step folds: the snapshot files new to it
// (every file, in a full derivation), or nothing new at all; and, for an
// incremental step, whether it folds the hosts it touches alone and whether
// it writes a delta (planDelta).
type foldStep struct {
	checks, discoveries, passes []string
	nothingNew                  bool
	touched, delta              bool
}

// prepareStep picks the files this step folds, checks them against their
// schema and defines the fold's inputs on conn. An incremental step that
// finds a new check older than its host's last folded one becomes a full
// step (plan.full), since the fold can only append to a host's history.
func (s *Deriver) prepareStep(d *derivation, plan *derivePlan, opts DeriveOptions, rep *DeriveReport) (foldStep, error) {
	ctx, conn := d.ctx, d.conn
	// Files new to the derived state are checked against their schema
	// first (from their footers), so a file the fold cannot read right is
	// an error naming it and its column, not one of a fold step's SQL.
	// The passes are not folded, but the passes view reads them all.
	checked := map[string]bool{}
	check := func(schemaTable string, files []string) error {
		files = slices.DeleteFunc(slices.Clone(files), func(f string) bool { return checked[f] })
		timer := startTimer()
		if err := s.checkSnapshots(ctx, conn, schemaTable, files, opts.noNullCounts); err != nil {
			return fmt.Errorf("derive: %w", err)
		}
		if len(files) > 0 {
			timer.log(s.log, "check "+schemaTable, "files", len(files))
		}
		for _, f := range files {
			checked[f] = true
		}
		return nil
	}
	step := foldStep{passes: plan.passes}
	if !plan.full {
		step.passes = notIn(plan.passes, plan.old.Passes)
	}
	if err := check("passes_schema", step.passes); err != nil {
		return step, err
	}
	for {
		if plan.full {
			step.checks, step.discoveries = plan.checks, plan.discoveries
		} else {
			step.checks, step.discoveries = notIn(plan.checks, plan.old.Checks), notIn(plan.discoveries, plan.old.Discoveries)
			if len(step.checks) == 0 && len(step.discoveries) == 0 {
				// New passes files (a pass that checked nothing) were
				// checked above, and are again until a step records them.
				step.nothingNew = true
				return step, nil
			}
		}
		if err := check("checks_schema", step.checks); err != nil {
			return step, err
		}
		if err := check("discoveries_schema", step.discoveries); err != nil {
			return step, err
		}
		d.checkFiles = d.checkFiles[:0]
		for _, f := range step.checks {
			d.checkFiles = append(d.checkFiles, s.snapshotPath(f))
		}
		if err := s.defineFoldInputs(ctx, conn, plan.full, plan.old, step.checks, step.discoveries); err != nil {
			return step, err
		}
		if plan.full {
			step.touched, step.delta = false, false
			return step, nil
		}
		if err := s.planDelta(ctx, conn, plan.old, &step, cmp.Or(opts.deltaFraction, maxDeltaFraction)); err != nil {
			return step, err
		}
		if step.touched {
			if err := d.step("carry_touched", sqlParams{"state_source": s.stateSource(plan.old)}); err != nil {
				return step, err
			}
		}
		timer := startTimer()
		late, err := lateChecks(d)
		timer.log(s.log, "late checks")
		if err != nil {
			return step, err
		}
		if !late {
			return step, nil
		}
		plan.full, rep.FullReason = true, "a new file holds checks older than already folded ones"
		s.log.Info("derive: falling back to a full derivation", "reason", rep.FullReason)
	}
}

// nextManifest is the manifest of the derivation that folds step onto the
// plan's previous one, before its derived files are written.
func (plan derivePlan) nextManifest(step foldStep) *manifest {
	next := &manifest{Rules: plan.rules, DerivedAt: time.Now().UTC(), Checks: plan.checks, Discoveries: plan.discoveries, Passes: plan.passes,
		Sums: map[string]string{}}
	old := plan.old
	if old == nil {
		next.Generation = plan.lastGeneration + 1
	} else {
		next.Generation = old.Generation + 1
	}
	if old != nil && !plan.full {
		next.Transitions = slices.Clone(old.Transitions)
		next.LiveEvents = slices.Clone(old.LiveEvents)
		for _, f := range append(slices.Clone(next.Transitions), next.LiveEvents...) {
			if sum, ok := old.Sums[f]; ok {
				next.Sums[f] = sum
			}
		}
		// Files that were folded stay folded even if they have since
		// been removed from the snapshots.
		next.Checks = union(old.Checks, step.checks)
		next.Discoveries = union(old.Discoveries, step.discoveries)
		next.Passes = union(old.Passes, step.passes)
	}
	next.Sizes = map[string]int64{}
	for _, list := range [][]string{next.Checks, next.Discoveries, next.Passes} {
		for _, f := range list {
			if size, ok := plan.sizes[f]; ok {
				next.Sizes[f] = size
			} else if old != nil {
				if size, ok := old.Sizes[f]; ok {
					next.Sizes[f] = size
				}
			}
		}
	}
	return next
}

// writeEvents writes the step's transitions and live events as next's
// files, one of each kind when there are any, which takes in the earlier
// files of its kind once there are maxParts of them, and drops their
// tables.
func (s *Deriver) writeEvents(ctx context.Context, conn *sql.Conn, next *manifest, maxParts int, rep *DeriveReport) error {
	derived := s.path(DerivedDir)
	gen := fmt.Sprintf("%08d", next.Generation)
	timer := startTimer()
	for _, out := range []struct {
		table, dir, order string
		list              *[]string
		count             *int64
		// merge gives the rows of one file from those of several (%s).
		merge string
	}{
		// By time alone, so that a reader of recent changes skips the older
		// row groups; ordering ties by host too cost 0.1 s over the
		// benchmark's 1.9 million transitions.
		{"fold_transitions", transitionsDir, "checked_at", &next.Transitions, &rep.Transitions,
			"SELECT * FROM %s"},
		{"fold_live_events", liveEventsDir, "host, day", &next.LiveEvents, nil,
			"SELECT host, day, sum(delta)::BIGINT AS delta FROM %s GROUP BY host, day HAVING sum(delta) <> 0"},
	} {
		var n int64
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM "+out.table).Scan(&n); err != nil {
			return fmt.Errorf("derive: count %s: %w", out.table, err)
		}
		if out.count != nil {
			*out.count = n
		}
		if n > 0 {
			rel := out.dir + "/" + gen + ".parquet"
			source := out.table
			if len(*out.list) >= maxParts {
				// This step's file takes in the earlier ones (which are
				// retired), so the files readers open stay few.
				source = fmt.Sprintf("(SELECT * FROM %s UNION ALL BY NAME SELECT * FROM read_parquet(%s))",
					out.table, s.derivedList(*out.list))
				*out.list = nil
			}
			query := fmt.Sprintf("SELECT * FROM (%s) ORDER BY %s", fmt.Sprintf(out.merge, source), out.order)
			if err := s.copyAtomically(ctx, conn, query, filepath.Join(derived, filepath.FromSlash(rel)), parquetKept); err != nil {
				return fmt.Errorf("derive: write %s: %w", rel, err)
			}
			if err := s.recordSum(next, rel); err != nil {
				return err
			}
			*out.list = append(*out.list, rel)
		}
		if _, err := conn.ExecContext(ctx, "DROP TABLE "+out.table); err != nil {
			return fmt.Errorf("derive: free %s: %w", out.table, err)
		}
	}
	// The files a merge took in are no longer next's.
	named := next.files()
	maps.DeleteFunc(next.Sums, func(f, _ string) bool { return !slices.Contains(named, f) })
	timer.log(s.log, "write events")
	return nil
}

// maxDeltaFraction is, as a fraction of the base's rows, how many new
// checks and discoveries a step folds by the hosts they name alone, and how
// large a delta may grow before a step writes the base again (planDelta).
// Every reader of the state joins the base with the delta, a cost that
// grows with the delta, while writing the base costs as much as the
// state's size: a million hosts' state takes about 2 s to write, and a
// pass of the million-instance model touches about 6 % of them, so that
// about one pass in four writes the base.
const maxDeltaFraction = 0.25

// planDelta decides how an incremental step folds and writes the state,
// from the rows of the files' footers. When its new checks and discoveries
// are at most fraction of the base's rows (a fraction below 0: never), it
// folds the hosts they name alone (step.touched: carry_touched.sql); and
// when they and the previous delta's rows are too, it writes a delta (the
// rows of the hosts it touches, with those of the previous delta it did
// not touch), else it writes them into a new base. Otherwise, it folds and
// writes the whole state.
func (s *Deriver) planDelta(ctx context.Context, conn *sql.Conn, old *manifest, step *foldStep, fraction float64) error {
	step.touched, step.delta = false, false
	if fraction < 0 {
		return nil
	}
	base, delta := s.derivedPath(old.State), ""
	files := []string{base}
	if old.Delta != "" {
		delta = s.derivedPath(old.Delta)
		files = append(files, delta)
	}
	for _, f := range append(slices.Clone(step.checks), step.discoveries...) {
		files = append(files, s.snapshotPath(f))
	}
	rows, err := conn.QueryContext(ctx, "SELECT file_name, num_rows FROM parquet_file_metadata("+sqlList(files)+")")
	if err != nil {
		return fmt.Errorf("derive: count the rows of the state and the new snapshots: %w", err)
	}
	defer rows.Close()
	var baseRows, oldDeltaRows, newRows int64
	for rows.Next() {
		var file string
		var n int64
		if err := rows.Scan(&file, &n); err != nil {
			return fmt.Errorf("derive: count the rows of the state and the new snapshots: %w", err)
		}
		switch file {
		case base:
			baseRows += n
		case delta:
			oldDeltaRows += n
		default:
			newRows += n
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("derive: count the rows of the state and the new snapshots: %w", err)
	}
	most := fraction * float64(baseRows)
	step.touched = float64(newRows) <= most
	step.delta = step.touched && float64(oldDeltaRows+newRows) <= most
	return nil
}

// writeState writes the state after step as next's. A step that folds
// the whole state writes fold_state as a new base (state-GEN.parquet). One
// that folds the hosts it touches alone writes the state's changed rows,
// fold_state's and the previous delta's of the hosts it did not touch: as
// a delta (delta-GEN.parquet) beside the previous base, or into a new base
// with the previous base's other rows.
func (s *Deriver) writeState(ctx context.Context, conn *sql.Conn, plan derivePlan, step foldStep, next *manifest) error {
	timer := startTimer()
	// fold_state is a view, computed as it is written: materialising a
	// million hosts first would cost as much again.
	query := "SELECT * FROM fold_state"
	next.State = fmt.Sprintf("state-%08d.parquet", next.Generation)
	written := &next.State
	if step.touched {
		changed, changedHosts := query, "SELECT host FROM fold_touched"
		if plan.old.Delta != "" {
			oldDelta := "read_parquet(" + sqlString(s.derivedPath(plan.old.Delta)) + ")"
			changed = overlay(oldDelta, query, changedHosts)
			changedHosts += " UNION ALL SELECT host FROM " + oldDelta
		}
		query = changed
		if step.delta {
			next.State, next.Delta = plan.old.State, fmt.Sprintf("delta-%08d.parquet", next.Generation)
			if sum, ok := plan.old.Sums[next.State]; ok {
				next.Sums[next.State] = sum
			}
			written = &next.Delta
		} else {
			query = overlay("read_parquet("+sqlString(s.derivedPath(plan.old.State))+")", changed, changedHosts)
		}
	}
	if err := s.copyAtomically(ctx, conn, query, filepath.Join(s.path(DerivedDir), *written), parquetRewritten); err != nil {
		return fmt.Errorf("derive: write %s: %w", *written, err)
	}
	if err := s.recordSum(next, *written); err != nil {
		return err
	}
	timer.log(s.log, "write state", "touched", step.touched, "delta", step.delta)
	return nil
}

// recordSum puts the hash of the derived file rel, just written, in next.
func (s *Deriver) recordSum(next *manifest, rel string) error {
	sum, err := fileSum(s.derivedPath(rel))
	if err != nil {
		return fmt.Errorf("derive: %w", err)
	}
	next.Sums[rel] = sum
	return nil
}

// defineFoldInputs defines the fold's inputs on conn: new_checks_all and
// new_discoveries_all over exactly the listed files, and carry_all, the
// previous state (empty for a full derivation).
func (s *Deriver) defineFoldInputs(ctx context.Context, conn *sql.Conn, full bool, old *manifest, checks, discoveries []string) error {
	carry := "SELECT * FROM (" + sqlFile("derivation/state_empty.sql") + ")"
	if !full {
		carry = "SELECT * FROM " + s.stateSource(old)
	}
	stmts := []string{
		// Each check says where it is (file_index: its file's place in
		// checks; file_row_number: its row there), so that fold_edge_facts.sql
		// can read the facts of the few checks it keeps from their files
		// alone.
		"CREATE OR REPLACE TEMP VIEW new_checks_all AS " + s.snapshotSource(checks, "checks_schema", true,
			"host, checked_at, outcome, pass_id, moved_to, peers_fetched, peers_not_modified, peers_etag, peers_last_modified, software, version, users, active_month, open_registrations, name, description"),
		"CREATE OR REPLACE TEMP VIEW new_discoveries_all AS " + s.snapshotSource(discoveries, "discoveries_schema", false,
			"host, discovered_at, via"),
		"CREATE OR REPLACE TEMP VIEW carry_all AS " + carry,
	}
	for _, stmt := range stmts {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("derive: %w", err)
		}
	}
	// The carried state's file was read (its footer) by readable before
	// an incremental step, and a damaged one made the step a full one.
	return nil
}

// snapshotSource selects columns from exactly the given files (relative to
// the data directory), or from the empty schema table when there are none;
// located adds the columns file_index (the file's place in files) and
// file_row_number (the row's place in its file).
func (s *Deriver) snapshotSource(files []string, schemaTable string, located bool, columns string) string {
	if len(files) == 0 {
		if located {
			columns = "NULL::UBIGINT AS file_index, NULL::BIGINT AS file_row_number, " + columns
		}
		return fmt.Sprintf("SELECT %s FROM %s", columns, schemaTable)
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = s.snapshotPath(f)
	}
	read := "FROM read_parquet(" + sqlList(paths) + ", union_by_name = true)"
	if located {
		// read_parquet's virtual columns: a subquery's * leaves them out.
		columns = "file_index, file_row_number, " + columns
		read = "SELECT *, file_index, file_row_number " + read
	}
	// Unioned by name with the empty schema table, so that a column added
	// since the files were written reads as NULL even when no file has it.
	return fmt.Sprintf("SELECT %s FROM (FROM %s UNION ALL BY NAME %s)", columns, schemaTable, read)
}

// lateChecks reports whether a new check is not later than its host's last
// folded check: the incremental fold can only append to a host's history.
func lateChecks(d *derivation) (bool, error) {
	query, err := d.sql("late_checks", nil)
	if err != nil {
		return false, err
	}
	var late bool
	if err := d.conn.QueryRowContext(d.ctx, query).Scan(&late); err != nil {
		return false, fmt.Errorf("derive: %w", err)
	}
	return late, nil
}

// maxAliveDays is the longest span of days, in one derivation step, for
// which fold_hosts keeps each host's alive days as a bitstring (a million
// hosts × 2048 days is 256 MB). Beyond it (a full derivation of years, or a
// pass run with a --now far off), alive hosts with runs longer than the live
// window go to the windowed fold.
const maxAliveDays = 2048

// maxAliveDaysInt is the longest span of days for which the alive days are
// the bits of a BIGINT (bit 63 would be its sign) instead of a bitstring:
// over a month of the benchmark's million hosts, the integer's bit_or took
// 0.3 s less than bitstring_agg (a daily step's span is a day or two).
const maxAliveDaysInt = 63

// defaultFoldBucketChecks is how many checks the windowed fold (fold_runs)
// sorts at once. Above it, the checks of the hosts it folds are split into
// buckets of hosts, each folded on its own, which bounds the memory of the
// sort: at the benchmark's 1 GB memory_limit, a window over thirty million
// checks did not fit, and one over 4.4 million (the benchmark's full
// derivation) peaks lower in one piece than split in two. Hosts whose checks
// extend one run (most of them) never reach the windowed fold, so a step
// splits only when many hosts change.
const defaultFoldBucketChecks = 8_000_000

// maxSeveralInMemory is how many new checks of hosts checked more than once
// in a step an incremental step holds in a table (a few hundred bytes each)
// rather than reading them from the files at each use.
const maxSeveralInMemory = 250_000

// fold runs the fold's SQL for this step up to the step's results but the
// state: it leaves fold_transitions and fold_live_events, and what
// foldState needs to define fold_state. It returns the temporary files it
// wrote, even on error, for the caller to remove when the step ends (after
// a crash, the next derivation or snapshot writer removes them:
// removeOrphanedTmp). It adds the host key (hostKey) to d.params.
func (s *Deriver) fold(d *derivation, full bool, opts DeriveOptions, rep *DeriveReport) (files []string, err error) {
	ctx, conn, exec := d.ctx, d.conn, d.exec
	if err := d.step("run_rules", nil); err != nil {
		return nil, err
	}
	if err := defineFoldChecks(d, full, opts); err != nil {
		return nil, err
	}
	if err := hostParams(d, opts); err != nil {
		return nil, err
	}
	if err := d.step("fold_hosts", nil); err != nil {
		return nil, err
	}
	if err := hostKey(d, opts); err != nil {
		return nil, err
	}
	if err := d.step("fold_edge_picks", nil); err != nil {
		return nil, err
	}
	var tied int64
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM fold_edge_located WHERE tied").Scan(&tied); err != nil {
		return nil, fmt.Errorf("derive: count hosts with checks at the same instant: %w", err)
	}
	if tied > 0 {
		// Their edges are picked again with the ties broken, which reads
		// every new check once more; checks of one host at one instant are
		// rare enough that most steps never pay for it.
		if err := d.step("fold_edge_ties", nil); err != nil {
			return nil, err
		}
	}
	if err := exec("free the edge join", "DROP VIEW fold_edge_checks; DROP TABLE fold_edge_times"); err != nil {
		return nil, err
	}
	if err := d.step("fold_window_hosts", nil); err != nil {
		return nil, err
	}
	files, err = s.foldWindowed(d, opts, rep)
	if err != nil {
		return files, err
	}
	for _, name := range []string{"last_runs", "fold_step"} {
		if err := d.step(name, nil); err != nil {
			return files, err
		}
	}
	// fold_one_checks holds one check per host of fold_new's first kind:
	// none in a full derivation, which this way reads no check to count
	// them (counting every new check through the view that unions them
	// with the schema took 0.35 s for a month of a million hosts).
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM fold_one_checks").Scan(&rep.OneCheck); err != nil {
		return files, fmt.Errorf("derive: count hosts with one new check: %w", err)
	}
	for _, name := range []string{"transitions", "live_events"} {
		if err := d.step(name, nil); err != nil {
			return files, err
		}
	}
	// The runs are in the transitions and live events now, and the state
	// needs only each host's last (fold_last_runs).
	windowRunStates := "DROP TABLE fold_window_run_states"
	if len(files) > 0 {
		// foldWindowedBuckets wrote them to files, and read them through a
		// view.
		windowRunStates = "DROP VIEW fold_window_run_states"
	}
	if err := exec("free the runs", "DROP TABLE fold_step_events; "+windowRunStates); err != nil {
		return files, err
	}
	return files, nil
}

// foldState defines fold_state, the derived state after this step, once
// the transitions and live events are written (writeEvents): it reads the
// facts of the hosts' last alive checks (fold_edge_facts.sql), which hold
// more memory than anything else the state needs, then defines the view
// (state.sql).
func foldState(d *derivation) error {
	factsFiles, err := edgeFactsFiles(d.ctx, d.conn)
	if err != nil {
		return err
	}
	if err := d.step("fold_edge_facts", sqlParams{"facts_files": factsFiles}); err != nil {
		return err
	}
	return d.step("state", sqlParams{"state_empty": sqlFile("derivation/state_empty.sql")})
}

// edgeFactsFiles lists, for fold_edge_facts.sql, the files (their
// file_index in new_checks_all's list) that hold a host's last alive new
// check: "NULL", which matches none, when no host has one.
func edgeFactsFiles(ctx context.Context, conn *sql.Conn) (string, error) {
	var files string
	if err := conn.QueryRowContext(ctx, `SELECT coalesce(string_agg(file::VARCHAR, ', ' ORDER BY file), 'NULL')
		FROM (SELECT DISTINCT facts_at.file AS file FROM fold_edge_located WHERE facts_at IS NOT NULL)`).Scan(&files); err != nil {
		return "", fmt.Errorf("derive: list the files of the last alive checks: %w", err)
	}
	return files, nil
}

// hostParams adds to d.params the values fold_hosts and fold_window_hosts
// take beyond the thresholds: the first day of the step's
// checks and the days bits, sized by the span of days of those checks (one
// query over their times), and whether the windowless fold runs at all.
func hostParams(d *derivation, opts DeriveOptions) error {
	timer := startTimer()
	firstDayUs, days, err := checksSpan(d)
	if err != nil {
		return fmt.Errorf("derive: span of the new checks: %w", err)
	}
	timer.log(d.log, "span")
	windowless := "true"
	if opts.windowOnly {
		windowless = "false"
	}
	// Day i of the span (step_day, from its first midnight, so never
	// negative for a check) is bit i.
	dayBits, aliveBits := "bit_or(1::BIGINT << step_day(checked_at))", "bin(alive_days)"
	switch {
	case days > maxAliveDays:
		dayBits, aliveBits = "NULL::BITSTRING", "NULL::VARCHAR"
	case opts.aliveDaysBitstring || days > maxAliveDaysInt:
		dayBits, aliveBits = fmt.Sprintf("bitstring_agg(step_day(checked_at)::INTEGER, 0, %d)", days-1), "alive_days::VARCHAR"
	}
	maps.Copy(d.params, sqlParams{"first_day_us": strconv.FormatInt(firstDayUs, 10),
		"day_bits": dayBits, "alive_bits": aliveBits, "windowless": windowless})
	return nil
}

// checksSpan gives the first midnight of fold_checks' times (in epoch
// microseconds) and the count of days from it to their last. When
// fold_checks holds every check of the step's files, the files' footers
// (each row group's least and greatest checked_at) give it without reading
// a check: scanning a month of the benchmark's million hosts for it took
// 0.26 CPU-s. A file without those statistics is scanned, like fold_checks
// in an incremental step (a few hosts' checks).
func checksSpan(d *derivation) (firstDayUs, days int64, err error) {
	const span = `coalesce(epoch_us(min(lo)::DATE::TIMESTAMP), 0), coalesce(date_diff('day', min(lo)::DATE, max(hi)::DATE) + 1, 1)`
	if d.foldsEveryCheck && len(d.checkFiles) > 0 {
		var complete sql.NullBool
		err := d.conn.QueryRowContext(d.ctx, `SELECT bool_and(lo IS NOT NULL AND hi IS NOT NULL), `+span+` FROM (
			SELECT TRY_CAST(stats_min_value AS TIMESTAMP) AS lo, TRY_CAST(stats_max_value AS TIMESTAMP) AS hi
			FROM parquet_metadata(`+sqlList(d.checkFiles)+`) WHERE path_in_schema = 'checked_at')`).Scan(&complete, &firstDayUs, &days)
		if err != nil || complete.Bool {
			return firstDayUs, days, err
		}
	}
	err = d.conn.QueryRowContext(d.ctx, `SELECT `+span+` FROM (SELECT checked_at AS lo, checked_at AS hi FROM fold_checks)`).Scan(&firstDayUs, &days)
	return firstDayUs, days, err
}

// defineFoldChecks divides the new checks between fold_new's two kinds
// (fold_several.sql, fold_split.sql).
func defineFoldChecks(d *derivation, full bool, opts DeriveOptions) error {
	// Every host of a full derivation goes to fold_hosts, and the window-only
	// test mode wants the same.
	full = full || opts.windowOnly
	d.foldsEveryCheck = full
	if err := d.step("fold_several", sqlParams{"full": strconv.FormatBool(full)}); err != nil {
		return err
	}
	kind := "VIEW"
	if !full {
		var several int64
		if err := d.conn.QueryRowContext(d.ctx, "SELECT coalesce(sum(checks), 0) FROM fold_several").Scan(&several); err != nil {
			return fmt.Errorf("derive: count checks of hosts checked more than once: %w", err)
		}
		if several <= cmp.Or(opts.severalInMemory, maxSeveralInMemory) {
			kind = "TABLE"
		}
	}
	in, notIn := "host IN (SELECT host FROM fold_several)", "host NOT IN (SELECT host FROM fold_several)"
	if full {
		in, notIn = "true", "false"
	}
	return d.step("fold_split", sqlParams{"full": strconv.FormatBool(full), "fold_checks_kind": kind, "in_several": in, "not_in_several": notIn})
}

// foldWindowed runs the windowed fold (fold_runs, then the states of its runs
// in window_states) over fold_window_hosts' hosts, in buckets of
// hosts when their checks are many, and defines fold_window_run_states over
// the result. It returns the temporary files it wrote.
func (s *Deriver) foldWindowed(d *derivation, opts DeriveOptions, rep *DeriveReport) (files []string, err error) {
	exec := d.exec
	if err := d.step("window_checks", nil); err != nil {
		return files, err
	}
	var windowChecks int64
	// fold_hosts knows each host's count of new checks, so counting the
	// windowed fold's checks needs no pass over them.
	if err := d.conn.QueryRowContext(d.ctx, `SELECT
		(SELECT coalesce(sum(h.checks), 0) FROM fold_hosts h JOIN fold_window_hosts w ON w.host = h.host),
		(SELECT count(*) FROM fold_window_hosts),
		(SELECT count(*) FROM fold_hosts) - (SELECT count(*) FROM fold_window_hosts)`).Scan(
		&windowChecks, &rep.Windowed, &rep.Windowless); err != nil {
		return files, fmt.Errorf("derive: count checks to fold with windows: %w", err)
	}
	// foldBucket folds the checks view selects into fold_window_states.
	foldBucket := func(view string) error {
		if err := exec("bucket", "CREATE OR REPLACE TEMP VIEW bucket_checks AS "+view); err != nil {
			return err
		}
		if err := d.step("fold_runs", nil); err != nil {
			return err
		}
		if err := exec("fold_runs", "CREATE OR REPLACE TEMP TABLE fold_bucket_runs AS SELECT * FROM fold_runs"); err != nil {
			return err
		}
		return d.step("window_states", nil)
	}
	perBucket := opts.foldBucketChecks
	if perBucket <= 0 {
		perBucket = defaultFoldBucketChecks
	}
	if buckets := (windowChecks + perBucket - 1) / perBucket; buckets > 1 {
		files, err = s.foldWindowedBuckets(d, foldBucket, buckets)
		if err != nil {
			return files, err
		}
	} else {
		if err := foldBucket("SELECT * FROM window_checks_all"); err != nil {
			return files, err
		}
		if err := exec("window_states", "CREATE OR REPLACE TEMP TABLE fold_window_run_states AS SELECT * FROM fold_window_states"); err != nil {
			return files, err
		}
	}
	// The last bucket's runs are in fold_window_run_states now, and its
	// hosts are done with.
	if err := exec("free fold_bucket_runs", "DROP TABLE fold_bucket_runs; DROP TABLE fold_window_hosts"); err != nil {
		return files, err
	}
	return files, nil
}

// foldWindowedBuckets splits the windowed fold's checks into buckets of
// hosts (files under data/tmp), folds each with foldBucket, keeps each
// bucket's run states in a file of its own and defines
// fold_window_run_states over them. It returns the temporary files it wrote.
func (s *Deriver) foldWindowedBuckets(d *derivation, foldBucket func(view string) error, buckets int64) (files []string, err error) {
	exec := d.exec
	split := s.path(TmpDir, fmt.Sprintf("%d-split-window-checks", os.Getpid()))
	files = append(files, split)
	os.RemoveAll(split)
	query, err := d.sql("fold_bucket", sqlParams{"input": "window_checks_all", "buckets": strconv.FormatInt(buckets, 10)})
	if err != nil {
		return files, err
	}
	// Uncompressed: the parts are read back once, soon.
	if err := exec("bucket split", fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet, COMPRESSION uncompressed, PARTITION_BY (bucket))",
		query, sqlString(filepath.ToSlash(split)))); err != nil {
		return files, err
	}
	var parts []string
	for b := range buckets {
		view, err := bucketView(filepath.Join(split, fmt.Sprintf("bucket=%d", b)))
		if err != nil {
			return files, err
		}
		if err := foldBucket(view); err != nil {
			return files, err
		}
		part := s.path(TmpDir, fmt.Sprintf("%d-part-runs-%04d.parquet", os.Getpid(), b))
		files = append(files, part)
		// Uncompressed: the parts are read back once, at once.
		if err := exec("window_states", fmt.Sprintf("COPY (SELECT * FROM fold_window_states) TO %s (FORMAT parquet, COMPRESSION uncompressed)",
			sqlString(filepath.ToSlash(part)))); err != nil {
			return files, err
		}
		parts = append(parts, filepath.ToSlash(part))
	}
	return files, exec("window_states", fmt.Sprintf("CREATE OR REPLACE TEMP VIEW fold_window_run_states AS SELECT * FROM read_parquet(%s)",
		sqlList(parts)))
}

// bucketView selects the checks of the bucket written under dir, or none
// when the bucket is empty (no host hashed to it, so no file).
func bucketView(dir string) (string, error) {
	names, err := parquetFiles(dir)
	if err != nil {
		return "", fmt.Errorf("derive (bucket): %w", err)
	}
	if len(names) == 0 {
		return "SELECT * FROM window_checks_all WHERE false", nil
	}
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = filepath.ToSlash(filepath.Join(dir, n))
	}
	return fmt.Sprintf("SELECT * FROM read_parquet(%s, hive_partitioning = false)", sqlList(paths)), nil
}

// hostKey chooses what the fold joins, groups and partitions the checks of
// fold_hosts' hosts by (d.params' host_key): a 64-bit hash of the host when no two
// of those hosts share one, so that the edge picks and the windowed fold's
// sorts compare integers rather than host names (in the benchmark's full
// derivation, the edge picks took a fifth less and the windowed fold's sorts
// a quarter less), and the host itself otherwise. Host names come from
// anyone's peers list, and DuckDB's hash is not built to resist a crafted
// collision, which would fold two hosts' checks as one history; checking the
// hosts at hand costs a few milliseconds. The windowed fold's hosts are some
// of fold_hosts', so one check serves both.
func hostKey(d *derivation, opts DeriveOptions) error {
	var unique bool
	if err := d.conn.QueryRowContext(d.ctx, "SELECT count(DISTINCT hash(host)) = count(*) FROM fold_hosts").Scan(&unique); err != nil {
		return fmt.Errorf("derive: hash the checked hosts: %w", err)
	}
	d.params["host_key"] = "hash(host)"
	if !unique || opts.keyByHostName {
		d.log.Debug("derive: the fold keys hosts by name", "hash_collision", !unique)
		d.params["host_key"] = "host"
	}
	return nil
}

func removeFiles(files []string) {
	for _, f := range files {
		os.RemoveAll(f)
	}
}

// dropTemporary discards d's connection instead of returning it to the
// pool, and with it every temporary table and view the fold defined,
// including what a failed step left, and the memory they hold. Listing
// them to drop them (duckdb_views(), duckdb_tables()) was a process's first
// scan of DuckDB's catalog, which cost 20 to 570 ms of every derivation
// (the crawl's child derives once and exits).
func (d *derivation) dropTemporary() {
	d.conn.Raw(func(any) error { return driver.ErrBadConn })
}

// countHosts sets next.Hosts, the count of hosts in the state step wrote:
// for a step that folded the hosts it touches alone, the previous count and
// those of them the state did not hold, else the new base's rows (its
// footer).
func (s *Deriver) countHosts(ctx context.Context, conn *sql.Conn, plan derivePlan, step foldStep, next *manifest) error {
	if step.touched {
		var added int64
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM fold_touched ANTI JOIN carry_touched USING (host)").Scan(&added); err != nil {
			return fmt.Errorf("derive: count the hosts a step added: %w", err)
		}
		next.Hosts = plan.oldHosts + added
		return nil
	}
	err := conn.QueryRowContext(ctx, "SELECT count(*) FROM read_parquet("+sqlString(s.derivedPath(next.State))+")").Scan(&next.Hosts)
	if err != nil {
		return fmt.Errorf("derive: read %s: %w", next.State, err)
	}
	return nil
}

// listSnapshots lists a snapshot kind's files, relative to the data
// directory with forward slashes, sorted. Temporary files live in data/tmp
// and are never listed. The directories are read as they are (never as a
// pattern), and what the views' glob (kind/*/*.parquet) would read but a
// derivation cannot place is refused, naming it: Parquet files in a
// directory that is not date=YYYY-MM-DD (a valid date: DuckDB reads it as
// the date column), and file names DuckDB would take for a pattern.
func (s *core) listSnapshots(kind string) ([]string, error) {
	root := s.path(kind)
	entries, err := os.ReadDir(root)
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", kind, err)
	}
	var out []string
	for _, e := range entries {
		sub := filepath.Join(root, e.Name())
		if !e.IsDir() {
			// A file beside the date directories is not read by anything,
			// nor is a symbolic link, unless it leads to a directory.
			if info, err := os.Stat(sub); err != nil || !info.IsDir() {
				continue
			}
		}
		names, err := parquetFiles(sub)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", kind, err)
		}
		if len(names) == 0 {
			continue
		}
		if !isDatePartition(e.Name()) {
			return nil, fmt.Errorf("snapshot directory %s holds Parquet files (%s) but is not named date=YYYY-MM-DD with a valid date: "+
				"every snapshot file belongs in the directory of its UTC date; move them there, or out of %s",
				sub, names[0], root)
		}
		for _, name := range names {
			if i := strings.IndexAny(name, globChars); i >= 0 {
				return nil, fmt.Errorf("snapshot file %s: its name contains %q, which DuckDB reads as a file pattern: rename the file",
					filepath.Join(sub, name), name[i])
			}
			out = append(out, kind+"/"+e.Name()+"/"+name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// isDatePartition reports whether name is date=YYYY-MM-DD with a valid date.
func isDatePartition(name string) bool {
	d, ok := strings.CutPrefix(name, "date=")
	if !ok {
		return false
	}
	t, err := time.Parse(time.DateOnly, d)
	return err == nil && t.Format(time.DateOnly) == d
}

// derivedPath is the slash path of a file named relative to data/derived.
func (s *core) derivedPath(rel string) string {
	return filepath.ToSlash(s.path(DerivedDir, filepath.FromSlash(rel)))
}

// notIn returns the elements of all (sorted) not in done.
func notIn(all, done []string) []string {
	seen := make(map[string]bool, len(done))
	for _, d := range done {
		seen[d] = true
	}
	var out []string
	for _, a := range all {
		if !seen[a] {
			out = append(out, a)
		}
	}
	return out
}

// union returns the sorted union of two lists.
func union(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}
