package testsupport

import (
	"context"
	"sync"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/fedisim"
)

// FastModelChecker is ModelChecker that runs the crawler once for each
// answer a host gives that does not move with the time, and hands the
// crawler's own result (and trace) back for every later check that would
// read the same answers: a check of a host that does not answer; one that
// reads robots.txt and NodeInfo but not the peers list; one whose list
// answers 304 to the ETag the check sends (fedisim.Sim.SpreadServes says
// which answers move: only whether a host answers and its list's ETag
// and body). A check that reads a list's body, which moves with the time
// and whose new names depend on the known hosts, runs the crawler every
// time, from its reading of the host's robots.txt and NodeInfo kept by
// the first such check (crawl.CheckOptions.Prelude). What is reused is only what the crawler read: the host, the
// check's time and pass and the validators it sent are the check's own,
// its duration 0 (no network was waited for), and a reused 304 counts in
// sim's Stats as a served one does. TestFastModelCheckerIsTheCrawler holds
// its results and traces equal to ModelChecker's over a seeded world's
// hosts and times; the networked benchmark at 10,000 instances is what
// measures the crawler's real reading.
//
// It keeps a result for each host and kind of reading it reuses, about
// 1.4 KB with the trace: 1.5 to 2 GB at a million instances; and a
// prelude for each host whose list it read.
func FastModelChecker(sim *fedisim.Sim, opts crawl.Options) (crawl.Checker, error) {
	slow, err := ModelChecker(sim, opts)
	if err != nil {
		return nil, err
	}
	f := &fastModel{sim: sim, slow: slow, preludes: map[observer.Host]*crawl.Prelude{}}
	for i := range f.kept {
		f.kept[i] = map[observer.Host]kept{}
	}
	return f, nil
}

// answerKind is which of a host's answers a check reads that do not move.
type answerKind int

const (
	answersNot         answerKind = iota // the host does not answer
	answersNoPeers                       // robots.txt and NodeInfo; the list is not asked for
	answersNotModified                   // those, and the list answers 304
	answerKinds
)

type fastModel struct {
	sim  *fedisim.Sim
	slow crawl.Checker
	mu   sync.Mutex
	kept [answerKinds]map[observer.Host]kept
	// preludes are the crawler's readings of hosts before their lists.
	preludes map[observer.Host]*crawl.Prelude
}

// kept is the crawler's reading of one of a host's answers.
type kept struct {
	res observer.Result
	tr  crawl.Trace
}

func (f *fastModel) Check(ctx context.Context, host observer.Host, o crawl.CheckOptions) (observer.Result, crawl.Trace) {
	if o.CheckedAt.IsZero() {
		return f.slow.Check(ctx, host, o)
	}
	alive, etag, ok := f.sim.SpreadServes(string(host), o.CheckedAt)
	var kind answerKind
	switch {
	case !ok:
		return f.slow.Check(ctx, host, o)
	case !alive:
		kind = answersNot
	case !o.FetchPeers:
		kind = answersNoPeers
	case etag != "" && o.PeersValidators == observer.PeersValidators{PeersETag: etag}:
		// The list answers 304, if this host's check asks for it
		// conditionally at all: a reading kept as a 304 says it does.
		kind = answersNotModified
	default:
		return f.readList(ctx, host, o)
	}
	f.mu.Lock()
	k, hit := f.kept[kind][host]
	f.mu.Unlock()
	if hit {
		res := k.res
		res.Check.CheckedAt, res.Check.PassID, res.Check.DurationMS = o.CheckedAt.UTC(), o.PassID, 0
		if kind == answersNotModified {
			res.Check.PeersValidators = o.PeersValidators
			f.sim.AddNotModified(1)
		}
		return res, k.tr
	}
	res, tr := f.slow.Check(ctx, host, o)
	if reusable(kind, res) {
		f.mu.Lock()
		f.kept[kind][host] = kept{res: res, tr: tr}
		f.mu.Unlock()
	}
	return res, tr
}

// readList runs the crawler for a check of a host that answers and whose
// list it reads, from the host's prelude if a check kept one.
func (f *fastModel) readList(ctx context.Context, host observer.Host, o crawl.CheckOptions) (observer.Result, crawl.Trace) {
	f.mu.Lock()
	p := f.preludes[host]
	f.mu.Unlock()
	if p != nil {
		o.Prelude = p
		return f.slow.Check(ctx, host, o)
	}
	o.Prelude = new(crawl.Prelude)
	res, tr := f.slow.Check(ctx, host, o)
	if o.Prelude.Kept() {
		f.mu.Lock()
		f.preludes[host] = o.Prelude
		f.mu.Unlock()
	}
	return res, tr
}

// reusable says whether res, of a check that read answers of kind, is the
// same for every check that reads them: not when it discovered or names
// another host, which the known hosts decide, nor when a list asked for
// with its ETag did not answer 304 (this host's check does not ask for it
// conditionally).
func reusable(kind answerKind, res observer.Result) bool {
	c := res.Check
	if len(res.Discoveries) > 0 || c.MovedTo != "" || res.OverListCap > 0 || c.PeersFetched {
		return false
	}
	return kind != answersNotModified || c.PeersNotModified
}
