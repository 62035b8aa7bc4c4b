package duck

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// emptyTransitions and emptyLiveEvents have the columns of the derived
// transitions and live-events files (fold_transitions, fold_live_events),
// and no rows: the views read them before any step found one, and
// readable checks the files against them.
const (
	emptyTransitions = "(SELECT NULL::VARCHAR AS host, NULL::VARCHAR AS from_state, NULL::VARCHAR AS to_state, " +
		"NULL::TIMESTAMP AS checked_at, NULL::VARCHAR AS moved_to, NULL::VARCHAR AS pass_id, NULL::TIMESTAMP AS alive_before WHERE false)"
	emptyLiveEvents = "(SELECT NULL::VARCHAR AS host, NULL::DATE AS day, NULL::BIGINT AS delta WHERE false)"
)

// derivedViews lists the views over the materialised derived state: state,
// transitions, blocked, the macros blocking, blocked_by and is_blocked,
// listable, live, newcomers, new, stats_software, stats_daily and stats.
// They read the Parquet files of the last derivation (never the
// snapshots), so they show what the last Derive folded; `observer sql` and
// `observer build` derive first. live and new are computed for p.Now.
func (s *Reader) derivedViews(p ViewParams) ([]view, error) {
	st := p.Rules
	m, err := s.readManifest()
	if err != nil {
		return nil, err
	}
	stateSource := s.stateSource(m)
	transitionsSource, eventsSource := emptyTransitions, emptyLiveEvents
	if m != nil {
		if len(m.Transitions) > 0 {
			transitionsSource = "read_parquet(" + s.derivedList(m.Transitions) + ")"
		}
		if len(m.LiveEvents) > 0 {
			eventsSource = "read_parquet(" + s.derivedList(m.LiveEvents) + ")"
		}
	}
	us := micros
	params := sqlParams{
		"now":                "TIMESTAMP " + sqlString(p.Now.UTC().Format("2006-01-02 15:04:05.999999")),
		"live_window_us":     us(st.LiveWindow),
		"new_window_us":      us(st.NewWindow),
		"warmup_us":          us(st.Warmup),
		"discovery_delay_us": us(max(st.DiscoveryDelay, time.Microsecond)),
		"active_us":          us(st.ActiveInterval),
		"active_jitter_us":   us(st.ActiveJitter),
		"inactive_us":        us(st.InactiveInterval),
		"inactive_jitter_us": us(st.InactiveJitter),
		// Never below the intervals it caps, whatever a hand-built State says.
		"backoff_max_us":     us(max(st.BackoffMax, st.ActiveInterval, st.InactiveInterval)),
		"failures_to_dead":   strconv.Itoa(st.FailuresToDead),
		"live_days":          strconv.FormatInt(st.liveDays(), 10),
		"state_source":       stateSource,
		"state_rows":         s.stateRows(m),
		"transitions_source": transitionsSource,
		"live_events_source": eventsSource,
	}
	render := func(names ...string) ([]view, error) {
		var out []view
		for _, name := range names {
			text, err := renderSQL("views/"+name+".sql", params)
			if err != nil {
				return nil, err
			}
			out = append(out, view{name: name, sql: strings.TrimSpace(text)})
		}
		return out, nil
	}
	derived, err := render("state", "transitions")
	if err != nil {
		return nil, err
	}
	blocklist, err := blocklistViews(p.Blocklist)
	if err != nil {
		return nil, err
	}
	lists, err := render("listable", "live", "newcomers", "new", "stats_software", "stats_daily", "stats")
	if err != nil {
		return nil, err
	}
	return slices.Concat(derived, blocklist, lists), nil
}

// blocklistViews are the operator's blocklist, entries in its file's form
// ("host" or "*.domain"), as the view blocked, and its one rule, the table
// macro blocking, with is_blocked and blocked_by over it.
func blocklistViews(entries []string) ([]view, error) {
	source := "(SELECT NULL::VARCHAR AS kind, NULL::VARCHAR AS entry WHERE false)"
	if len(entries) > 0 {
		rows := make([]string, len(entries))
		for i, e := range slices.Sorted(slices.Values(entries)) {
			kind := "host"
			if d, ok := strings.CutPrefix(e, "*."); ok {
				kind, e = "domain", d
			}
			rows[i] = "(" + sqlString(kind) + ", " + sqlString(e) + ")"
		}
		source = "(VALUES " + strings.Join(rows, ", ") + ") AS blocklist(kind, entry)"
	}
	blocked, err := renderSQL("views/blocked.sql", sqlParams{"blocklist_source": source})
	if err != nil {
		return nil, err
	}
	return []view{
		{name: "blocked", sql: strings.TrimSpace(blocked)},
		{name: "blocking", sql: "TABLE\n" + strings.TrimSpace(sqlFile("views/blocking.sql")), params: "h"},
		{name: "blocked_by", sql: strings.TrimSpace(sqlFile("views/blocked_by.sql")), params: "h"},
		{name: "is_blocked", sql: strings.TrimSpace(sqlFile("views/is_blocked.sql")), params: "h"},
	}, nil
}

// derivedList is a SQL list literal of files named relative to data/derived.
func (s *core) derivedList(files []string) string {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = s.derivedPath(f)
	}
	return sqlList(paths)
}
