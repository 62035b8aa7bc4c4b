package testsupport

import (
	"context"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/fedisim"
)

// ModelChecker is a crawl.Checker that answers every check from sim in this
// process, as the crawler reads sim's served world over the network: the
// observer's own crawler with opts, its requests carried by sim.Transport
// and answered at the check's CheckedAt as the simulated time (at the
// simulator's clock when CheckedAt is zero). What it does
// not reproduce is below HTTP: no connections (so no bytes off the wire,
// WireBytes stays 0), no address guard, no connect-to rules.
//
// Its checks run on goroutines it keeps while they have work rather than
// on the caller's: the crawler's call path is deep, and the new goroutine
// a pass starts for each check would grow its stack, by copying, at every
// check.
func ModelChecker(sim *fedisim.Sim, opts crawl.Options) (crawl.Checker, error) {
	opts.Transport = sim.Transport()
	c, err := crawl.New(opts)
	if err != nil {
		return nil, err
	}
	workers := &workers{work: make(chan func())}
	return crawl.CheckFunc(func(ctx context.Context, host observer.Host, o crawl.CheckOptions) (res observer.Result, tr crawl.Trace) {
		if !o.CheckedAt.IsZero() {
			ctx = fedisim.WithNow(ctx, o.CheckedAt)
		}
		workers.run(func() { res, tr = c.Check(ctx, host, o) })
		return res, tr
	}), nil
}

// workers run functions on goroutines that stay while there is work: one
// more whenever none is idle, each gone after workersIdle without any.
type workers struct{ work chan func() }

const workersIdle = time.Second

// run runs f on a worker and returns when it is done.
func (w *workers) run(f func()) {
	done := make(chan struct{})
	job := func() {
		defer close(done)
		f()
	}
	select {
	case w.work <- job:
	default:
		go w.worker(job)
	}
	<-done
}

func (w *workers) worker(job func()) {
	idle := time.NewTimer(workersIdle)
	defer idle.Stop()
	for {
		job()
		idle.Reset(workersIdle)
		select {
		case job = <-w.work:
		case <-idle.C:
			return
		}
	}
}
