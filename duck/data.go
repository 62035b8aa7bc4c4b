package duck

import (
	"context"
	"database/sql"
	"fmt"
	"iter"
	"time"

	"github.com/fediverse-observer/observer"
)

// The methods below are what the site builder reads (build.Data). They read
// the views, so CreateViews must have run (after Derive).

const instanceColumns = `host, state, software, version, users, active_month, open_registrations,
	name, description, discovered_at, first_alive_at, last_alive_at`

// NewInstances streams the new list, newest first (first_alive_at
// descending, then host).
func (s *Reader) NewInstances(ctx context.Context) iter.Seq2[observer.Instance, error] {
	return s.instances(ctx, "new", "SELECT "+instanceColumns+" FROM new ORDER BY first_alive_at DESC, host")
}

// LiveInstances streams the live list sorted by host, one row at a time.
func (s *Reader) LiveInstances(ctx context.Context) iter.Seq2[observer.Instance, error] {
	return s.instances(ctx, "live", "SELECT "+instanceColumns+" FROM live ORDER BY host")
}

func (s *Reader) instances(ctx context.Context, what, query string) iter.Seq2[observer.Instance, error] {
	return func(yield func(observer.Instance, error) bool) {
		rows, err := s.db.QueryContext(ctx, query)
		if err != nil {
			yield(observer.Instance{}, fmt.Errorf("%s instances: %w", what, s.blameQuery(ctx, err)))
			return
		}
		defer rows.Close()
		for rows.Next() {
			var (
				in                                    observer.Instance
				state, software, version, name, descr sql.NullString
				users, activeMonth                    sql.NullInt64
				openReg                               sql.NullBool
				discovered, firstAlive, lastAlive     sql.NullTime
			)
			if err := rows.Scan(&in.Host, &state, &software, &version, &users, &activeMonth, &openReg,
				&name, &descr, &discovered, &firstAlive, &lastAlive); err != nil {
				yield(observer.Instance{}, fmt.Errorf("%s instances: %w", what, s.blameQuery(ctx, err)))
				return
			}
			in.State = observer.State(state.String)
			in.Software, in.Version, in.Name, in.Description = software.String, version.String, name.String, descr.String
			in.Users, in.ActiveMonth, in.OpenRegistrations = ptrInt(users), ptrInt(activeMonth), ptrBool(openReg)
			in.DiscoveredAt, in.FirstAliveAt, in.LastAliveAt = utc(discovered), utc(firstAlive), utc(lastAlive)
			if !yield(in, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(observer.Instance{}, fmt.Errorf("%s instances: %w", what, s.blameQuery(ctx, err)))
		}
	}
}

// Stats returns the sizes of the live and new lists, live hosts by software
// and the daily history.
func (s *Reader) Stats(ctx context.Context) (observer.Stats, error) {
	var st observer.Stats
	if err := s.db.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM live), (SELECT count(*) FROM new)").Scan(&st.Live, &st.New); err != nil {
		return st, fmt.Errorf("stats: %w", s.blameQuery(ctx, err))
	}
	rows, err := s.db.QueryContext(ctx, "SELECT software, live FROM stats_software ORDER BY live DESC, software")
	if err != nil {
		return st, fmt.Errorf("stats by software: %w", s.blameQuery(ctx, err))
	}
	for rows.Next() {
		var c observer.SoftwareCount
		if err := rows.Scan(&c.Software, &c.Live); err != nil {
			rows.Close()
			return st, fmt.Errorf("stats by software: %w", s.blameQuery(ctx, err))
		}
		st.BySoftware = append(st.BySoftware, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("stats by software: %w", s.blameQuery(ctx, err))
	}
	rows, err = s.db.QueryContext(ctx, "SELECT day, live, new FROM stats_daily ORDER BY day")
	if err != nil {
		return st, fmt.Errorf("daily stats: %w", s.blameQuery(ctx, err))
	}
	defer rows.Close()
	for rows.Next() {
		var d observer.DayCount
		if err := rows.Scan(&d.Day, &d.Live, &d.New); err != nil {
			return st, fmt.Errorf("daily stats: %w", s.blameQuery(ctx, err))
		}
		d.Day = d.Day.UTC()
		st.Days = append(st.Days, d)
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("daily stats: %w", s.blameQuery(ctx, err))
	}
	return st, nil
}

// RecentTransitions returns at most limit transitions made up to now,
// newest first, of the hosts a published list may show
// (queries/recent_transitions.sql).
func (s *Reader) RecentTransitions(ctx context.Context, now time.Time, limit int) ([]observer.Transition, error) {
	rows, err := s.db.QueryContext(ctx, sqlFile("queries/recent_transitions.sql"), max(limit, 0), now.UTC())
	if err != nil {
		return nil, fmt.Errorf("recent transitions: %w", s.blameQuery(ctx, err))
	}
	defer rows.Close()
	var out []observer.Transition
	for rows.Next() {
		var t observer.Transition
		var from, to, movedTo sql.NullString
		if err := rows.Scan(&t.Host, &from, &to, &t.At, &movedTo); err != nil {
			return nil, fmt.Errorf("recent transitions: %w", s.blameQuery(ctx, err))
		}
		t.From, t.To, t.MovedTo, t.At = observer.State(from.String), observer.State(to.String), movedTo.String, t.At.UTC()
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("recent transitions: %w", s.blameQuery(ctx, err))
	}
	return out, nil
}

func ptrInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

func ptrBool(v sql.NullBool) *bool {
	if !v.Valid {
		return nil
	}
	return &v.Bool
}

func utc(t sql.NullTime) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}
