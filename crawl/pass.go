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
	"github.com/fediverse-observer/observer/hostname"
)

// Checker runs one check. *Crawler is the in-process implementation; a
// pool of sandboxed checker processes can implement it too.
type Checker interface {
	Check(ctx context.Context, host string, opts CheckOptions) (observer.Result, Trace)
}

// CheckFunc adapts a function to Checker.
type CheckFunc func(ctx context.Context, host string, opts CheckOptions) (observer.Result, Trace)

// Check calls f.
func (f CheckFunc) Check(ctx context.Context, host string, opts CheckOptions) (observer.Result, Trace) {
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
	// MaxChecks stops starting checks after this many; 0: no limit.
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
	Peers func(host string) PeersDue
	// Resolve, when set, turns on per-address politeness (see
	// address.go): each host is resolved before its check (usually
	// Crawler.Resolve, with the same ConnectTo rules as the checkers), at
	// most one check at a time runs per address, each check is pinned to
	// its address (see CheckOptions.Addr for the one exception), and an
	// address stops being checked in this pass once
	// AddressBudget requests have been made to it. A host that does not
	// resolve is not checked but recorded as unreachable, as a check
	// failing on DNS is: a check that cannot be held to an address would
	// escape the limit, and a resolver can fail the pass's lookup and
	// answer the checker's. Nil: no per-address limit.
	Resolve func(ctx context.Context, host string) (netip.AddrPort, error)
	// AddressBudget is the number of requests per address per pass
	// (config.Crawl.AddressBudget); <= 0: no budget, one check at a time
	// per address still holds. Only used with Resolve.
	AddressBudget int
	Logger        *slog.Logger

	// withBudget, when set, replaces context.WithTimeout in making the
	// Duration budget's context, so tests can end the budget themselves.
	withBudget func(context.Context, time.Duration) (context.Context, context.CancelFunc)
}

// PeersDue is the schedule's word on one host's peers list.
type PeersDue struct {
	Fetch bool // the list is due in this pass
	// The validators the list was last served with, sent as If-None-Match
	// and If-Modified-Since ("" sends nothing).
	ETag, LastModified string
}

// Summary is the end-of-pass report.
type Summary struct {
	PassID     string
	Started    time.Time // pass clock
	Duration   time.Duration
	Checks     int                      // checks recorded
	ByOutcome  map[observer.Outcome]int // recorded checks by outcome
	Discovered int                      // new hosts recorded
	Bytes      int64                    // response bytes read, decoded
	Invalid    int                      // due hosts skipped as invalid
	Duplicates int                      // due hosts skipped as already checked in this pass
	Abandoned  int                      // checks cut off by cancellation, not recorded
	NotStarted int                      // due hosts left for a later pass (limits, budget, cancellation)

	// Per-address politeness (with Pass.Resolve), for tuning the budget.
	// A host skipped for its address's budget is not checked and not
	// recorded, so it stays due for the next pass.
	SkippedAddressBudget   int // due hosts not checked: their address's budget was used up
	Addresses              int // distinct addresses checks made requests to
	BusiestAddressRequests int // requests made to the busiest address
	AddressesOverBudget    int // addresses that had hosts skipped for their budget
}

// String formats the summary for the end of `observer crawl`.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pass %s: %d checks in %s, %d hosts discovered, %s fetched\n",
		s.PassID, s.Checks, s.Duration.Round(time.Millisecond), s.Discovered, byteText(s.Bytes))
	for _, o := range observer.Outcomes() {
		if n := s.ByOutcome[o]; n > 0 {
			fmt.Fprintf(&b, "  %-16s %d\n", o, n)
		}
	}
	if s.NotStarted > 0 {
		fmt.Fprintf(&b, "  not started (left for a later pass): %d\n", s.NotStarted)
	}
	if s.Abandoned > 0 {
		fmt.Fprintf(&b, "  abandoned on interruption: %d\n", s.Abandoned)
	}
	if s.Addresses > 0 {
		fmt.Fprintf(&b, "  addresses: %d, busiest took %d requests; %d over budget, %d hosts left for a later pass\n",
			s.Addresses, s.BusiestAddressRequests, s.AddressesOverBudget, s.SkippedAddressBudget)
	}
	if s.Invalid > 0 || s.Duplicates > 0 {
		fmt.Fprintf(&b, "  skipped: %d invalid, %d duplicate hosts in the due list\n", s.Invalid, s.Duplicates)
	}
	return b.String()
}

// Write writes String to w.
func (s Summary) Write(w io.Writer) error {
	_, err := io.WriteString(w, s.String())
	return err
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
func (p *Pass) Run(ctx context.Context, due []string) (Summary, error) {
	if p.Checker == nil || p.Sink == nil {
		return Summary{}, errors.New("crawl pass needs a Checker and a Sink")
	}
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
	sum := Summary{PassID: p.PassID, Started: clock, ByOutcome: make(map[observer.Outcome]int)}

	// Deduplicate and validate up front: one check per host per pass.
	hosts := make([]string, 0, len(due))
	seen := make(map[string]struct{}, len(due))
	for _, h := range due {
		n, err := hostname.Normalize(h)
		if err != nil {
			sum.Invalid++
			log.Warn("due host skipped", "host", h, "err", err)
			continue
		}
		if _, dup := seen[n]; dup {
			sum.Duplicates++
			continue
		}
		seen[n] = struct{}{}
		hosts = append(hosts, n)
	}
	if p.MaxChecks > 0 && len(hosts) > p.MaxChecks {
		sum.NotStarted += len(hosts) - p.MaxChecks
		hosts = hosts[:p.MaxChecks]
	}

	// The sink's failure stops the pass like a cancellation.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	budget := ctx
	if p.Duration > 0 {
		withBudget := context.WithTimeout
		if p.withBudget != nil {
			withBudget = p.withBudget
		}
		var cancelBudget context.CancelFunc
		budget, cancelBudget = withBudget(ctx, p.Duration)
		defer cancelBudget()
	}

	type done struct {
		r          observer.Result
		abandoned  bool
		skipped    bool // address budget used up: not checked
		notStarted bool // the pass ended while waiting for the address
	}
	var limiter *AddressLimiter
	if p.Resolve != nil {
		limiter = NewAddressLimiter(p.AddressBudget)
	}
	// A host goes through three gates: pending (resolving, or waiting for
	// its address), parked (waiting for a busy address without holding a
	// place in pending, so that many hosts at one address do not hold up
	// the hosts behind them), and sem (the check itself). A goroutine that
	// holds sem only runs its check, and one that holds an address only
	// waits for sem, so every wait ends.
	pending := semaphore.NewWeighted(int64(conc))
	parked := semaphore.NewWeighted(int64(4 * conc))
	sem := semaphore.NewWeighted(int64(conc))
	results := make(chan done, conc)
	var wg sync.WaitGroup
	notStarted := 0 // written by the producer before it closes results
	go func() {
		defer close(results)
		defer wg.Wait()
		for i, h := range hosts {
			if budget.Err() != nil || pending.Acquire(budget, 1) != nil {
				notStarted = len(hosts) - i
				return
			}
			// Acquire may succeed on a context already done.
			if budget.Err() != nil {
				pending.Release(1)
				notStarted = len(hosts) - i
				return
			}
			due := PeersDue{Fetch: true}
			if p.Peers != nil {
				due = p.Peers(h)
			}
			opts := CheckOptions{
				Known:      p.Known,
				FetchPeers: due.Fetch,
				PassID:     p.PassID,
			}
			if due.Fetch {
				opts.PeersETag, opts.PeersLastModified = due.ETag, due.LastModified
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				g := gates{pending: pending, parked: parked, holdsPending: true}
				defer g.leave()
				if limiter != nil {
					addr, err := p.Resolve(budget, h)
					if err != nil {
						if budget.Err() != nil {
							results <- done{notStarted: true}
							return
						}
						log.Debug("not resolved; recorded as unreachable", "host", h, "err", err)
						results <- done{r: unresolved(h, clock.Add(time.Since(mono)), p.PassID, err)}
						return
					}
					if err := g.takeAddress(budget, limiter, addr.Addr()); err != nil {
						results <- done{skipped: errors.Is(err, ErrAddressBudget), notStarted: !errors.Is(err, ErrAddressBudget)}
						return
					}
					opts.Addr = addr
				}
				acquired := sem.Acquire(budget, 1) == nil
				// Acquire may succeed on a context already done.
				if !acquired || budget.Err() != nil {
					if acquired {
						sem.Release(1)
					}
					if opts.Addr.IsValid() {
						limiter.Release(opts.Addr.Addr(), 0)
					}
					results <- done{notStarted: true}
					return
				}
				g.leave()
				defer sem.Release(1)
				opts.CheckedAt = clock.Add(time.Since(mono))
				r, tr := p.Checker.Check(ctx, h, opts)
				if opts.Addr.IsValid() {
					// The check's connections are closed by now.
					limiter.Release(opts.Addr.Addr(), requestCount(tr))
				}
				// A check still running when the pass was interrupted
				// did not finish: it is not recorded.
				results <- done{r: r, abandoned: ctx.Err() != nil}
			}()
		}
	}()

	// The only goroutine that touches the sink and the discoveries.
	var found KnownSet
	var sinkErr error
	for d := range results {
		switch {
		case d.skipped:
			sum.SkippedAddressBudget++
			continue
		case d.notStarted:
			sum.NotStarted++
			continue
		}
		if d.abandoned || sinkErr != nil {
			sum.Abandoned++
			continue
		}
		r := p.dedupe(d.r, &found)
		log.Debug("checked", "host", r.Check.Host, "outcome", r.Check.Outcome, "error", r.Check.Error,
			"ms", r.Check.DurationMS, "discoveries", len(r.Discoveries))
		if err := p.Sink.Record(ctx, r); err != nil {
			sinkErr = fmt.Errorf("record check of %s: %w", r.Check.Host, err)
			cancel(sinkErr)
			continue
		}
		sum.Checks++
		sum.ByOutcome[r.Check.Outcome]++
		sum.Discovered += len(r.Discoveries)
		sum.Bytes += r.Bytes
	}
	sum.NotStarted += notStarted
	if limiter != nil {
		st := limiter.Stats()
		sum.Addresses, sum.BusiestAddressRequests, sum.AddressesOverBudget = st.Addresses, st.BusiestRequests, st.OverBudget
	}
	sum.Duration = time.Since(mono)
	return sum, sinkErr
}

// unresolved is the result for a host the pass could not resolve, and so
// did not check: unreachable, with the DNS error, as a check that failed on
// DNS records it.
func unresolved(host string, at time.Time, passID string, err error) observer.Result {
	text := errorText(err)
	if !strings.HasPrefix(text, "dns: ") {
		text = "dns: " + text
	}
	return observer.Result{Check: observer.Check{Host: host, CheckedAt: at, PassID: passID,
		Outcome: observer.OutcomeUnreachable, Error: observer.CleanText(text, maxErrorRunes)}}
}

// gates tracks which of the waiting gates one host's goroutine holds.
type gates struct {
	pending, parked           *semaphore.Weighted
	holdsPending, holdsParked bool
}

// leave gives back the waiting gates held.
func (g *gates) leave() {
	if g.holdsPending {
		g.holdsPending = false
		g.pending.Release(1)
	}
	if g.holdsParked {
		g.holdsParked = false
		g.parked.Release(1)
	}
}

// takeAddress takes addr, waiting if another check holds it; while it
// waits it moves from pending to parked when parked has room. On error it
// does not hold the address.
func (g *gates) takeAddress(ctx context.Context, l *AddressLimiter, addr netip.Addr) error {
	ok, err := l.TryAcquire(addr)
	if ok || err != nil {
		return err
	}
	if g.parked.TryAcquire(1) {
		g.holdsParked = true
		g.holdsPending = false
		g.pending.Release(1)
	}
	return l.Acquire(ctx, addr)
}

// dedupe drops discoveries already made earlier in this pass, so each new
// host is recorded once, and counts the check's new peers accordingly.
func (p *Pass) dedupe(r observer.Result, found *KnownSet) observer.Result {
	if len(r.Discoveries) == 0 {
		return r
	}
	kept := r.Discoveries[:0:0]
	newPeers := int64(0)
	for _, d := range r.Discoveries {
		if p.Known.Has(d.Host) || !found.Add(d.Host) {
			continue
		}
		kept = append(kept, d)
		if d.Via == r.Check.Host {
			newPeers++
		}
	}
	r.Discoveries = slices.Clip(kept)
	if r.Check.PeersFetched {
		r.Check.NewPeersCount = newPeers
	}
	return r
}
