package testsupport

import (
	"context"

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
func ModelChecker(sim *fedisim.Sim, opts crawl.Options) (crawl.Checker, error) {
	opts.Transport = sim.Transport()
	c, err := crawl.New(opts)
	if err != nil {
		return nil, err
	}
	return crawl.CheckFunc(func(ctx context.Context, host observer.Host, o crawl.CheckOptions) (observer.Result, crawl.Trace) {
		if !o.CheckedAt.IsZero() {
			ctx = fedisim.WithNow(ctx, o.CheckedAt)
		}
		return c.Check(ctx, host, o)
	}), nil
}
