package crawl

import (
	"context"
	"net/netip"
	"sync"

	"github.com/fediverse-observer/observer"
)

// job is one host for the producer to start.
type job struct {
	host       observer.Host
	discovered bool // found in this pass, not on the due list
	// holds is true for a host whose turn at its busy address has come:
	// the pass has resolved it to addr, and it holds addr already.
	holds bool
	addr  netip.AddrPort
}

// hostQueue is the order a pass takes its hosts in: hosts whose turn at a
// busy address has come (each holds its address, idle until it is
// checked; there is at most one per address), then discoveries made in
// this pass (they are what the observer exists to report, and a first pass
// from a seed list is mostly them), then the rest of the due list. It ends
// when all are empty and no started host can add to them any more, or when
// the budget ends; once limit hosts were handed out, only hosts whose turn
// has come are.
type hostQueue struct {
	mu    sync.Mutex
	cond  sync.Cond
	ready []job           // hosts whose turn at their address has come
	due   []observer.Host // the due list's hosts not yet handed out, in order
	found []observer.Host // discoveries admitted for this pass, first found first
	// inFlight counts hosts handed out whose results the collector has not
	// finished with (a host waiting for its address included): until it is
	// 0, discoveries and turns may still come.
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

// next hands out the next host to start; ok is false when the pass has no
// more hosts to start. It waits while the queue is empty but checks are
// still under way.
func (q *hostQueue) next(budget context.Context) (j job, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		switch {
		case budget.Err() != nil:
			return job{}, false
		case len(q.ready) > 0:
			// Handed out already when it first came: not counted again.
			j = q.ready[0]
			q.ready[0] = job{}
			q.ready = q.ready[1:]
			return j, true
		case q.limit != 0 && len(q.found) > 0:
			j = job{host: q.found[0], discovered: true}
			q.found = q.found[1:]
		case q.limit != 0 && len(q.due) > 0:
			j = job{host: q.due[0]}
			q.due = q.due[1:]
		case q.inFlight == 0:
			return job{}, false
		default:
			q.cond.Wait()
			continue
		}
		q.inFlight++
		if q.limit > 0 {
			q.limit--
		}
		return j, true
	}
}

// turn queues a host whose turn at its address has come.
func (q *hostQueue) turn(j job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ready = append(q.ready, j)
	q.cond.Broadcast()
}

// drainReady removes and returns the hosts whose turn came but which were
// not started: the pass ended first.
func (q *hostQueue) drainReady() []job {
	q.mu.Lock()
	defer q.mu.Unlock()
	r := q.ready
	q.ready = nil
	return r
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

// dueLeft is how many due-list hosts were never started: pastLimit of them
// because limit hosts had been handed out, ended because the pass ended
// first.
func (q *hostQueue) dueLeft() (pastLimit, ended int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.limit == 0 {
		return len(q.due), q.dueBack
	}
	return 0, len(q.due) + q.dueBack
}
