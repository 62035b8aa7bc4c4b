// Package observer holds the facts the whole program agrees on: what one
// check of an instance records, what a discovery is, the fixed vocabulary
// of outcomes, and how an instance's untrusted texts are cleaned and capped
// (CleanText). It has no dependencies beyond the standard library so that
// every other package (the crawler, the DuckDB store, the site builder) can
// share these types without importing each other. It also embeds the
// skeleton `observer new site` writes, and writes it (site.go, NewSite):
// go:embed cannot reach above a package's directory, and the skeleton is
// this repository's own files.
package observer

import "time"

// Outcome is the result of one check of one host. The set is closed: the
// snapshots, the SQL derivations and the site all rely on these exact strings.
type Outcome string

const (
	OutcomeAlive          Outcome = "alive"           // valid NodeInfo served by the host itself
	OutcomeOptedOut       Outcome = "opted_out"       // robots.txt (or another opt-out signal) said no
	OutcomeNotFediverse   Outcome = "not_fediverse"   // reachable, but no valid NodeInfo
	OutcomeMoved          Outcome = "moved"           // permanent cross-host redirect (301, 308)
	OutcomeMoving         Outcome = "moving"          // temporary cross-host redirect (302, 303, 307)
	OutcomeUnreachable    Outcome = "unreachable"     // DNS, connect, TLS or timeout failure
	OutcomeHTTPError      Outcome = "http_error"      // an HTTP status we cannot use
	OutcomeTooLarge       Outcome = "too_large"       // a body over its cap
	OutcomeBlockedAddress Outcome = "blocked_address" // resolved to a non-public address
	OutcomeCheckerFailed  Outcome = "checker_failed"  // the sandboxed checker crashed or overran
	OutcomeError          Outcome = "error"           // anything else
)

// Outcomes lists every outcome, in the order documented in docs/data.md.
func Outcomes() []Outcome {
	return []Outcome{
		OutcomeAlive, OutcomeOptedOut, OutcomeNotFediverse, OutcomeMoved,
		OutcomeMoving, OutcomeUnreachable, OutcomeHTTPError, OutcomeTooLarge,
		OutcomeBlockedAddress, OutcomeCheckerFailed, OutcomeError,
	}
}

// Valid reports whether o is one of the fixed outcomes. Receivers of results
// from untrusted checker processes use it to reject anything else.
func (o Outcome) Valid() bool {
	for _, known := range Outcomes() {
		if o == known {
			return true
		}
	}
	return false
}

// Check is one row of data/checks: everything one check of one host learnt.
// Pointer fields are nil when the instance did not say (NULL in Parquet), which
// is different from saying zero.
type Check struct {
	Host       Host      `json:"host"`
	CheckedAt  time.Time `json:"checked_at"` // UTC
	Outcome    Outcome   `json:"outcome"`
	Error      string    `json:"error,omitempty"` // short human-readable detail
	HTTPStatus int       `json:"http_status,omitempty"`

	Software        string `json:"software,omitempty"` // NodeInfo software.name, by CleanSoftware
	Version         string `json:"version,omitempty"`  // CleanText, at most MaxVersionRunes
	NodeInfoVersion string `json:"nodeinfo_version,omitempty"`

	Users             *int64 `json:"users,omitempty"`
	ActiveMonth       *int64 `json:"active_month,omitempty"`
	ActiveHalfyear    *int64 `json:"active_halfyear,omitempty"`
	LocalPosts        *int64 `json:"local_posts,omitempty"`
	OpenRegistrations *bool  `json:"open_registrations,omitempty"`

	Name        string `json:"name,omitempty"`        // CleanText, at most MaxNameRunes
	Description string `json:"description,omitempty"` // CleanText, at most MaxDescriptionRunes
	MovedTo     Host   `json:"moved_to,omitempty"`    // redirect target host for moved and moving

	PeersFetched  bool  `json:"peers_fetched"`
	PeersCount    int64 `json:"peers_count"`     // valid entries in the peers list
	NewPeersCount int64 `json:"new_peers_count"` // of those, hosts not known before
	// The peers list's validators, sent back next time; PeersNotModified
	// when it answered 304.
	PeersValidators
	PeersNotModified bool `json:"peers_not_modified,omitempty"`

	DurationMS int64  `json:"duration_ms"` // wall time of the whole check
	PassID     string `json:"pass_id"`

	// NodeInfoDocumentVersion is the version the NodeInfo document gives
	// itself, which may differ from NodeInfoVersion, the schema its link
	// named (both are kept). UnusableFields names the NodeInfo fields the
	// document gave in a form the check could not use (recorded as
	// unknown), as field paths ("openRegistrations", "usage.users.total").
	NodeInfoDocumentVersion string   `json:"nodeinfo_document_version,omitempty"`
	UnusableFields          []string `json:"unusable_fields,omitempty"`
	// WireBytes counts what the check read from the network: TLS records,
	// headers and bodies as they came, before any decoding.
	WireBytes int64 `json:"wire_bytes"`
}

// PeersValidators are the HTTP validators a peers list was last served
// with, sent back as If-None-Match and If-Modified-Since next time, so that
// an unchanged list costs a 304 and no parsing. They keep this one shape
// from the check that kept them, through the snapshot and the derived state,
// to the schedule and the next check's request. Empty means none.
type PeersValidators struct {
	PeersETag         string `json:"peers_etag,omitempty"`
	PeersLastModified string `json:"peers_last_modified,omitempty"`
}

// Via values for discoveries that did not come from a peers list.
const (
	ViaSeed     = "seed"     // the shipped seed list
	ViaRedirect = "redirect" // the target of a cross-host redirect
	ViaManual   = "manual"   // observer add
)

// Discovery is one row of data/discoveries: a host heard of for the first
// time, and where from (a host whose peers list named it, or one of the Via
// constants).
type Discovery struct {
	Host         Host      `json:"host"`
	DiscoveredAt time.Time `json:"discovered_at"` // UTC
	Via          string    `json:"via"`
}

// Result is what one check hands back to the pass: the check row and the new
// hosts it found.
type Result struct {
	Check       Check       `json:"check"`
	Discoveries []Discovery `json:"discoveries,omitempty"`
	// Bytes counts response body bytes after decoding, for the pass
	// summary; it is not stored per check (Check.WireBytes is what came
	// over the network).
	Bytes int64 `json:"bytes"`
	// OverListCap counts the peers list's new entries (repeats included)
	// the check did not keep for the cap on new hosts per list, for the
	// pass summary; it is not stored per check.
	OverListCap int64 `json:"over_list_cap,omitempty"`
}

// State is an instance's derived state (see docs/data.md for the rules).
type State string

const (
	StateDiscovered State = "discovered"
	StateLive       State = "live"
	StateDying      State = "dying"
	StateDead       State = "dead"
	StateReviving   State = "reviving"
	StateMoving     State = "moving"
	StateMoved      State = "moved"
	StateOptedOut   State = "opted_out"
)

// Instance is one row of a published list (live or new): the host's derived
// state and what its latest alive check said about it. Texts came from the
// instance itself and are untrusted: escape them wherever they are shown.
type Instance struct {
	Host              string    `json:"host"`
	State             State     `json:"state"`
	Software          string    `json:"software"`
	Version           string    `json:"version"`
	Users             *int64    `json:"users"`
	ActiveMonth       *int64    `json:"active_month"`
	OpenRegistrations *bool     `json:"open_registrations"`
	Name              string    `json:"name"`
	Description       string    `json:"description"`
	DiscoveredAt      time.Time `json:"discovered_at"`
	FirstAliveAt      time.Time `json:"first_alive_at"` // "first seen" on the site
	LastAliveAt       time.Time `json:"last_alive_at"`
}

// Transition is one change of an instance's state, caused by one check.
type Transition struct {
	Host    string    `json:"host"`
	From    State     `json:"from"`
	To      State     `json:"to"`
	At      time.Time `json:"at"`
	MovedTo string    `json:"moved_to,omitempty"`
}

// SoftwareCount is the number of live instances running one software.
type SoftwareCount struct {
	Software string `json:"software"`
	Live     int64  `json:"live"`
}

// DayCount is one day of history: live instances that day and instances
// first seen alive that day (new ones only).
type DayCount struct {
	Day  time.Time `json:"day"`
	Live int64     `json:"live"`
	New  int64     `json:"new"`
}

// Stats summarises the lists for the site's charts.
type Stats struct {
	Live       int64           `json:"live"`
	New        int64           `json:"new"`
	BySoftware []SoftwareCount `json:"by_software"`
	Days       []DayCount      `json:"days"`
}

// Tally counts recorded checks: by outcome, with the discoveries and the
// bytes they came with. The pass counts what it recorded in one, the
// snapshot writer what it wrote in files in another, and the passes row
// carries the one that holds.
type Tally struct {
	Checks     int64             `json:"checked"`    // checks recorded
	ByOutcome  map[Outcome]int64 `json:"by_outcome"` // recorded checks by outcome
	Discovered int64             `json:"discovered"` // new hosts recorded
	Bytes      int64             `json:"bytes"`      // response bytes read, decoded
	WireBytes  int64             `json:"wire_bytes"` // what the checks read from the network (their WireBytes)
}

// Add counts one recorded check.
func (t *Tally) Add(r Result) {
	if t.ByOutcome == nil {
		t.ByOutcome = map[Outcome]int64{}
	}
	t.Checks++
	t.ByOutcome[r.Check.Outcome]++
	t.Discovered += int64(len(r.Discoveries))
	t.Bytes += r.Bytes
	t.WireBytes += r.Check.WireBytes
}

// Merge adds o's counts to t.
func (t *Tally) Merge(o Tally) {
	if t.ByOutcome == nil {
		t.ByOutcome = map[Outcome]int64{}
	}
	t.Checks += o.Checks
	for k, n := range o.ByOutcome {
		t.ByOutcome[k] += n
	}
	t.Discovered += o.Discovered
	t.Bytes += o.Bytes
	t.WireBytes += o.WireBytes
}

// Clone is a copy of t that shares nothing with it.
func (t Tally) Clone() Tally {
	var c Tally
	c.Merge(t)
	return c
}

// Errors counts the checks that failed on our side or for no known reason:
// outcomes error and checker_failed.
func (t Tally) Errors() int64 {
	return t.ByOutcome[OutcomeError] + t.ByOutcome[OutcomeCheckerFailed]
}

// Pass is one row of data/passes: the crawler's own health, one row per
// pass. The crawl fills it as the pass goes (crawl.Summary); what the due
// list knows (Due, Blocklisted, OverDomainBudget) and why the pass was cut
// short are added at the end.
type Pass struct {
	PassID    string    `json:"pass_id"`
	StartedAt time.Time `json:"started_at"` // the pass clock (--now)
	EndedAt   time.Time `json:"ended_at"`
	Due       int64     `json:"due"` // hosts due when the pass started
	Tally               // the checks recorded
	// NotStarted counts the due hosts left for a later pass: past the
	// check limit, or not yet started (waiting for a place, or for their
	// turn at a busy address) when the time budget ran out or the pass was
	// cancelled.
	NotStarted int64  `json:"not_started"`
	CutShort   string `json:"cut_short,omitempty"` // why the pass ended early, if it did

	// Left out of the due list: blocklisted hosts, and new hosts over their
	// registrable domain's budget (they stay due).
	Blocklisted      int64 `json:"blocklisted"`
	OverDomainBudget int64 `json:"over_domain_budget"`
	// Per-address politeness, for tuning crawl.address_budget. An address
	// is an IPv4 address or an IPv6 /64. A host skipped for its address's
	// budget is not checked and not recorded, so it stays due.
	SkippedAddressBudget   int64 `json:"skipped_address_budget"`   // due hosts not checked: their address's budget was used up
	Addresses              int64 `json:"addresses"`                // distinct addresses requests went to
	BusiestAddressRequests int64 `json:"busiest_address_requests"` // requests to the busiest address
	AddressesOverBudget    int64 `json:"addresses_over_budget"`    // addresses that had hosts skipped

	// Checks cut off by cancellation, or whose recording failed: not
	// recorded, so those hosts stay due, like the not started ones.
	Abandoned int64 `json:"abandoned"`

	// What bounded the growth of the known set: new peers-list entries
	// dropped for the cap per list (crawl.max_new_per_list; repeats
	// included) and new hosts dropped for the cap per pass
	// (crawl.max_new_per_pass). Hosts dropped are not recorded; they are
	// heard of again from other lists, or the same one later.
	OverListCap int64 `json:"over_list_cap"`
	OverPassCap int64 `json:"over_pass_cap"`
}
