package duck

import (
	"fmt"
	"strconv"
	"time"
)

// Rules are the thresholds of the instance state machine, the windows of the
// published lists and the check schedule: what the derivation and the views
// over it are computed with (docs/data.md gives the rules). The caller maps
// its configuration to them; duck knows no defaults.
type Rules struct {
	// FailuresToDead: dying (or moving) becomes dead (or moved) after more
	// than this many failed checks in a row, the first at least DeadAfter
	// old.
	FailuresToDead int
	DeadAfter      time.Duration
	// ReviveAfter: reviving becomes live after staying alive this long.
	ReviveAfter time.Duration
	// LiveWindow: a host is live if it was alive within it.
	LiveWindow time.Duration
	// NewWindow: a host is new if its first alive check is this recent, and
	// it was not already known during the observer's first Warmup.
	NewWindow, Warmup time.Duration
	// The check intervals and their jitters (±); BackoffMax caps the
	// intervals of hosts that back off; DiscoveryDelay spreads the first
	// checks of new discoveries.
	ActiveInterval, ActiveJitter     time.Duration
	InactiveInterval, InactiveJitter time.Duration
	BackoffMax, DiscoveryDelay       time.Duration
}

// liveDays is the live window in whole days (at least one), the resolution
// of the daily live counts.
func (r Rules) liveDays() int64 {
	d := int64((r.LiveWindow + 24*time.Hour - 1) / (24 * time.Hour))
	return max(d, 1)
}

// stateSchema is the version of the materialised state (its files' columns,
// the transitions', and which files the manifest names for it). A state of
// another version cannot be carried, so a change of it (like a change of
// thresholds) makes the next derivation a full one. Version 8 added the
// delta (manifest.Delta): a version 7 state is a version 8 one without a
// delta, and is carried, while an observer of version 7, which would not
// read a delta, rebuilds a version 8 state.
const (
	stateSchema        = 8
	carriedStateSchema = 7
)

// fingerprint names what the fold itself depends on: the state's version
// and the thresholds. The schedule is not stored: the state view computes
// it when read.
func (r Rules) fingerprint() string { return r.fingerprintOf(stateSchema) }

func (r Rules) fingerprintOf(schema int) string {
	return fmt.Sprintf("schema=%d failures_to_dead=%d dead_after=%s revive_after=%s live_days=%d",
		schema, r.FailuresToDead, r.DeadAfter, r.ReviveAfter, r.liveDays())
}

// carries reports whether a state derived under the fingerprint old can be
// carried by a derivation under r.
func (r Rules) carries(old string) bool {
	return old == r.fingerprint() || old == r.fingerprintOf(carriedStateSchema)
}

// foldParams are the thresholds substituted for their {{name}} in the
// fold's SQL. They are numbers, so substitution cannot inject anything.
func (r Rules) foldParams() sqlParams {
	return sqlParams{
		"failures_to_dead": strconv.Itoa(r.FailuresToDead),
		"dead_after_us":    micros(r.DeadAfter),
		"revive_after_us":  micros(r.ReviveAfter),
		"live_days":        strconv.FormatInt(r.liveDays(), 10),
	}
}

// micros is d in whole microseconds, DuckDB's resolution, as SQL text.
func micros(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }
