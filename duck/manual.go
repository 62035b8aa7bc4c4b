package duck

import (
	"context"
	"fmt"
	"strings"
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

// BlockedError is AddManual refusing hosts on the blocklist: each, in the
// order given, with the entry that names it.
type BlockedError struct {
	Hosts   []observer.Host
	Entries []string
}

func (e *BlockedError) Error() string {
	named := make([]string, len(e.Hosts))
	for i, h := range e.Hosts {
		named[i] = fmt.Sprintf("%s (entry %q)", h, e.Entries[i])
	}
	return strings.Join(named, ", ")
}

// AddManual records hosts as manual discoveries at `at` (observer add),
// except those already known, and says what it did with each distinct host,
// in the order given: a host given twice is one host. A host the blocklist
// (its entries in the file's form) names refuses them all, with a
// *BlockedError: the command records all or nothing, so that it can be run
// again as it is once the list or the hosts are fixed. It reads the snapshots
// alone: it does not derive, and the derived state may be damaged or older
// than this observer until the next derivation. The discoveries are one
// file, so a failure records none of them.
func (s *Store) AddManual(ctx context.Context, hosts []observer.Host, at time.Time, blocklist []string) ([]ManualHost, error) {
	if err := s.Reader.CreateBlocklistViews(ctx, blocklist); err != nil {
		return nil, err
	}
	blocked, err := s.Reader.BlockedAmong(ctx, hosts)
	if err != nil {
		return nil, err
	}
	if len(blocked) > 0 {
		refused := &BlockedError{}
		for _, h := range hosts {
			if entry, ok := blocked[h]; ok {
				refused.Hosts, refused.Entries = append(refused.Hosts, h), append(refused.Entries, entry)
				delete(blocked, h) // named once, however often given
			}
		}
		return nil, refused
	}
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
