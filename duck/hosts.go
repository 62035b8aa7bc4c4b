package duck

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/fediverse-observer/observer"
)

// KnownHostsBound is an upper bound on the number of known hosts, cheap to
// read (the discoveries' row count, which Parquet keeps in each file's
// metadata): a host is recorded as a discovery once, seldom a few times, so
// a table sized by it holds every host KnownHosts returns. Views must have
// been created.
func (s *Reader) KnownHostsBound(ctx context.Context) (int, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM discoveries").Scan(&n); err != nil {
		return 0, fmt.Errorf("count known hosts: %w", err)
	}
	return int(n), nil
}

// KnownHosts calls fn for every known host, in batches of about two
// million (knownBatch): the driver holds a query's whole result in memory
// before the first row is read, which at twenty million hosts was about
// 940 MB of the crawl process's, outside its DuckDB memory_limit. A host
// discovered more than once may come more than once. Views must have been
// created.
func (s *Reader) KnownHosts(ctx context.Context, fn func(host observer.Host)) error {
	return s.knownHosts(ctx, knownBatch, fn)
}

// knownBatch is about how many hosts one of KnownHosts's queries returns:
// about 90 MB of results held at once, against a scan of the discoveries'
// host column for each batch.
const knownBatch = 1 << 21

// knownHosts reads the known hosts in parts of about batch hosts each, by
// a hash of the name: each part is a scan of the discoveries' host column,
// which costs far less than holding every name at once.
func (s *Reader) knownHosts(ctx context.Context, batch int, fn func(host observer.Host)) error {
	bound, err := s.KnownHostsBound(ctx)
	if err != nil {
		return err
	}
	parts := max(1, (bound+batch-1)/batch)
	for part := range parts {
		if err := s.knownHostsPart(ctx, parts, part, fn); err != nil {
			return fmt.Errorf("known hosts: %w", err)
		}
	}
	return nil
}

func (s *Reader) knownHostsPart(ctx context.Context, parts, part int, fn func(host observer.Host)) error {
	rows, err := s.db.QueryContext(ctx, sqlFile("queries/known.sql"), parts, part)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var host string
		if err := rows.Scan(&host); err != nil {
			return err
		}
		// Read back from the snapshots, which hold only valid hosts.
		fn(observer.Host(host))
	}
	return rows.Err()
}

// DueHost is one host of the due list.
type DueHost struct {
	Host observer.Host
	// FetchPeers: the host's peers list was never fetched, or not within
	// the peers interval.
	FetchPeers bool
	// New: the host was never checked (a discovery waiting for its first
	// check), for per-domain budgets of new hosts.
	New bool
	// The validators the peers list was last served with (empty for
	// none), for a conditional request.
	observer.PeersValidators
}

// PeersSchedule is how often peers lists are fetched (due.sql):
// Interval for a list that named no new host lately, down to MinInterval
// for one that keeps naming them (config.Crawl's peers_interval and
// peers_min_interval).
type PeersSchedule struct {
	Interval, MinInterval time.Duration
}

// DueHosts calls fn for every host due for a check at now by the schedule
// (state.next_check_at), soonest first. It reads the derived state, so
// derive (and create the views) after recording new discoveries: a host
// discovered since the last derivation is not in it yet.
func (s *Reader) DueHosts(ctx context.Context, now time.Time, peers PeersSchedule, fn func(DueHost)) error {
	minInterval := min(max(peers.MinInterval, time.Microsecond), peers.Interval)
	rows, err := s.db.QueryContext(ctx, sqlFile("queries/due.sql"), now.UTC(), peers.Interval.Microseconds(), minInterval.Microseconds())
	if err != nil {
		return fmt.Errorf("due hosts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d DueHost
		if err := rows.Scan(&d.Host, &d.FetchPeers, &d.New, &d.PeersETag, &d.PeersLastModified); err != nil {
			return fmt.Errorf("due hosts: %w", err)
		}
		fn(d)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("due hosts: %w", err)
	}
	return nil
}

// LatestCheck is the time of the latest check the derived state holds
// (through the views CreateViews defines), and false when it holds none.
func (s *Reader) LatestCheck(ctx context.Context) (time.Time, bool, error) {
	var latest sql.NullTime
	if err := s.db.QueryRowContext(ctx, "SELECT max(last_checked_at) FROM state").Scan(&latest); err != nil {
		return time.Time{}, false, fmt.Errorf("latest check: %w", s.blameQuery(ctx, err))
	}
	return latest.Time, latest.Valid, nil
}
