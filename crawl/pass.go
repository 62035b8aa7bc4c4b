package crawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/fediverse-observer/observer"
)

// Checker runs one check. *Crawler is the in-process implementation; a
// pool of sandboxed checker processes can implement it too.
type Checker interface {
	Check(ctx context.Context, host observer.Host, opts CheckOptions) (observer.Result, Trace)
}

// CheckFunc adapts a function to Checker, as http.HandlerFunc does for
// handlers: the tests' stand-in checkers are functions.
type CheckFunc func(ctx context.Context, host observer.Host, opts CheckOptions) (observer.Result, Trace)

// Check calls f.
func (f CheckFunc) Check(ctx context.Context, host observer.Host, opts CheckOptions) (observer.Result, Trace) {
	return f(ctx, host, opts)
}

// Sink receives each finished check. Record is called from a single
// goroutine, in completion order, so a sink needs no locking; an error
// stops the pass.
type Sink interface {
	Record(ctx context.Context, r observer.Result) error
}

// Pass runs checks over a list of due hosts.
type Pass struct {
	Checker Checker
	Sink    Sink
	// Known holds the hosts known before the pass (seeds and
	// discoveries). It is only read during the pass; discoveries made
	// during the pass are tracked separately so each is recorded once.
	Known *KnownSet
	// Concurrency bounds the checks running at once; default 1.
	Concurrency int
	// MaxChecks bounds the due hosts a pass takes on (the first this many
	// valid ones); the rest are left for a later pass. Hosts it takes on
	// but does not check (not resolved, or their address's budget used
	// up) count towards it; a host it takes on that waits for its address
	// is checked in its turn. 0: no limit.
	MaxChecks int
	// Duration is the pass's time budget: no check starts after it has
	// passed, and running checks finish (each within its own deadline).
	// 0: no limit.
	Duration time.Duration
	// Now is the pass's clock at its start (--now); each check's
	// checked_at is Now plus the monotonic time elapsed since the pass
	// started. Zero means the wall clock.
	Now time.Time
	// PassID is copied into each check row.
	PassID string
	// Peers says, per host, whether its peers list is due in this pass and
	// with which validators to ask for it; nil means always due, asked
	// unconditionally.
	Peers func(host observer.Host) PeersDue
	// Resolve, when set, turns on per-address politeness (see
	// address.go): each host is resolved before its check (usually
	// Crawler.Resolve, with the same ConnectTo rules as the checkers), at
	// most one check at a time runs per address (the hosts at a busy
	// address wait in its queue and are checked in turn, later in the
	// pass), each check is pinned to its address (see CheckOptions.Addr
	// for the one exception), and an address stops being checked in this
	// pass once AddressBudget requests have been made to it. A host that does not
	// resolve is not checked but recorded as unreachable, as a check
	// failing on DNS is: a check that cannot be held to an address would
	// escape the limit, and a resolver can fail the pass's lookup and
	// answer the checker's. Nil: no per-address limit.
	Resolve func(ctx context.Context, host observer.Host) (netip.AddrPort, error)
	// AddressBudget is the number of requests per address per pass
	// (config.Crawl.AddressBudget), each MiB a check read from the network
	// counting as one more; <= 0: no budget, one check at a time per
	// address still holds. Only used with Resolve.
	AddressBudget int
	// MaxNewPerList caps the new hosts one check's peers list adds, and
	// MaxNewPerPass those the whole pass records (<= 0: no cap), so that
	// no source floods the known set, which every later pass checks and
	// holds in memory. The checker applies the first cap too, to bound its
	// memory; the pass holds every checker to it. What is dropped is
	// counted (Summary.OverListCap, OverPassCap) and heard of again later.
	MaxNewPerList, MaxNewPerPass int
	// CheckDiscovered, when set, says which of the hosts one check
	// discovered in this pass are to be checked in this pass too
	// (DueList.AdmitDiscovered: not blocklisted, within their registrable
	// domain's budget), in the order given. Admitted
	// discoveries are checked before the rest of the due list, within the
	// pass's budgets (MaxChecks counts them), so that a pass from a seed
	// list reaches the hosts its seeds name instead of leaving every
	// discovery to the next pass. Nil: discoveries wait for a later pass.
	CheckDiscovered func(hosts []observer.Host) []observer.Host
	Logger          *slog.Logger

	// withBudget, when set, replaces context.WithTimeout in making the
	// Duration budget's context, so tests can end the budget themselves.
	withBudget func(context.Context, time.Duration) (context.Context, context.CancelFunc)
}

// PeersDue is the schedule's word on one host's peers list.
type PeersDue struct {
	Fetch bool // the list is due in this pass
	// The validators the list was last served with (empty sends nothing).
	observer.PeersValidators
}

// Summary is the end-of-pass report: the passes row as the pass knows it
// (PassRow adds what the due list and the caller know), and what the pass
// skipped before checking.
//
// Per-address politeness (Addresses and the rest, with Pass.Resolve) counts
// an address as the limit does (an IPv4 address or an IPv6 /64, see
// AddressLimiter). NotStarted counts due hosts left for a later pass: past
// MaxChecks (PastMaxChecks of them), or still waiting (for a place to run, or
// for their turn at a busy address) when the time budget ran out or the pass
// was cancelled.
// OverListCap counts the new peers-list entries dropped for
// Pass.MaxNewPerList (repeats counted by the checker included), OverPassCap
// the new hosts dropped for Pass.MaxNewPerPass.
type Summary struct {
	observer.Pass
	Duplicates int64 // due hosts skipped as already checked in this pass
	// DiscoveredChecked counts the checks (in Checks) of hosts discovered
	// in this pass (Pass.CheckDiscovered), which were not on the due list.
	DiscoveredChecked int64
	// PastMaxChecks counts the not started hosts left over because the
	// pass had taken on Pass.MaxChecks hosts.
	PastMaxChecks int64
}

// Duration is the pass's wall time.
func (s Summary) Duration() time.Duration { return s.EndedAt.Sub(s.StartedAt) }

// String formats the summary for the end of `observer crawl`.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pass %s: %d checks in %s, %d hosts discovered, %s fetched",
		s.PassID, s.Checks, s.Duration().Round(time.Millisecond), s.Discovered, byteText(s.Bytes))
	if s.WireBytes > 0 {
		fmt.Fprintf(&b, " (%s over the network)", byteText(s.WireBytes))
	}
	b.WriteString("\n")
	if s.DiscoveredChecked > 0 {
		fmt.Fprintf(&b, "  checks of hosts discovered in this pass: %d\n", s.DiscoveredChecked)
	}
	for _, o := range observer.Outcomes() {
		if n := s.ByOutcome[o]; n > 0 {
			fmt.Fprintf(&b, "  %-16s %d\n", o, n)
		}
	}
	if s.NotStarted > 0 {
		fmt.Fprintf(&b, "  not started (left for a later pass): %d (%s)\n", s.NotStarted, s.notStartedWhy())
	}
	if s.Abandoned > 0 {
		fmt.Fprintf(&b, "  abandoned (interrupted, or not written): %d\n", s.Abandoned)
	}
	if s.Addresses > 0 {
		fmt.Fprintf(&b, "  addresses: %d, busiest took %d requests; %d over budget, %d hosts left for a later pass\n",
			s.Addresses, s.BusiestAddressRequests, s.AddressesOverBudget, s.SkippedAddressBudget)
	}
	if s.OverListCap > 0 || s.OverPassCap > 0 {
		fmt.Fprintf(&b, "  new hosts dropped: %d over the cap per peers list, %d over the cap per pass\n", s.OverListCap, s.OverPassCap)
	}
	if s.Duplicates > 0 {
		fmt.Fprintf(&b, "  skipped: %d duplicate hosts in the due list\n", s.Duplicates)
	}
	return b.String()
}

// Write writes String to w.
func (s Summary) Write(w io.Writer) error {
	_, err := io.WriteString(w, s.String())
	return err
}

// PassRow is the data/passes row of a pass that checked due's hosts and
// reported s. cutShort is why the pass ended before its due list did (""
// when it did not).
func (s Summary) PassRow(due *DueList, cutShort string) observer.Pass {
	p := s.Pass
	p.Tally = s.Tally.Clone()
	p.Due = int64(len(due.Hosts))
	p.Blocklisted = int64(due.Blocklisted)
	p.OverDomainBudget = int64(due.OverDomainBudget)
	p.CutShort = cutShort
	return p
}

// KeepWritten makes the summary count the checks the snapshot writer wrote
// (written, its tally) after it failed: the pass recorded checks that are in
// no file, which the summary and the passes row count as abandoned, so
// that due still adds up. It returns how many checks were lost.
func (s *Summary) KeepWritten(written observer.Tally) (lost int64) {
	lost = s.Checks - written.Checks
	s.Tally = written
	s.Abandoned += lost
	return lost
}

// CutShort says why the pass ended before its due list did, "" when it did
// not: interrupted (by a signal: its context ended), or hosts left over.
func (s Summary) CutShort(interrupted bool) string {
	switch {
	case interrupted:
		return "interrupted; finished checks were kept"
	case s.NotStarted > 0:
		return s.notStartedReason()
	}
	return ""
}

// notStartedReason says why the pass left due hosts over.
func (s Summary) notStartedReason() string {
	return fmt.Sprintf("%d due hosts left for a later pass (%s)", s.NotStarted, s.notStartedWhy())
}

// notStartedWhy names the budget that left the not started hosts over:
// max_checks, the time budget, or both with their shares. (Hosts at an
// address whose request budget ran out are counted apart, in
// SkippedAddressBudget; hosts at a busy address wait for it.)
func (s Summary) notStartedWhy() string {
	const maxChecks, duration = "max_checks reached", "time budget (duration) reached"
	switch s.PastMaxChecks {
	case s.NotStarted:
		return maxChecks
	case 0:
		return duration
	}
	return fmt.Sprintf("%d: %s; %d: %s", s.PastMaxChecks, maxChecks, s.NotStarted-s.PastMaxChecks, duration)
}

func byteText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Run checks the due hosts, each at most once, and hands every finished
// check to the sink. It returns when all started checks have finished: after
// the list is done, a limit or the budget is reached, ctx is cancelled
// (checks then running are abandoned and not recorded; every check recorded
// before stays recorded), or the sink fails (its error is returned).
func (p *Pass) Run(ctx context.Context, due []observer.Host) (Summary, error) {
	if p.Checker == nil || p.Sink == nil {
		return Summary{}, errors.New("crawl pass needs a Checker and a Sink")
	}
	r := p.newRun()
	r.queue = newHostQueue(r.admit(due), p.MaxChecks)

	// The sink's failure stops the pass like a cancellation.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	budget, cancelBudget := p.budgetContext(ctx)
	defer cancelBudget()
	stopWaking := context.AfterFunc(budget, r.queue.wake)
	defer stopWaking()

	go r.schedule(ctx, budget)
	err := r.collect(ctx, cancel)
	return r.summary(), err
}

// passRun is the state one Run shares between its steps.
type passRun struct {
	p       *Pass
	log     *slog.Logger
	mono    time.Time            // the pass's start, for the monotonic time elapsed
	clock   time.Time            // the pass clock at mono
	limiter *AddressLimiter[job] // nil without Pass.Resolve
	sum     Summary              // written by admit, then only by the collector

	// A host goes through two gates: pending (resolving, taking its
	// address) and sem (the check itself). A host whose address is busy
	// leaves pending for its address's queue in the limiter, where it holds
	// no goroutine and no place: when the address frees up, the check
	// ending there hands it to the producer (hostQueue.turn), which starts
	// it like any other host, holding its address already. So a farm of
	// hosts at one address is checked one at a time without holding up
	// the hosts behind it, and its waiting costs memory per host only. A
	// goroutine that holds sem only runs its check, and one that holds an
	// address only waits for sem, so every wait ends.
	pending, sem *semaphore.Weighted
	results      chan hostDone
	wg           sync.WaitGroup
	// Written by the producer before it closes results.
	notStarted, pastMaxChecks int
	queue                     *hostQueue
}

// hostDone is what one due host's goroutine reports to the collector.
type hostDone struct {
	r          observer.Result
	discovered bool // the host was discovered in this pass, not on the due list
	abandoned  bool
	skipped    bool // address budget used up: not checked
	notStarted bool // not begun: the budget or the pass ended first
}

// newRun sets up one Run's state, starting the pass clock.
func (p *Pass) newRun() *passRun {
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	conc := max(p.Concurrency, 1)
	mono := time.Now()
	clock := p.Now
	if clock.IsZero() {
		clock = mono
	}
	clock = clock.UTC()
	r := &passRun{
		p:       p,
		log:     log,
		mono:    mono,
		clock:   clock,
		sum:     Summary{Pass: observer.Pass{PassID: p.PassID, StartedAt: clock, Tally: observer.Tally{ByOutcome: map[observer.Outcome]int64{}}}},
		pending: semaphore.NewWeighted(int64(conc)),
		sem:     semaphore.NewWeighted(int64(conc)),
		results: make(chan hostDone, conc),
	}
	if p.Resolve != nil {
		r.limiter = NewAddressLimiter[job](p.AddressBudget)
	}
	return r
}

// now is the pass clock now.
func (r *passRun) now() time.Time {
	return r.clock.Add(time.Since(r.mono))
}

// admit returns the due hosts the pass is to check, counting those it leaves
// out.
func (r *passRun) admit(due []observer.Host) []observer.Host {
	// Deduplicate up front: one check per host per pass.
	hosts := make([]observer.Host, 0, len(due))
	seen := make(map[observer.Host]struct{}, len(due))
	for _, h := range due {
		if _, dup := seen[h]; dup {
			r.sum.Duplicates++
			continue
		}
		seen[h] = struct{}{}
		hosts = append(hosts, h)
	}
	if r.p.MaxChecks > 0 && len(hosts) > r.p.MaxChecks {
		r.sum.NotStarted += int64(len(hosts) - r.p.MaxChecks)
		r.sum.PastMaxChecks += int64(len(hosts) - r.p.MaxChecks)
		hosts = hosts[:r.p.MaxChecks]
	}
	return hosts
}

// budgetContext returns ctx limited to the pass's Duration budget.
func (p *Pass) budgetContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.Duration <= 0 {
		return ctx, func() {}
	}
	withBudget := context.WithTimeout
	if p.withBudget != nil {
		withBudget = p.withBudget
	}
	return withBudget(ctx, p.Duration)
}

// schedule is the producer: it starts a goroutine per host, in the queue's
// order, as pending lets it, until the queue or the budget runs out, and
// closes results once every goroutine it started has reported. What it
// never started is counted in r.notStarted and r.pastMaxChecks.
func (r *passRun) schedule(ctx, budget context.Context) {
	defer close(r.results)
	for {
		j, ok := r.queue.next(budget)
		if !ok {
			break
		}
		if budget.Err() != nil || r.pending.Acquire(budget, 1) != nil {
			r.giveBack(j)
			break
		}
		// Acquire may succeed on a context already done.
		if budget.Err() != nil {
			r.pending.Release(1)
			r.giveBack(j)
			break
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.checkHost(ctx, budget, j)
		}()
	}
	r.wg.Wait()
	// The pass ended with hosts still waiting for their turn at an address,
	// or whose turn had come: not started.
	waited := r.queue.drainReady()
	if r.limiter != nil {
		waited = append(waited, r.limiter.Drain()...)
	}
	past, ended := r.queue.dueLeft()
	for _, j := range waited {
		if !j.discovered {
			ended++
		}
	}
	r.notStarted, r.pastMaxChecks = past+ended, past
}

// giveBack returns a host the producer took but did not start, and the
// address it holds, if it does.
func (r *passRun) giveBack(j job) {
	if j.holds {
		r.release(j.addr, 0)
	}
	r.queue.giveBack(j.discovered)
}

// checkOptions returns the options to check host with, but for its address
// and time, which are known only when the check starts.
func (p *Pass) checkOptions(host observer.Host) CheckOptions {
	due := PeersDue{Fetch: true}
	if p.Peers != nil {
		due = p.Peers(host)
	}
	opts := CheckOptions{
		Known:      p.Known,
		FetchPeers: due.Fetch,
		PassID:     p.PassID,
	}
	if due.Fetch {
		opts.PeersValidators = due.PeersValidators
	}
	return opts
}

// checkHost checks the host of j, holding a place in pending until it has a
// place in sem, and reports to results; or, if its address is busy, leaves
// it in the address's queue, holding nothing, and reports nothing yet.
func (r *passRun) checkHost(ctx, budget context.Context, j job) {
	holdsPending := true
	defer func() {
		if holdsPending {
			r.pending.Release(1)
		}
	}()
	if r.limiter != nil && !j.holds {
		d, waits := r.takeAddress(budget, &j)
		if waits {
			return
		}
		if !j.holds {
			d.discovered = j.discovered
			r.results <- d
			return
		}
	}
	opts := r.p.checkOptions(j.host)
	opts.Addr = j.addr
	if !r.enterCheck(budget, j) {
		r.results <- hostDone{notStarted: true, discovered: j.discovered}
		return
	}
	holdsPending = false
	r.pending.Release(1)
	defer r.sem.Release(1)
	d := r.check(ctx, j.host, opts)
	d.discovered = j.discovered
	r.results <- d
}

// takeAddress resolves the host of j and takes its address for it
// (j.holds), or queues j behind the address's current check (waits). If
// neither, d is what to report for the host instead of a check.
func (r *passRun) takeAddress(budget context.Context, j *job) (d hostDone, waits bool) {
	addr, err := r.p.Resolve(budget, j.host)
	if err != nil {
		if budget.Err() != nil {
			return hostDone{notStarted: true}, false
		}
		r.log.Debug("not resolved; recorded as unreachable", "host", j.host, "err", err)
		return hostDone{r: unresolved(j.host, r.now(), r.p.PassID, err)}, false
	}
	j.addr = addr
	took, err := r.limiter.Take(addr.Addr(), job{host: j.host, discovered: j.discovered, holds: true, addr: addr})
	switch {
	case err != nil:
		return hostDone{skipped: true}, false
	case !took:
		return hostDone{}, true
	}
	j.holds = true
	return hostDone{}, false
}

// enterCheck takes a place in sem for j's check. If the budget ends first
// it gives back what it took and j's address, and reports false.
func (r *passRun) enterCheck(budget context.Context, j job) bool {
	acquired := r.sem.Acquire(budget, 1) == nil
	// Acquire may succeed on a context already done.
	if !acquired || budget.Err() != nil {
		if acquired {
			r.sem.Release(1)
		}
		if j.holds {
			r.release(j.addr, 0)
		}
		return false
	}
	return true
}

// check runs the check of h and gives back its address.
func (r *passRun) check(ctx context.Context, h observer.Host, opts CheckOptions) hostDone {
	opts.CheckedAt = r.now()
	res, tr := r.p.Checker.Check(ctx, h, opts)
	if opts.Addr.IsValid() {
		// The check's connections are closed by now.
		r.release(opts.Addr, addressCost(tr, res.Check.WireBytes))
	}
	// A check still running when the pass was interrupted
	// did not finish: it is not recorded.
	return hostDone{r: res, abandoned: ctx.Err() != nil}
}

// release gives addr back after a check that cost it requests, handing it to
// the next host waiting for it (to the producer, in the queue's ready
// hosts), or reporting every waiting host as skipped if the address's
// budget is used up now. It does both before the caller reports its own
// host, so the queue never looks finished while hosts still wait.
func (r *passRun) release(addr netip.AddrPort, requests int) {
	next, handed, refused := r.limiter.Release(addr.Addr(), requests)
	if handed {
		r.queue.turn(next)
	}
	for _, j := range refused {
		r.results <- hostDone{skipped: true, discovered: j.discovered}
	}
}

// collect records the finished checks in r.sum until results is closed, and
// returns the sink's error; on that error it cancels the pass.
func (r *passRun) collect(ctx context.Context, cancel context.CancelCauseFunc) error {
	// The only goroutine that touches the sink and the discoveries.
	var found KnownSet
	var sinkErr error
	for d := range r.results {
		r.collectOne(ctx, cancel, d, &found, &sinkErr)
		// After its discoveries are queued, so the producer does not take
		// the queue for finished while they are on their way.
		r.queue.done()
	}
	return sinkErr
}

// collectOne records one finished host in r.sum, and queues its admitted
// discoveries for checking in this pass.
func (r *passRun) collectOne(ctx context.Context, cancel context.CancelCauseFunc, d hostDone, found *KnownSet, sinkErr *error) {
	switch {
	case d.skipped:
		r.sum.SkippedAddressBudget++
		return
	case d.notStarted:
		// A discovery not started stays a recorded discovery, due by
		// the schedule; only due-list hosts count as left over.
		if !d.discovered {
			r.sum.NotStarted++
		}
		return
	}
	if d.abandoned || *sinkErr != nil {
		r.sum.Abandoned++
		return
	}
	res := r.dedupe(d.r, found)
	r.log.Debug("checked", "host", res.Check.Host, "outcome", res.Check.Outcome, "error", res.Check.Error,
		"ms", res.Check.DurationMS, "discoveries", len(res.Discoveries))
	if err := r.p.Sink.Record(ctx, res); err != nil {
		*sinkErr = fmt.Errorf("record check of %s: %w", res.Check.Host, err)
		cancel(*sinkErr)
		r.sum.Abandoned++
		return
	}
	r.sum.Add(res)
	if d.discovered {
		r.sum.DiscoveredChecked++
	}
	if r.p.CheckDiscovered == nil || len(res.Discoveries) == 0 {
		return
	}
	hosts := make([]observer.Host, len(res.Discoveries))
	for i, disc := range res.Discoveries {
		hosts[i] = disc.Host
	}
	for _, h := range r.p.CheckDiscovered(hosts) {
		r.queue.addDiscovered(h)
	}
}

// summary completes the summary once results is closed.
func (r *passRun) summary() Summary {
	r.sum.NotStarted += int64(r.notStarted)
	r.sum.PastMaxChecks += int64(r.pastMaxChecks)
	if r.limiter != nil {
		st := r.limiter.Stats()
		r.sum.Addresses, r.sum.BusiestAddressRequests, r.sum.AddressesOverBudget = int64(st.Addresses), int64(st.BusiestRequests), int64(st.OverBudget)
	}
	r.sum.EndedAt = r.sum.StartedAt.Add(time.Since(r.mono))
	return r.sum
}

// unresolved is the result for a host the pass could not resolve, and so
// did not check: unreachable, with the DNS error, as a check that failed on
// DNS records it.
func unresolved(host observer.Host, at time.Time, passID string, err error) observer.Result {
	text := errorText(err)
	if !strings.HasPrefix(text, "dns: ") {
		text = "dns: " + text
	}
	return observer.Result{Check: observer.Check{Host: host, CheckedAt: at, PassID: passID,
		Outcome: observer.OutcomeUnreachable, Error: observer.CleanText(text, observer.MaxErrorRunes)}}
}

// dedupe drops discoveries already made earlier in this pass, so each new
// host is recorded once, and those over the caps on new hosts (counting
// them), and counts the check's new peers accordingly.
func (r *passRun) dedupe(res observer.Result, found *KnownSet) observer.Result {
	p := r.p
	r.sum.OverListCap += res.OverListCap
	if len(res.Discoveries) == 0 {
		return res
	}
	kept := res.Discoveries[:0:0]
	newPeers := int64(0)
	for _, d := range res.Discoveries {
		if p.Known.Has(d.Host) || found.Has(d.Host) {
			continue
		}
		peer := d.Via == string(res.Check.Host)
		switch {
		case peer && p.MaxNewPerList > 0 && newPeers >= int64(p.MaxNewPerList):
			r.sum.OverListCap++
			continue
		case p.MaxNewPerPass > 0 && found.Len() >= p.MaxNewPerPass:
			r.sum.OverPassCap++
			continue
		}
		found.Add(d.Host)
		kept = append(kept, d)
		if peer {
			newPeers++
		}
	}
	res.Discoveries = slices.Clip(kept)
	if res.Check.PeersFetched {
		res.Check.NewPeersCount = newPeers
	}
	return res
}
