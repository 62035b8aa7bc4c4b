package duck

import (
	"context"
	"fmt"
	"time"
)

// KnownHosts calls fn for every known host, streaming, so a million hosts
// never sit in one slice here. Views must have been created.
func (s *Store) KnownHosts(ctx context.Context, fn func(host string)) error {
	return s.eachHost(ctx, "known", sqlFile("known.sql"), fn)
}

// DueHosts calls fn for every host due for a check at now, in the order a
// pass should take them. Views must have been created.
func (s *Store) DueHosts(ctx context.Context, now time.Time, fn func(host string)) error {
	return s.eachHost(ctx, "due", sqlFile("due.sql"), fn, now.UTC())
}

func (s *Store) eachHost(ctx context.Context, what, query string, fn func(string), args ...any) error {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s hosts: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var host string
		if err := rows.Scan(&host); err != nil {
			return fmt.Errorf("%s hosts: %w", what, err)
		}
		fn(host)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s hosts: %w", what, err)
	}
	return nil
}
