package duck

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/fediverse-observer/observer"
)

// KnowsAnyHost says whether the snapshots record any host: a data
// directory that knows none has only its seed list to start from. It reads
// the snapshots alone (CreateSnapshotViews), so it holds before the first
// derivation.
func (s *Reader) KnowsAnyHost(ctx context.Context) (bool, error) {
	var found bool
	err := s.db.QueryRowContext(ctx, "SELECT true FROM discoveries LIMIT 1").Scan(&found)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("known hosts: %w", err)
	}
	return found, nil
}

// KnownAmong is the set of hosts, of those given, that the snapshots record
// (queries/known_among.sql): what a seed list or observer add must not
// record again. It reads the snapshots alone (CreateSnapshotViews): it runs
// before the derivation, which the hosts it leaves out must reach.
func (s *Reader) KnownAmong(ctx context.Context, hosts []observer.Host) (map[observer.Host]bool, error) {
	return among[bool](ctx, s, "known hosts", "queries/known_among.sql", hosts)
}

// among runs query, a file of queries/ whose $1 is a list of host names,
// for hosts, in one query however many they are: each row it returns is one
// of them and what the query says of it, a V.
func among[V any](ctx context.Context, s *Reader, what, query string, hosts []observer.Host) (map[observer.Host]V, error) {
	found := map[observer.Host]V{}
	if len(hosts) == 0 {
		return found, nil
	}
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = string(h)
	}
	rows, err := s.db.QueryContext(ctx, sqlFile(query), names)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var host string
		var v V
		if err := rows.Scan(&host, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		found[observer.Host(host)] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return found, nil
}

// KnownHostsCount is the number of known hosts, the derived state's rows
// (which Parquet keeps in the file's metadata), so that a table sized by
// it holds every host KnownHosts returns. The views must have been
// created (CreateViews) after the derivation.
func (s *Reader) KnownHostsCount(ctx context.Context) (int, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM state").Scan(&n); err != nil {
		return 0, fmt.Errorf("count known hosts: %w", s.blameQuery(ctx, err))
	}
	return int(n), nil
}

// KnownHosts calls fn for every known host, once each (the derived state
// has one row per host), in batches of about two million (knownBatch): the
// driver holds a query's whole result in memory before the first row is
// read, which at twenty million hosts was about 940 MB of the crawl
// process's, outside its DuckDB memory_limit. The views must have been
// created (CreateViews) after the derivation.
func (s *Reader) KnownHosts(ctx context.Context, fn func(host observer.Host)) error {
	return s.knownHosts(ctx, knownBatch, fn)
}

// knownBatch is about how many hosts one of KnownHosts's queries returns:
// about 90 MB of results held at once, against a scan of the state's host
// column for each batch.
const knownBatch = 1 << 21

// knownHosts reads the known hosts in parts of about batch hosts each, by
// a hash of the name: each part is a scan of the state's host column,
// which costs far less than holding every name at once.
func (s *Reader) knownHosts(ctx context.Context, batch int, fn func(host observer.Host)) error {
	n, err := s.KnownHostsCount(ctx)
	if err != nil {
		return err
	}
	parts := max(1, (n+batch-1)/batch)
	for part := range parts {
		if err := s.knownHostsPart(ctx, parts, part, fn); err != nil {
			return fmt.Errorf("known hosts: %w", s.blameQuery(ctx, err))
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
		// Derived from the snapshots, which hold only valid hosts.
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
	// Blocked: the operator's blocklist names the host (is_blocked), so
	// the pass leaves it out.
	Blocked bool
	// The validators the peers list was last served with (empty for
	// none), for a conditional request.
	observer.PeersValidators
}

// PeersSchedule is how often peers lists are fetched (due.sql):
// Interval for a list that named no new host lately, down to MinInterval
// for one that keeps naming them, and Conditional for a quiet one whose
// server gives validators (config.Crawl's peers_interval,
// peers_min_interval and peers_conditional_interval; Conditional 0 is
// Interval).
type PeersSchedule struct {
	Interval, MinInterval, Conditional time.Duration
}

// DueHosts calls fn for every host due for a check at now by the schedule
// (state.next_check_at), soonest first. It reads the derived state, so
// derive (and create the views) after recording new discoveries: a host
// discovered since the last derivation is not in it yet.
func (s *Reader) DueHosts(ctx context.Context, now time.Time, peers PeersSchedule, fn func(DueHost)) error {
	minInterval := min(max(peers.MinInterval, time.Microsecond), peers.Interval)
	conditional := peers.Interval
	if peers.Conditional > 0 {
		conditional = min(max(peers.Conditional, minInterval), peers.Interval)
	}
	rows, err := s.db.QueryContext(ctx, sqlFile("queries/due.sql"), now.UTC(), peers.Interval.Microseconds(), minInterval.Microseconds(), conditional.Microseconds())
	if err != nil {
		return fmt.Errorf("due hosts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d DueHost
		if err := rows.Scan(&d.Host, &d.FetchPeers, &d.New, &d.Blocked, &d.PeersETag, &d.PeersLastModified); err != nil {
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
