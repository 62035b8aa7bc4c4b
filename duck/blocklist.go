package duck

import (
	"context"
	"fmt"

	"github.com/fediverse-observer/observer"
)

// CreateBlocklistViews defines the blocklist's views alone (blocked, and
// the macros blocks and is_blocked; CreateViews defines them with the
// rest), for what matches hosts against the blocklist without the derived
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
// that names it in the file's form (queries/blocked_among.sql): one query
// for the whole list. The blocklist's views must have been created
// (CreateViews or CreateBlocklistViews).
func (s *Reader) BlockedAmong(ctx context.Context, hosts []observer.Host) (map[observer.Host]string, error) {
	if len(hosts) == 0 {
		return nil, nil
	}
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = string(h)
	}
	rows, err := s.db.QueryContext(ctx, sqlFile("queries/blocked_among.sql"), names)
	if err != nil {
		return nil, fmt.Errorf("match the blocklist: %w", err)
	}
	defer rows.Close()
	blocked := map[observer.Host]string{}
	for rows.Next() {
		var host, entry string
		if err := rows.Scan(&host, &entry); err != nil {
			return nil, fmt.Errorf("match the blocklist: %w", err)
		}
		blocked[observer.Host(host)] = entry
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("match the blocklist: %w", err)
	}
	return blocked, nil
}
