package duck

import (
	"context"
	"time"

	"github.com/fediverse-observer/observer"
)

// ManualHost is what AddManual did with one host.
type ManualHost struct {
	Host observer.Host
	// Known: the snapshots already knew the host, so it was not recorded
	// again.
	Known bool
}

// AddManual records hosts as manual discoveries at `at` (observer add),
// except those already known, and says what it did with each distinct host,
// in the order given: a host given twice is one host. It reads the snapshots
// alone: it does not derive, and the derived state may be damaged or older
// than this observer until the next derivation. The discoveries are one
// file, so a failure records none of them.
func (s *Store) AddManual(ctx context.Context, hosts []observer.Host, at time.Time) ([]ManualHost, error) {
	if err := s.Reader.CreateSnapshotViews(ctx); err != nil {
		return nil, err
	}
	known, err := s.Reader.KnownAmong(ctx, hosts)
	if err != nil {
		return nil, err
	}
	var out []ManualHost
	var ds []observer.Discovery
	given := map[observer.Host]bool{}
	for _, h := range hosts {
		if given[h] {
			continue
		}
		given[h] = true
		out = append(out, ManualHost{Host: h, Known: known[h]})
		if !known[h] {
			ds = append(ds, observer.Discovery{Host: h, DiscoveredAt: at, Via: observer.ViaManual})
		}
	}
	if err := s.Snapshots.WriteDiscoveries(ctx, ds); err != nil {
		return nil, err
	}
	return out, nil
}
