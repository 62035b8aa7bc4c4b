-- fold_state: the derived state after this step, one row per known host (a
-- host is known once discovered or checked), from fold_one (the carried
-- state, with the hosts that have one new check already advanced by it)
-- and the other checked hosts' (fold_checks') last runs. Columns (see
-- docs/data.md): state and since (the last change of state, or
-- discovery), moved_to (for moving and moved), the discovery (earliest
-- discovered_at over discoveries and checks, via of the earliest
-- discovery), check counts and times, the latest alive check's facts, the
-- validators the peers list was last served with (kept from the latest check
-- that read the list or was told it had not changed; NULL when that list had
-- none, such as a paged one). The schedule (next_check_at) is not stored:
-- the state view computes it from these columns (views/state.sql).
-- The aggregates of fold_checks' hosts come from fold_hosts, their edge
-- checks (the last, the last alive one's facts, the last peers fetch's
-- validators, the last redirect) from fold_edge_picks, their last run and
-- last change of state from fold_last_runs.
CREATE OR REPLACE TEMP VIEW fold_state AS
WITH checked AS (
    SELECT h.host, h.checks, h.first_checked_at, h.last_peers_at, h.first_alive_at, h.last_alive_at,
        e.peers_validators, e.facts, e.redirect,
        r.class, r.n, r.run_start, r.pre, r.end_state, e.last_new, r.changed_at
    FROM fold_hosts h
    JOIN fold_edge_picks e ON e.host_key = {{host_key}}
    JOIN fold_last_runs r ON r.host = h.host
), new_disc AS (
    SELECT host, min(discovered_at) AS via_at, arg_min(via, row(discovered_at, via)) AS via
    FROM new_discoveries_all
    GROUP BY host
), merged AS (
    SELECT host,
        coalesce(a.end_state, c.state, 'discovered') AS state,
        least(c.discovered_at, d.via_at, a.first_checked_at) AS discovered_at,
        CASE WHEN d.via_at IS NOT NULL AND (c.via_at IS NULL OR d.via_at < c.via_at OR (d.via_at = c.via_at AND d.via < c.via))
             THEN d.via ELSE c.via END AS via,
        least(c.via_at, d.via_at) AS via_at,
        least(c.first_checked_at, a.first_checked_at) AS first_checked_at,
        coalesce(a.last_new.ts, c.last_checked_at) AS last_checked_at,
        coalesce(a.last_new.pass_id, c.last_pass_id) AS last_pass_id,
        coalesce(a.last_new.outcome, c.last_outcome) AS last_outcome,
        coalesce(c.checks, 0) + coalesce(a.checks, 0) AS checks,
        least(c.first_alive_at, a.first_alive_at) AS first_alive_at,
        greatest(c.last_alive_at, a.last_alive_at) AS last_alive_at,
        greatest(c.last_peers_at, a.last_peers_at) AS last_peers_at,
        CASE WHEN a.peers_validators IS NOT NULL THEN a.peers_validators.etag ELSE c.peers_etag END AS peers_etag,
        CASE WHEN a.peers_validators IS NOT NULL THEN a.peers_validators.last_modified ELSE c.peers_last_modified END AS peers_last_modified,
        CASE WHEN a.facts IS NOT NULL THEN a.facts.software ELSE c.software END AS software,
        CASE WHEN a.facts IS NOT NULL THEN a.facts.version ELSE c.version END AS version,
        CASE WHEN a.facts IS NOT NULL THEN a.facts.users ELSE c.users END AS users,
        CASE WHEN a.facts IS NOT NULL THEN a.facts.active_month ELSE c.active_month END AS active_month,
        CASE WHEN a.facts IS NOT NULL THEN a.facts.open_registrations ELSE c.open_registrations END AS open_registrations,
        CASE WHEN a.facts IS NOT NULL THEN a.facts.name ELSE c.name END AS name,
        CASE WHEN a.facts IS NOT NULL THEN a.facts.description ELSE c.description END AS description,
        CASE WHEN a.redirect IS NOT NULL THEN a.redirect.target ELSE c.redirect_to END AS redirect_to,
        coalesce(a.class, c.run_class) AS run_class,
        coalesce(a.n, c.run_n) AS run_n,
        coalesce(a.run_start, c.run_start) AS run_start,
        coalesce(a.pre, c.pre_run_state) AS pre_run_state,
        coalesce(a.changed_at, c.changed_at) AS changed_at
    FROM fold_one c
    FULL JOIN checked a USING (host)
    FULL JOIN new_disc d USING (host)
)
-- The columns take their types and order from state_empty.sql, the state's
-- shape, by a union with it.
FROM ({{state_empty}})
UNION ALL BY NAME
SELECT *,
    coalesce(changed_at, discovered_at) AS since,
    CASE WHEN state IN ('moving', 'moved') THEN redirect_to END AS moved_to,
    CASE WHEN run_class = 'F' THEN run_n ELSE 0 END AS failures
FROM merged
