package duck

import (
	"context"

	"github.com/fediverse-observer/observer"
)

// CreateBlocklistViews defines the blocklist's views alone (blocked, and
// the macros blocking, is_blocked and blocked_by; CreateViews defines them
// with the rest), for what matches hosts against the blocklist without the derived
// state: observer add, and a first pass from its seeds. entries are in
// the file's form ("host" or "*.domain", as hostname.Blocklist.Entries
// gives them).
func (s *Reader) CreateBlocklistViews(ctx context.Context, entries []string) error {
	vs, err := blocklistViews(entries)
	if err != nil {
		return err
	}
	return s.createViews(ctx, vs)
}

// BlockedAmong is, of hosts, those the blocklist names, each with the entry
// that names it in the file's form (blocked_by, queries/blocked_among.sql):
// one query for the whole list. The blocklist's views must have been created
// (CreateViews or CreateBlocklistViews).
func (s *Reader) BlockedAmong(ctx context.Context, hosts []observer.Host) (map[observer.Host]string, error) {
	return among[string](ctx, s, "match the blocklist", "queries/blocked_among.sql", hosts)
}
