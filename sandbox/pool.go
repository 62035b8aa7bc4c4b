package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
)

// PoolOptions configures a Pool. The zero value of each field means its
// documented default.
type PoolOptions struct {
	// Path is the checker executable; default os.Executable(), i.e. the
	// running binary re-executed.
	Path string
	// Args are the checker's arguments (argv[1:]), e.g. the hidden
	// subcommand and the flags it needs to build its crawler.
	Args []string
	// ConnectTo are the checker's --connect-to rules, in their flag form.
	// They reach it on an inherited file (ReadConnectTo), not in Args:
	// tens of thousands of them come near the limit on a process's
	// arguments, and would show in ps. Empty: no file.
	ConnectTo []string
	// Roots reads the root certificates a checker trusts, as bytes the
	// checker decodes (crawl.SystemRootsDER), once for every checker: NewPool calls
	// it beside the first checkers' start, and the certificates reach each
	// checker on a pipe of its own, with RootsArgs added to its Args to
	// have it read them (ReadRoots). Nil: no pipe. An error (logged): the
	// pipes stay empty, and each checker loads its own.
	Roots     func() ([]byte, error)
	RootsArgs []string
	// Env is added to the checker's environment, which otherwise holds
	// only SSL_CERT_FILE, SSL_CERT_DIR and TZ from ours,
	// GODEBUG=netdns=go (the pure-Go resolver needs no libc plugins,
	// which Landlock would not let it load), GOMAXPROCS=1 and GOGC=200.
	Env []string
	// Size is the number of checks at once, in all checkers: the pass's
	// concurrency. Default 1.
	Size int
	// ChecksAtOnce is the most checks one checker runs at once. Checks
	// mostly wait for servers, which a process does as well for several
	// as for one, while each process costs a start, a Go runtime and its
	// memory; a checker that dies with several checks under way has each
	// of them checked again in a checker of its own (Check), so that a
	// check is recorded as failed only for a failure it met alone.
	// Default 4.
	ChecksAtOnce int
	// Known is the table of the hosts known before the pass, which every
	// checker maps read-only to drop known peers itself; the caller keeps
	// it open while the pool runs. Nil: no host is known. It may still be
	// pending (NewPendingKnown): the checkers then start at once and wait
	// for it to be written, and NewPool returns once it is.
	Known *SharedKnown
	// Prestart is the number of checkers NewPool starts at once (at most
	// Size); the others start as checks need them (get). Default 1.
	Prestart int
	// CheckTimeout is the crawler's per-check deadline; a checker that has
	// not answered CheckTimeout + grace (10 s, or half the timeout if
	// less) after the request is killed.
	// Default 60 s.
	CheckTimeout time.Duration
	// StartTimeout bounds a checker's start from when the known table is
	// written: mapping it, saying hello. Default 60 s.
	StartTimeout time.Duration
	// MemoryLimit is the resident memory of its own (shared pages, the
	// known table's among them, aside) above which a checker is killed
	// (polled from /proc), and the cgroup memory.max if CgroupParent is
	// set. Keep it above ConfineOptions.MemoryLimit, which the checker
	// enforces itself. Default 1 GiB.
	MemoryLimit int64
	// ChecksPerProcess retires a checker after this many checks; 1 runs
	// every check in a fresh process. Default 1000.
	ChecksPerProcess int
	// RetireCPUSeconds retires a checker whose CPU time reached it, so an
	// honest checker never meets its RLIMIT_CPU (ConfineOptions.CPUSeconds,
	// keep it above). Default 300.
	RetireCPUSeconds float64
	// CgroupParent, if set, is a cgroup v2 directory delegated to us in
	// which each checker gets its own cgroup with memory.max = MemoryLimit.
	// Empty: no cgroup, the /proc watchdog and RLIMIT_DATA only.
	CgroupParent string
	// DropCapabilities starts the checkers from a thread without
	// capabilities to pass on (an empty bounding set, no inheritable or
	// ambient ones), so that one started by root holds none from its
	// first instruction and Confine has none left to drop; the crawl sets
	// it. Unset, a checker started by root holds root's capabilities until
	// it drops them itself (an unconfined test checker keeps them).
	DropCapabilities bool
	// RequireConfinement makes NewPool refuse, with a *NotConfinedError,
	// a checker that did not apply every one of RequiredLayers, instead of
	// logging what is missing and going on (crawl.require_confinement).
	RequireConfinement bool
	// Logger gets the confinement report (once) and the checkers' stderr
	// (bounded). Default slog.Default().
	Logger *slog.Logger
}

func (o *PoolOptions) setDefaults() error {
	if o.Path == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find own executable: %w", err)
		}
		o.Path = exe
	}
	o.Size = max(o.Size, 1)
	if o.ChecksAtOnce <= 0 {
		o.ChecksAtOnce = 4
	}
	o.Prestart = min(max(o.Prestart, 1), o.Size)
	if o.CheckTimeout <= 0 {
		o.CheckTimeout = 60 * time.Second
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 60 * time.Second
	}
	if o.MemoryLimit <= 0 {
		o.MemoryLimit = 1 << 30
	}
	if o.ChecksPerProcess <= 0 {
		o.ChecksPerProcess = 1000
	}
	if o.RetireCPUSeconds <= 0 {
		o.RetireCPUSeconds = 300
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

// grace is how long past its own deadline a checker may take to answer.
func grace(timeout time.Duration) time.Duration { return min(10*time.Second, timeout/2) }

// Pool runs checks in checker processes. It implements crawl.Checker; a
// checker that dies, overruns its deadline, exceeds its memory or sends
// anything invalid is killed with its process group, its host gets
// checker_failed, and a fresh process takes its place.
type Pool struct {
	opts  PoolOptions
	log   *slog.Logger
	owned *SharedKnown // the empty table NewPool made for a nil Known
	rules *os.File     // the --connect-to rules every checker reads, if any
	roots *poolRoots   // the root certificates every checker reads, if any
	spawn *spawner     // the thread every checker is started from
	slots chan struct{}
	// starting holds a token while a checker starts: one start at a time.
	starting chan struct{}
	started  atomic.Int64
	nextID   atomic.Uint64
	seq      atomic.Uint64
	report   Report

	mu    sync.Mutex
	procs map[*proc]struct{}
	// waiters are the checks waiting for a checker (get), first come
	// first; wakeLocked tells as many as there is new room for to look
	// again, not all of them: tens of checks wait while a few run, and
	// waking them all at every finished check cost the crawl as much as
	// decoding the results.
	waiters   []*waiter
	closed    bool
	cgroup    bool   // put each checker in its own cgroup
	cgroupWhy string // why not, if CgroupParent was set
	// The checkers' load (noteLoad): decaying sums of their checks' wall
	// seconds and of the seconds they waited for a CPU meanwhile; and when
	// the last start began.
	loadRunq, loadWall float64
	lastStart          time.Time
}

var _ crawl.Checker = (*Pool)(nil)

// NewPool starts Prestart checkers and waits for the first to say hello
// (so a broken setup fails here, not on every host), logs what confinement
// it applied and what it could not, and returns the pool. Close it when the
// pass is over. If ctx is done before the first checker has said hello, it
// is killed and the error wraps ctx.Err().
func NewPool(ctx context.Context, opts PoolOptions) (*Pool, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	var owned *SharedKnown
	if opts.Known == nil {
		k, err := NewSharedKnown(nil)
		if err != nil {
			return nil, err
		}
		opts.Known, owned = k, k
	}
	p := &Pool{
		opts:     opts,
		log:      opts.Logger,
		owned:    owned,
		slots:    make(chan struct{}, opts.Size),
		starting: make(chan struct{}, 1),
		procs:    map[*proc]struct{}{},
		cgroup:   opts.CgroupParent != "",
		spawn:    newSpawner(opts.DropCapabilities),
	}
	if opts.Roots != nil {
		p.opts.Args = append(slices.Clone(opts.Args), opts.RootsArgs...)
		p.roots = readRoots(opts.Roots, p.log)
	}
	var err error
	if p.rules, err = rulesFile(opts.ConnectTo); err != nil {
		p.Close()
		return nil, err
	}
	if p.cgroup {
		if why := notCgroup2(opts.CgroupParent); why != "" {
			p.cgroup = false
			p.cgroupWhy = why
		}
	}
	// The checks then wait for these before starting more past one per
	// CPU (mayStart).
	p.lastStart = time.Now()
	for range opts.Prestart - 1 {
		go p.prestart(ctx)
	}
	pr, err := p.start(ctx)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("start checker %s: %w", opts.Path, err)
	}
	p.started.Add(1)
	p.report = pr.report
	if opts.RequireConfinement {
		if l, missing := p.report.firstMissing(RequiredLayers()); missing {
			p.Close()
			return nil, &NotConfinedError{Layer: l}
		}
	}
	p.report.Layers = append(p.report.Layers, p.poolLayers()...)
	p.log.Info("checkers confined", "applied", p.report.String())
	for _, l := range p.report.Missing() {
		p.log.Warn("checker confinement layer not applied", "layer", l.Name, "why", l.Detail)
	}
	p.ready(pr, false)
	return p, nil
}

// prestart starts a checker beside NewPool's first and makes it ready; one
// that fails to start is left to the checks, which start another as they
// need it.
func (p *Pool) prestart(ctx context.Context) {
	pr, err := p.start(ctx)
	if err != nil {
		p.log.Debug("checker started beside the first failed", "err", err)
		return
	}
	p.started.Add(1)
	p.ready(pr, false)
}

// ready makes a started checker take checks, the caller's first if take.
func (p *Pool) ready(pr *proc, take bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr.ready = true
	if take {
		pr.inflight, pr.begun = 1, 1
	}
	p.wakeLocked(p.opts.ChecksAtOnce - pr.inflight)
}

// A waiter is a check waiting in get for a checker with room, or for its
// turn to start one.
type waiter struct {
	// wake has a token when the check is to look again.
	wake chan struct{}
}

func newWaiter() *waiter { return &waiter{wake: make(chan struct{}, 1)} }

// wakeLocked tells the first n waiting checks to look again (all if n is
// negative); the first of them also looks whether it may start a checker.
func (p *Pool) wakeLocked(n int) {
	for i, w := range p.waiters {
		if n >= 0 && i >= n {
			break
		}
		select {
		case w.wake <- struct{}{}:
		default: // told already
		}
	}
}

// queueLocked puts w at the end of the waiting checks if it is not among
// them, and says whether it is the first.
func (p *Pool) queueLocked(w *waiter) (first bool) {
	if !slices.Contains(p.waiters, w) {
		p.waiters = append(p.waiters, w)
	}
	return p.waiters[0] == w
}

// leaveLocked takes w out of the waiting checks. A wake it was given and
// did not use goes to the next, as does the first place, whose holder
// looks whether it may start a checker.
func (p *Pool) leaveLocked(w *waiter) {
	i := slices.Index(p.waiters, w)
	if i < 0 {
		return
	}
	p.waiters = slices.Delete(p.waiters, i, i+1)
	unused := false
	select {
	case <-w.wake:
		unused = true
	default:
	}
	if i == 0 || unused {
		p.wakeLocked(1)
	}
}

// Report is the confinement the first checker reported, with the pool's
// own layers (memory watchdog, cgroup).
func (p *Pool) Report() Report { return p.report }

func (p *Pool) poolLayers() []Layer {
	ls := []Layer{{Name: "rss_watchdog", Applied: true, Detail: fmt.Sprintf("kill above %d MiB resident, shared pages aside", p.opts.MemoryLimit>>20)}}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.opts.CgroupParent == "":
		ls = append(ls, Layer{Name: "cgroup", Detail: "no cgroup parent configured"})
	case !p.cgroup:
		ls = append(ls, Layer{Name: "cgroup", Detail: observer.CleanText("could not use "+p.opts.CgroupParent+": "+p.cgroupWhy, 300)})
	default:
		ls = append(ls, Layer{Name: "cgroup", Applied: true, Detail: fmt.Sprintf("memory.max %d MiB under %s", p.opts.MemoryLimit>>20, p.opts.CgroupParent)})
	}
	return ls
}

func frame(t byte, payload []byte) []byte {
	var b bytes.Buffer
	writeFrame(&b, t, payload)
	return b.Bytes()
}

// Close kills every checker and waits for them.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	procs := make([]*proc, 0, len(p.procs))
	for pr := range p.procs {
		procs = append(procs, pr)
	}
	p.mu.Unlock()
	// All at once: each kill waits for its process to exit, which under
	// load took tens of milliseconds each, one after the other.
	var wg sync.WaitGroup
	for _, pr := range procs {
		wg.Go(pr.kill)
	}
	wg.Wait()
	// A checker that started while they were being killed dies with the
	// spawner's thread (Pdeathsig).
	p.spawn.close()
	var err error
	if p.rules != nil {
		err = p.rules.Close()
	}
	if p.owned != nil {
		err = errors.Join(err, p.owned.Close())
	}
	return err
}

// Check runs one check in a checker process. opts.Known is not sent: each
// checker filters peers with PoolOptions.Known, and the pass filters the
// discoveries again with its own set (usually the same table).
func (p *Pool) Check(ctx context.Context, host observer.Host, opts crawl.CheckOptions) (observer.Result, crawl.Trace) {
	start := time.Now()
	at := opts.CheckedAt
	if at.IsZero() {
		at = start
	}
	res := observer.Result{Check: observer.Check{Host: host, CheckedAt: at.UTC(), PassID: opts.PassID}}
	fail := func(o observer.Outcome, format string, args ...any) (observer.Result, crawl.Trace) {
		res.Check.Outcome = o
		// The text may quote the checker's stderr: cleaned, so no
		// control character or bidi override reaches the data.
		res.Check.Error = observer.CleanText(fmt.Sprintf(format, args...), observer.MaxErrorRunes)
		res.Check.DurationMS = time.Since(start).Milliseconds()
		return res, crawl.Trace{Steps: []crawl.Step{{Note: res.Check.Error}}}
	}
	req := wireRequest{Host: host, FetchPeers: opts.FetchPeers, CheckedAt: res.Check.CheckedAt, PassID: opts.PassID,
		PeersValidators: opts.PeersValidators}
	if opts.Addr.IsValid() {
		req.Addr = opts.Addr.String()
	}
	if err := req.validate(); err != nil {
		return fail(observer.OutcomeError, "%v", err)
	}

	if ctx.Err() != nil {
		return fail(observer.OutcomeCheckerFailed, "not started: %v", context.Cause(ctx))
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return fail(observer.OutcomeCheckerFailed, "not started: %v", context.Cause(ctx))
	}
	defer func() { <-p.slots }()
	pr, err := p.get(ctx)
	if err != nil {
		return fail(observer.OutcomeCheckerFailed, "start checker: %v", err)
	}
	r, t, why, shared := p.checkOn(ctx, pr, req)
	if why == "" {
		return r, t
	}
	pid := pr.pid
	if shared && ctx.Err() == nil && !p.isClosed() {
		// Which of the checks under way made the checker fail is not
		// known: each is checked again where it alone can.
		p.log.Info("checker failed with other checks under way; checking again in a checker of its own", "host", host, "pid", pid, "err", why)
		r, t, why, pid = p.checkAlone(ctx, req)
		if why == "" {
			return r, t
		}
	}
	p.log.Warn("checker failed", "host", host, "pid", pid, "err", why)
	return fail(observer.OutcomeCheckerFailed, "%s", why)
}

// checkOn runs a check on pr, taken for it (get), and gives pr back (put);
// if the check fails, it kills pr and says why, and whether other checks
// were under way on it when it was killed.
func (p *Pool) checkOn(ctx context.Context, pr *proc, req wireRequest) (r observer.Result, t crawl.Trace, why string, shared bool) {
	sent := time.Now()
	r, t, err := pr.check(ctx, p.nextID.Add(1), req, p.opts.CheckTimeout+grace(p.opts.CheckTimeout))
	if err != nil {
		pr.kill()
		return r, t, pr.failure(err), pr.killedAmong > 1
	}
	p.put(pr, sent)
	return r, t, "", false
}

// checkAlone runs a check in a checker started for it (pid, 0 if none
// started), which takes no other check until this one is over, and then
// joins the pool.
func (p *Pool) checkAlone(ctx context.Context, req wireRequest) (r observer.Result, t crawl.Trace, why string, pid int) {
	pr, err := p.start(ctx)
	if err != nil {
		return r, t, fmt.Sprintf("start checker: %v", err), 0
	}
	p.started.Add(1)
	p.mu.Lock()
	pr.inflight, pr.begun = 1, 1
	p.mu.Unlock()
	r, t, why, _ = p.checkOn(ctx, pr, req)
	return r, t, why, pr.pid
}

func (p *Pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// get takes a checker with room for another check, the one with the fewest
// under way; if none has room, the check waits in line (waiters), and the
// first in line starts one when no other start is under way, or takes
// whichever comes first, a checker with room or its turn to start one. So
// checkers start as work needs them: a pass of quick
// checks runs on a few, one of slow checks ramps up to Size checks at once
// one start at a time, and a burst of checks at the start of a pass does
// not start processes at once for work a handful could do. Past one checker
// per CPU, mayStart also asks that the CPUs have room for another.
func (p *Pool) get(ctx context.Context) (*proc, error) {
	w := newWaiter()
	defer func() {
		p.mu.Lock()
		p.leaveLocked(w)
		p.mu.Unlock()
	}()
	for {
		p.mu.Lock()
		pr, dead := p.takeLocked()
		first := false
		if pr == nil && len(dead) == 0 {
			first = p.queueLocked(w)
		}
		p.mu.Unlock()
		for _, d := range dead {
			d.kill()
			p.log.Warn("idle checker had died", "pid", d.pid, "exit", d.exited())
		}
		if pr != nil {
			return pr, nil
		}
		if len(dead) > 0 {
			continue
		}
		// A nil channel never proceeds. The first waiting check may
		// start a checker, or, with no start allowed, looks again now
		// and then; the others wait to be told.
		starting, recheck := (chan struct{})(nil), (<-chan time.Time)(nil)
		if first {
			starting = p.starting
			if !p.mayStart() {
				starting = nil
				recheck = time.After(loadRecheck)
			}
		}
		select {
		case <-w.wake:
		case starting <- struct{}{}:
			p.mu.Lock()
			p.lastStart = time.Now()
			// No longer waiting: room that comes while this check's
			// checker starts is another's.
			p.leaveLocked(w)
			p.mu.Unlock()
			pr, err := p.start(ctx)
			<-p.starting
			if err != nil {
				return nil, err
			}
			p.started.Add(1)
			p.ready(pr, true)
			return pr, nil
		case <-recheck:
		case <-ctx.Done():
			return nil, fmt.Errorf("start interrupted: %w", ctx.Err())
		}
	}
}

// takeLocked takes, for one more check, the ready checker with room that has
// the fewest checks under way, if any; it returns the checkers found dead
// meanwhile (the kernel's OOM killer may end one while idle), for the
// caller to kill after unlocking.
func (p *Pool) takeLocked() (taken *proc, dead []*proc) {
	for pr := range p.procs {
		if !pr.ready || pr.retiring || pr.inflight >= p.opts.ChecksAtOnce || pr.begun >= p.opts.ChecksPerProcess {
			continue
		}
		select {
		case <-pr.zombie:
			if pr.inflight == 0 {
				dead = append(dead, pr)
			}
			continue
		default:
		}
		if taken == nil || pr.inflight < taken.inflight {
			taken = pr
		}
	}
	if taken != nil {
		taken.inflight++
		taken.begun++
	}
	return taken, dead
}

// The checkers' wait for a CPU: how much of their checks' time their
// threads spent runnable but waiting on a run queue (rather than running,
// or waiting for a server), averaged over about the last loadReadings
// readings. Checks of real servers spend little of it so on a machine with
// CPU to spare; checks of a simulator on the same machine, or on a machine
// whose CPUs are full, a quarter or more.
const (
	loadReadings = 32
	maxRunqShare = 0.1
	// minLoadWall is the checks' time the average needs before it is
	// trusted.
	minLoadWall = 0.2
	// fullStartEvery paces the starts past one checker per CPU while the
	// CPUs are full (or not yet known to have room).
	fullStartEvery = time.Second
	loadRecheck    = 20 * time.Millisecond
)

// noteLoad adds a checker's checks' wall time since its last reading and
// the time it spent waiting for a CPU meanwhile to the checkers' load.
func (p *Pool) noteLoad(runq float64, wall time.Duration) {
	const keep = 1 - 1.0/loadReadings
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loadRunq = p.loadRunq*keep + max(runq, 0)
	p.loadWall = p.loadWall*keep + wall.Seconds()
}

// mayStart says whether get may start a checker now.
func (p *Pool) mayStart() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return startMore(len(p.procs), runtime.GOMAXPROCS(0), p.loadRunq, p.loadWall, time.Since(p.lastStart))
}

// startMore decides whether another checker is worth starting with live
// checkers on cpus CPUs, whose checks waited runq seconds for a CPU in wall
// seconds, the last start having begun since ago: always up to one per
// CPU; past that, whenever the checkers seldom wait for a CPU, as while
// checks wait for servers; else one start a fullStartEvery. On full CPUs
// another process adds its start and its runtime's upkeep to the queue
// and few checks, while a checker soon falls idle when checks are quick;
// when they are slow, the pool still ramps up, a start at a time.
func startMore(live, cpus int, runq, wall float64, since time.Duration) bool {
	return live < cpus || (wall >= minLoadWall && runq < wall*maxRunqShare) || since >= fullStartEvery
}

// Started is the number of checker processes the pool has started.
func (p *Pool) Started() int { return int(p.started.Load()) }

// procReadEvery is how much of its checks' time passes between readings of
// a checker's CPU time and wait for a CPU: at most what its CPU time may
// pass RetireCPUSeconds by (times its threads), far inside RLIMIT_CPU.
const procReadEvery = 50 * time.Millisecond

// put gives a checker back after a check sent at sent, or retires it. Its
// CPU time and wait for a CPU are read once per procReadEvery of the time
// it had checks under way: generating /proc/PID/stat walks the process's
// threads, and reading it after every quick check cost the crawl as much
// as decoding the results.
func (p *Pool) put(pr *proc, sent time.Time) {
	now := time.Now()
	p.mu.Lock()
	pr.inflight--
	// Checks under way at once count their common time once.
	if sent.Before(pr.counted) {
		sent = pr.counted
	}
	pr.unread += now.Sub(sent)
	pr.counted = now
	var unread time.Duration
	if pr.unread >= procReadEvery {
		unread, pr.unread = pr.unread, 0
	}
	p.mu.Unlock()
	retire := false
	if unread > 0 {
		runq, cpu := pr.runqSeconds(), pr.cpuSeconds()
		p.mu.Lock()
		waited := runq - pr.runq
		pr.runq = runq
		p.mu.Unlock()
		p.noteLoad(waited, unread)
		retire = cpu >= p.opts.RetireCPUSeconds
	}
	p.mu.Lock()
	joined := !pr.ready
	pr.ready = true // a checker of a check alone (checkAlone) joins the pool
	if retire || p.closed || pr.begun >= p.opts.ChecksPerProcess {
		pr.retiring = true
	}
	idle := pr.retiring && pr.inflight == 0
	if !pr.retiring {
		room := 1
		if joined {
			room = p.opts.ChecksAtOnce - pr.inflight
		}
		p.wakeLocked(room)
	}
	p.mu.Unlock()
	if idle {
		pr.kill()
	}
}
