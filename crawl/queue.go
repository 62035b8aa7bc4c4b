package crawl

import (
	"context"
	"sync"

	"github.com/fediverse-observer/observer"
)

// hostQueue is the order a pass takes its hosts in: discoveries made in
// this pass first (they are what the observer exists to report, and a
// first pass from a seed list is mostly them), then the rest of the due
// list. It ends when both are empty and no started host can add to them
// any more, when the budget ends, or when limit hosts were handed out.
type hostQueue struct {
	mu    sync.Mutex
	cond  sync.Cond
	due   []observer.Host // the due list's hosts not yet handed out, in order
	found []observer.Host // discoveries admitted for this pass, first found first
	// inFlight counts hosts handed out whose results the collector has not
	// finished with: until it is 0, discoveries may still come.
	inFlight int
	limit    int // hosts still to hand out; < 0: no limit
	// dueBack counts due-list hosts handed out but given back unstarted.
	dueBack int
}

// newHostQueue starts a queue over the due list; maxChecks (0: none)
// bounds all the hosts it hands out, discoveries included.
func newHostQueue(due []observer.Host, maxChecks int) *hostQueue {
	q := &hostQueue{due: due, limit: -1}
	if maxChecks > 0 {
		q.limit = maxChecks
	}
	q.cond.L = &q.mu
	return q
}

// next hands out the next host to check, and whether it was discovered in
// this pass; ok is false when the pass has no more hosts to start. It
// waits while the queue is empty but checks are still under way.
func (q *hostQueue) next(budget context.Context) (host observer.Host, discovered, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		switch {
		case budget.Err() != nil || q.limit == 0:
			return "", false, false
		case len(q.found) > 0:
			host, q.found = q.found[0], q.found[1:]
			discovered = true
		case len(q.due) > 0:
			host, q.due = q.due[0], q.due[1:]
		case q.inFlight == 0:
			return "", false, false
		default:
			q.cond.Wait()
			continue
		}
		q.inFlight++
		if q.limit > 0 {
			q.limit--
		}
		return host, discovered, true
	}
}

// giveBack returns a host next handed out that the producer did not start
// (the budget ended first); the pass ends after it.
func (q *hostQueue) giveBack(discovered bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inFlight--
	if !discovered {
		q.dueBack++
	}
}

// done marks one handed-out host's result as collected, its discoveries
// queued.
func (q *hostQueue) done() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inFlight--
	q.cond.Broadcast()
}

// addDiscovered queues a host discovered in this pass.
func (q *hostQueue) addDiscovered(host observer.Host) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.found = append(q.found, host)
	q.cond.Broadcast()
}

// wake lets a waiting next see that the budget has ended.
func (q *hostQueue) wake() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cond.Broadcast()
}

// dueLeft is how many due-list hosts were never started.
func (q *hostQueue) dueLeft() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.due) + q.dueBack
}
