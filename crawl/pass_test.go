package crawl_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
)

type memSink struct {
	results  []observer.Result
	failAt   int // fail the nth Record (1-based); 0: never
	onRecord func(observer.Result)
}

func (s *memSink) Record(_ context.Context, r observer.Result) error {
	if s.failAt > 0 && len(s.results)+1 == s.failAt {
		return errors.New("disk full")
	}
	s.results = append(s.results, r)
	if s.onRecord != nil {
		s.onRecord(r)
	}
	return nil
}

func (s *memSink) hosts() []string {
	var out []string
	for _, r := range s.results {
		out = append(out, string(r.Check.Host))
	}
	return out
}

// fakeChecker answers at once: alive, with the given discoveries per host.
type fakeChecker struct {
	mu        sync.Mutex
	calls     map[string]int
	peers     map[string][]string
	block     map[string]chan struct{} // hosts whose check waits for ctx or the channel
	running   atomic.Int64
	maxActive atomic.Int64
	opts      map[string]crawl.CheckOptions
}

func newFake() *fakeChecker {
	return &fakeChecker{calls: map[string]int{}, peers: map[string][]string{}, block: map[string]chan struct{}{}, opts: map[string]crawl.CheckOptions{}}
}

func (f *fakeChecker) Check(ctx context.Context, host observer.Host, opts crawl.CheckOptions) (observer.Result, crawl.Trace) {
	n := f.running.Add(1)
	defer f.running.Add(-1)
	for {
		m := f.maxActive.Load()
		if n <= m || f.maxActive.CompareAndSwap(m, n) {
			break
		}
	}
	f.mu.Lock()
	f.calls[string(host)]++
	f.opts[string(host)] = opts
	ch := f.block[string(host)]
	peers := f.peers[string(host)]
	f.mu.Unlock()
	r := observer.Result{Check: observer.Check{Host: observer.Host(host), CheckedAt: opts.CheckedAt, Outcome: observer.OutcomeAlive, PassID: opts.PassID}, Bytes: 10}
	if ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
			r.Check.Outcome = observer.OutcomeError
			r.Check.Error = "canceled"
			return r, crawl.Trace{}
		}
	}
	if opts.FetchPeers {
		r.Check.PeersFetched = true
		for _, p := range peers {
			if !opts.Known.Has(observer.Host(p)) {
				r.Discoveries = append(r.Discoveries, observer.Discovery{Host: observer.Host(p), DiscoveredAt: opts.CheckedAt, Via: string(host)})
			}
		}
		r.Check.PeersCount = int64(len(peers))
		r.Check.NewPeersCount = int64(len(r.Discoveries))
	}
	return r, crawl.Trace{}
}

func TestPassDedupesAndRecordsDiscoveriesOnce(t *testing.T) {
	f := newFake()
	f.peers["a.social"] = []string{"new.social", "known.social", "other.social"}
	f.peers["b.social"] = []string{"new.social", "third.social"}
	sink := &memSink{}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := &crawl.Pass{
		Checker: f, Sink: sink, Known: known("a.social", "b.social", "known.social"),
		Concurrency: 1, Now: now, PassID: "pass-1",
		Peers: func(h observer.Host) crawl.PeersDue { return crawl.PeersDue{Fetch: true} },
	}
	// The due list holds hosts as recorded (observer.Host); only repeats
	// are left out.
	sum, err := p.Run(context.Background(), []observer.Host{"a.social", "a.social", "b.social", "a.social"})
	if err != nil {
		t.Fatal(err)
	}
	if f.calls["a.social"] != 1 || f.calls["b.social"] != 1 || len(f.calls) != 2 {
		t.Errorf("calls = %v, want one per host", f.calls)
	}
	if sum.Checks != 2 || sum.Duplicates != 2 || sum.ByOutcome[observer.OutcomeAlive] != 2 || sum.Bytes != 20 {
		t.Errorf("summary = %+v", sum)
	}
	var disc []string
	for _, r := range sink.results {
		disc = append(disc, hostsOf(r.Discoveries)...)
		if r.Check.PassID != "pass-1" || r.Check.CheckedAt.Before(now) || r.Check.CheckedAt.After(now.Add(time.Minute)) {
			t.Errorf("check %s: pass %q at %v", r.Check.Host, r.Check.PassID, r.Check.CheckedAt)
		}
	}
	want := "new.social<a.social other.social<a.social third.social<b.social"
	if strings.Join(disc, " ") != want || sum.Discovered != 3 {
		t.Errorf("discoveries = %v (%d), want %s", disc, sum.Discovered, want)
	}
	// b.social's count is corrected: new.social was found earlier in the pass.
	if got := sink.results[1].Check.NewPeersCount; got != 1 {
		t.Errorf("b.social new peers = %d, want 1", got)
	}
	// The whole report: one line per outcome that occurred and none for the
	// counts that stayed zero. Duration is the pass's wall time, so it is
	// fixed here to keep the text exact.
	text := sum
	text.EndedAt = text.StartedAt.Add(1500 * time.Millisecond)
	wantText := "pass pass-1: 2 checks in 1.5s, 3 hosts discovered, 20 bytes fetched\n" +
		"  alive            2\n" +
		"  skipped: 2 duplicate hosts in the due list\n"
	if got := text.String(); got != wantText {
		t.Errorf("summary text:\n%s\nwant:\n%s", got, wantText)
	}
}

// One peers list adds at most MaxNewPerList new hosts and the pass at most
// MaxNewPerPass, whatever the checker sends; the rest are dropped and
// counted, with what the checker itself dropped.
func TestPassCapsNewHosts(t *testing.T) {
	f := newFake()
	flood := func(prefix string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%s%d.example", prefix, i))
		}
		return out
	}
	f.peers["a.social"] = flood("a", 10)
	f.peers["b.social"] = append([]string{"a0.example"}, flood("b", 10)...)
	f.peers["c.social"] = flood("c", 10)
	checker := crawl.CheckFunc(func(ctx context.Context, host observer.Host, opts crawl.CheckOptions) (observer.Result, crawl.Trace) {
		r, tr := f.Check(ctx, host, opts)
		if host == "a.social" {
			r.OverListCap = 100 // what the checker dropped itself
		}
		return r, tr
	})
	sink := &memSink{}
	p := &crawl.Pass{Checker: checker, Sink: sink, Known: known("a.social", "b.social", "c.social"), Concurrency: 1,
		MaxNewPerList: 4, MaxNewPerPass: 10}
	sum, err := p.Run(context.Background(), []observer.Host{"a.social", "b.social", "c.social"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range sink.results {
		got = append(got, fmt.Sprintf("%s:%d", r.Check.Host, r.Check.NewPeersCount))
		for _, d := range r.Discoveries {
			got = append(got, string(d.Host))
		}
	}
	// a0.example, already found in this pass, is not counted against b's
	// cap; c.social meets the pass's cap after two.
	want := "a.social:4 a0.example a1.example a2.example a3.example b.social:4 b0.example b1.example b2.example b3.example c.social:2 c0.example c1.example"
	if strings.Join(got, " ") != want {
		t.Errorf("recorded %s\nwant     %s", strings.Join(got, " "), want)
	}
	if sum.Discovered != 10 || sum.OverListCap != 100+6+6 || sum.OverPassCap != 8 {
		t.Errorf("discovered %d, over list cap %d, over pass cap %d; want 10, 112, 8", sum.Discovered, sum.OverListCap, sum.OverPassCap)
	}
}

// Each optional line of the summary appears exactly when its count is not
// zero, so a quiet pass reads short and a count that matters is never
// hidden.
func TestSummaryString(t *testing.T) {
	head := "pass p: 0 checks in 0s, 0 hosts discovered, 0 bytes fetched\n"
	for _, tc := range []struct {
		name string
		sum  crawl.Summary
		want string
	}{
		{"empty", crawl.Summary{Pass: observer.Pass{PassID: "p"}}, head},
		{"zero outcomes are not listed", crawl.Summary{Pass: observer.Pass{PassID: "p", Tally: observer.Tally{ByOutcome: map[observer.Outcome]int64{
			observer.OutcomeAlive: 0, observer.OutcomeError: 1, observer.OutcomeUnreachable: 0,
		}}}}, head + "  error            1\n"},
		{"outcomes in their fixed order", crawl.Summary{Pass: observer.Pass{PassID: "p", Tally: observer.Tally{Checks: 3, ByOutcome: map[observer.Outcome]int64{
			observer.OutcomeError: 1, observer.OutcomeAlive: 2,
		}}}}, "pass p: 3 checks in 0s, 0 hosts discovered, 0 bytes fetched\n  alive            2\n  error            1\n"},
		{"not started", crawl.Summary{Pass: observer.Pass{PassID: "p", NotStarted: 4}}, head + "  not started (left for a later pass): 4 (time budget (duration) reached)\n"},
		{"abandoned", crawl.Summary{Pass: observer.Pass{PassID: "p", Abandoned: 5}}, head + "  abandoned (interrupted, or not written): 5\n"},
		{"addresses", crawl.Summary{Pass: observer.Pass{PassID: "p", Addresses: 2, BusiestAddressRequests: 9, AddressesOverBudget: 1, SkippedAddressBudget: 3}},
			head + "  addresses: 2, busiest took 9 requests; 1 over budget, 3 hosts left for a later pass\n"},
		{"caps", crawl.Summary{Pass: observer.Pass{PassID: "p", OverPassCap: 3}},
			head + "  new hosts dropped: 0 over the cap per peers list, 3 over the cap per pass\n"},
		// Either kind of skipped host alone is reported.
		{"duplicates", crawl.Summary{Pass: observer.Pass{PassID: "p"}, Duplicates: 2}, head + "  skipped: 2 duplicate hosts in the due list\n"},
	} {
		if got := tc.sum.String(); got != tc.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tc.name, got, tc.want)
		}
	}
}

func TestPassPeersFlag(t *testing.T) {
	f := newFake()
	p := &crawl.Pass{Checker: f, Sink: &memSink{}, Concurrency: 2,
		Peers: func(h observer.Host) crawl.PeersDue {
			switch h {
			case "a.social":
				return crawl.PeersDue{Fetch: true, PeersValidators: observer.PeersValidators{PeersETag: `W/"a1"`, PeersLastModified: "Wed, 21 Oct 2026 07:28:00 GMT"}}
			case "b.social":
				return crawl.PeersDue{Fetch: false, PeersValidators: observer.PeersValidators{PeersETag: `"stale"`}}
			}
			return crawl.PeersDue{Fetch: true}
		}}
	if _, err := p.Run(context.Background(), []observer.Host{"a.social", "b.social", "c.social"}); err != nil {
		t.Fatal(err)
	}
	a, b, c := f.opts["a.social"], f.opts["b.social"], f.opts["c.social"]
	if !a.FetchPeers || b.FetchPeers || !c.FetchPeers {
		t.Errorf("FetchPeers: a %v, b %v, c %v", a.FetchPeers, b.FetchPeers, c.FetchPeers)
	}
	if a.PeersETag != `W/"a1"` || a.PeersLastModified != "Wed, 21 Oct 2026 07:28:00 GMT" {
		t.Errorf("a's validators = %q %q", a.PeersETag, a.PeersLastModified)
	}
	// Validators of a list that is not due are not passed on.
	if b.PeersETag != "" || c.PeersETag != "" || c.PeersLastModified != "" {
		t.Errorf("b's, c's validators = %q, %q %q", b.PeersETag, c.PeersETag, c.PeersLastModified)
	}
}

func TestPassMaxChecksAndConcurrency(t *testing.T) {
	f := newFake()
	sink := &memSink{}
	var due []observer.Host
	for _, h := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		due = append(due, observer.Host(h+".social"))
	}
	p := &crawl.Pass{Checker: f, Sink: sink, Concurrency: 3, MaxChecks: 5}
	sum, err := p.Run(context.Background(), due)
	if err != nil {
		t.Fatal(err)
	}
	if len(sink.results) != 5 || sum.Checks != 5 || sum.NotStarted != 3 || len(f.calls) != 5 {
		t.Errorf("recorded %d, summary %+v, calls %v", len(sink.results), sum, f.calls)
	}
	if m := f.maxActive.Load(); m > 3 {
		t.Errorf("%d checks ran at once, limit 3", m)
	}
}

func TestPassCancellationKeepsFinished(t *testing.T) {
	// Every check waits until the test lets it finish, or for the
	// cancellation. The first two to start are let finish; the pass is
	// cancelled when it has recorded them, with later checks still
	// running. (Which hosts start first is up to the scheduler: a host
	// waiting for a slot can overtake the one before it.)
	f := newFake()
	due := []observer.Host{"a.social", "b.social", "slow.social", "c.social", "d.social"}
	for _, h := range due {
		f.block[string(h)] = make(chan struct{})
	}
	started := make(chan string, len(due))
	checker := crawl.CheckFunc(func(ctx context.Context, host observer.Host, opts crawl.CheckOptions) (observer.Result, crawl.Trace) {
		started <- string(host)
		return f.Check(ctx, host, opts)
	})
	finished := map[string]bool{}
	go func() {
		for range 2 {
			h := <-started
			finished[h] = true // read after Run, which waits for this
			close(f.block[h])
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sink := &memSink{}
	sink.onRecord = func(r observer.Result) {
		if len(sink.results) == 2 {
			cancel() // as SIGINT would, with checks still running
		}
	}
	p := &crawl.Pass{Checker: checker, Sink: sink, Concurrency: 2}
	sum, err := p.Run(ctx, due)
	if err != nil {
		t.Fatal(err)
	}
	got := sink.hosts()
	if len(got) != 2 || !finished[got[0]] || !finished[got[1]] {
		t.Errorf("recorded %v, want the two finished checks %v", got, finished)
	}
	calls := int64(0)
	for _, h := range due {
		calls += int64(f.calls[string(h)])
	}
	// The other checks were abandoned, or not yet started when the
	// cancellation came.
	if sum.Checks != 2 || sum.Abandoned+sum.NotStarted != 3 || sum.Abandoned != calls-2 {
		t.Errorf("summary %+v, calls %v", sum, f.calls)
	}
	// Two slots: at most two checks ran after the finished ones, and the
	// abandoned ones gave their slots back, so a fifth check would only
	// have run had the pass kept starting checks after the cancellation.
	if calls > 4 || sum.NotStarted < 1 {
		t.Errorf("a check started after cancellation: summary %+v, calls %v", sum, f.calls)
	}
}

func TestPassBudget(t *testing.T) {
	f := newFake()
	release := make(chan struct{})
	f.block["a.social"] = release
	started := make(chan struct{})
	checker := crawl.CheckFunc(func(ctx context.Context, host observer.Host, opts crawl.CheckOptions) (observer.Result, crawl.Trace) {
		if host == "a.social" {
			close(started)
		}
		return f.Check(ctx, host, opts)
	})
	sink := &memSink{}
	p := &crawl.Pass{Checker: checker, Sink: sink, Concurrency: 1, Duration: time.Hour}
	var asked time.Duration
	runOut := crawl.ManualBudget(p, func(d time.Duration) { asked = d })
	// The budget runs out while a.social is being checked; then a.social
	// finishes.
	go func() {
		<-started
		runOut()
		close(release)
	}()
	sum, err := p.Run(context.Background(), []observer.Host{"a.social", "b.social", "c.social"})
	if err != nil {
		t.Fatal(err)
	}
	if asked != time.Hour {
		t.Errorf("budget of %s, want the Duration", asked)
	}
	// The running check finishes and is recorded; no check starts after
	// the budget.
	if got := sink.hosts(); len(got) != 1 || got[0] != "a.social" || sink.results[0].Check.Outcome != observer.OutcomeAlive {
		t.Errorf("recorded %v", got)
	}
	if sum.NotStarted != 2 || sum.Checks != 1 || f.calls["b.social"] != 0 || f.calls["c.social"] != 0 {
		t.Errorf("summary %+v, calls %v", sum, f.calls)
	}
}

func TestPassSinkError(t *testing.T) {
	f := newFake()
	sink := &memSink{failAt: 2}
	p := &crawl.Pass{Checker: f, Sink: sink, Concurrency: 1}
	sum, err := p.Run(context.Background(), []observer.Host{"a.social", "b.social", "c.social", "d.social"})
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "b.social") {
		t.Fatalf("err = %v", err)
	}
	if sum.Checks != 1 || len(sink.results) != 1 {
		t.Errorf("summary %+v", sum)
	}
}

// The real crawler in a pass: one check per host, over the test net.
func TestPassWithCrawler(t *testing.T) {
	e := newEnv(t)
	e.host("a.social", instance("a.social", "mastodon", `["b.social","c.social"]`))
	e.host("b.social", instance("b.social", "mastodon", `["a.social","c.social","d.social"]`))
	sink := &memSink{}
	p := &crawl.Pass{Checker: e.c, Sink: sink, Known: known("a.social", "b.social"), Concurrency: 2}
	sum, err := p.Run(context.Background(), []observer.Host{"a.social", "b.social", "a.social"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Checks != 2 || sum.ByOutcome[observer.OutcomeAlive] != 2 || sum.Discovered != 2 || sum.Bytes <= 0 {
		t.Errorf("summary %+v", sum)
	}
	if n := len(e.srv.Paths("a.social")); n != 4 {
		t.Errorf("a.social got %d requests, want 4 (one check)", n)
	}
}

var _ crawl.Checker = crawl.CheckFunc(nil)
var _ crawl.Checker = (*crawl.Crawler)(nil)

// The data/passes row keeps the summary's figures, each in its own column,
// and the due list's.
func TestSummaryPassRowKeepsEveryFigure(t *testing.T) {
	due := crawl.NewDueList(1)
	due.Offer("blocked.example", false, true, crawl.PeersDue{Fetch: true})
	due.Offer("a.example", true, false, crawl.PeersDue{Fetch: true})
	due.Offer("b.a.example", true, false, crawl.PeersDue{Fetch: true})
	sum := crawl.Summary{Pass: observer.Pass{PassID: "p", SkippedAddressBudget: 2, Addresses: 3, BusiestAddressRequests: 5, AddressesOverBudget: 7,
		Abandoned: 11, NotStarted: 13, OverListCap: 17, OverPassCap: 19,
		Tally: observer.Tally{Checks: 1, ByOutcome: map[observer.Outcome]int64{observer.OutcomeError: 4, observer.OutcomeCheckerFailed: 6, observer.OutcomeAlive: 1}}}}
	p := sum.PassRow(due, "budget reached")
	got := [...]int64{p.SkippedAddressBudget, p.Addresses, p.BusiestAddressRequests, p.AddressesOverBudget, p.Due, p.Blocklisted, p.OverDomainBudget, p.Errors(),
		p.ByOutcome[observer.OutcomeAlive], p.Abandoned, p.NotStarted, p.OverListCap, p.OverPassCap}
	if want := [...]int64{2, 3, 5, 7, 1, 1, 1, 10, 1, 11, 13, 17, 19}; got != want {
		t.Fatalf("skipped, addresses, busiest, over budget, due, blocklisted, over domain budget, errors, alive, abandoned, not started, over list cap, over pass cap = %v, want %v", got, want)
	}
	if p.CutShort != "budget reached" || p.PassID != "p" {
		t.Fatalf("cut short %q, pass %q", p.CutShort, p.PassID)
	}
}

// A pass that leaves hosts over names the budget that left them.
func TestNotStartedReasonNamesTheCause(t *testing.T) {
	for _, c := range []struct {
		sum  crawl.Summary
		want string
	}{
		{crawl.Summary{Pass: observer.Pass{NotStarted: 5}}, "5 due hosts left for a later pass (time budget (duration) reached)"},
		{crawl.Summary{Pass: observer.Pass{NotStarted: 3}, PastMaxChecks: 3}, "3 due hosts left for a later pass (max_checks reached)"},
		{crawl.Summary{Pass: observer.Pass{NotStarted: 5}, PastMaxChecks: 2}, "5 due hosts left for a later pass (2: max_checks reached; 3: time budget (duration) reached)"},
		{crawl.Summary{Pass: observer.Pass{SkippedAddressBudget: 4}}, ""},
	} {
		if got := c.sum.CutShort(false); got != c.want {
			t.Errorf("CutShort(%+v) = %q, want %q", c.sum, got, c.want)
		}
	}
}
