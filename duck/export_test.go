package duck

import (
	"context"
	"time"

	"github.com/fediverse-observer/observer"
)

// SnapshotWriterOptions are the Parquet writer options of the snapshot
// files, for tests that write snapshots of their own.
const SnapshotWriterOptions = parquetKept

// WindowOnly makes the fold take every host through the windowed fold
// (fold_runs), never fold_step's fold without windows, so tests can compare
// the two.
func WindowOnly(o DeriveOptions) DeriveOptions {
	o.windowOnly = true
	return o
}

// WithFoldBuckets makes the windowed fold split into buckets of about checks
// checks.
func WithFoldBuckets(o DeriveOptions, checks int64) DeriveOptions {
	o.foldBucketChecks = checks
	return o
}

// WithRetiredGrace makes the derivation keep retired files for grace
// instead of the default hour.
func WithRetiredGrace(o DeriveOptions, grace time.Duration) DeriveOptions {
	o.retiredGrace = &grace
	return o
}

// WithDerivedParts makes the derivation merge its transitions and live
// events files once there are more than parts of them.
func WithDerivedParts(o DeriveOptions, parts int) DeriveOptions {
	o.maxDerivedParts = parts
	return o
}

// WithoutNullCounts makes the derivation check snapshot files as if their
// footers held no null counts.
func WithoutNullCounts(o DeriveOptions) DeriveOptions {
	o.noNullCounts = true
	return o
}

// WithSeveralInMemory makes an incremental step read the new checks of hosts
// checked more than once from their files (a view) once they are more
// than checks; below 0, always.
func WithSeveralInMemory(o DeriveOptions, checks int64) DeriveOptions {
	o.severalInMemory = checks
	return o
}

// KeyByHostName makes the edge picks and the windowed fold key hosts by
// name, as they do when two of the checked hosts' hashes collide.
func KeyByHostName(o DeriveOptions) DeriveOptions {
	o.keyByHostName = true
	return o
}

// AliveDaysAsBitstring makes fold_hosts keep each host's alive days as a
// bitstring, as it does when a step's checks span more than 63 days.
func AliveDaysAsBitstring(o DeriveOptions) DeriveOptions {
	o.aliveDaysBitstring = true
	return o
}

// KnownHostsInBatches is Reader.KnownHosts reading about batch hosts per
// query instead of knownBatch.
func KnownHostsInBatches(ctx context.Context, s *Store, batch int, fn func(host observer.Host)) error {
	return s.Reader.knownHosts(ctx, batch, fn)
}

// WithDeltaFraction makes an incremental step fold the hosts it touches
// alone, and keep a delta, up to fraction of the base's rows instead of a
// quarter; below 0, never.
func WithDeltaFraction(o DeriveOptions, fraction float64) DeriveOptions {
	o.deltaFraction = fraction
	return o
}

// DerivedState is the derived state's rows as a relation for SQL (its base
// with its delta), and whether the state in force has a delta.
func DerivedState(s *Store) (source string, delta bool, err error) {
	m, err := s.Reader.readManifest()
	if err != nil {
		return "", false, err
	}
	return s.Reader.stateSource(m), m != nil && m.Delta != "", nil
}
