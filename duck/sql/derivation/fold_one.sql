-- fold_one: the carried state (carry_all, one row per known host) with the
-- hosts that have exactly one new check (fold_one_checks) advanced by it,
-- in the state's columns; every other row as carried. The derived state is
-- written from it (state.sql) instead of from carry_all, and
-- fold_one_events keeps what the transitions and live counts need.
--
-- In a daily step nearly every host has exactly one new check, and one
-- check appended to a host's history needs neither fold_hosts' aggregate,
-- the edge join nor a window: it extends the carried run (same class) or
-- starts a new one, and the rules of run_rules.sql give its state, exactly
-- as fold_runs and window_states would with the carried row before it:
--   a run that continues: n + 1 from the carried run's start, the state
--     before it the carried pre_run_state;
--   a new run: n = 1 from the check, the state before it the carried state
--     (a host's first run: discovered).
-- The threshold is crossed as in fold_runs (run_crosses; it only grows along
-- a run, so the new check crosses whenever the run has crossed), and the check's state
-- is the run's end state. A change of state is a transition at the check,
-- from the carried state. An alive check more than live_days days after the
-- host's last alive check opens a stretch of the live list (and closes the
-- previous one), as in fold_runs. The property test folds the same
-- histories this way and in a full derivation, and compares.
CREATE OR REPLACE TEMP VIEW fold_one AS
WITH joined AS (
    SELECT coalesce(c.host, o.host) AS host, c.* EXCLUDE (host),
        o.host IS NOT NULL AS stepped,
        coalesce(c.checks, 0) > 0 AS carry_run,
        o.checked_at AS o_ts, o.outcome AS o_outcome, o.pass_id AS o_pass_id, o.moved_to AS o_moved_to,
        o.peers_fetched OR coalesce(o.peers_not_modified, false) AS o_peers,
        o.peers_etag AS o_peers_etag, o.peers_last_modified AS o_peers_last_modified,
        o.software AS o_software, o.version AS o_version, o.users AS o_users, o.active_month AS o_active_month,
        o.open_registrations AS o_open_registrations, o.name AS o_name, o.description AS o_description,
        check_class(o.outcome) AS o_class
    FROM carry_all c
    FULL JOIN fold_one_checks o ON o.host = c.host
), placed AS (
    SELECT *,
        carry_run AND run_class = o_class AS continues,
        coalesce(state, 'discovered') AS from_state,
        CASE WHEN carry_run THEN last_alive_at END AS prev_alive
    FROM joined
), run AS (
    SELECT *,
        CASE WHEN continues THEN run_n + 1 ELSE 1 END AS o_n,
        CASE WHEN continues THEN run_start ELSE o_ts END AS o_run_start,
        -- The state before the run as run_rules' macros take it (NULL before
        -- a host's first run), and as the state records it.
        CASE WHEN continues THEN pre_run_state WHEN carry_run THEN state END AS o_pre
    FROM placed
), crossed AS (
    SELECT *,
        run_crosses(o_class, o_n, o_ts, o_run_start) AS o_crossed,
        o_class = 'A' AND opens_live_stretch(o_ts, prev_alive) AS o_live_break
    FROM run
), stepped AS (
    SELECT *,
        next_state(o_pre, o_class, o_crossed, prev_alive IS NOT NULL) AS o_state
    FROM crossed
)
SELECT host,
    CASE WHEN stepped THEN o_state ELSE state END AS state,
    CASE WHEN stepped THEN least(discovered_at, o_ts) ELSE discovered_at END AS discovered_at,
    via, via_at,
    CASE WHEN stepped THEN least(first_checked_at, o_ts) ELSE first_checked_at END AS first_checked_at,
    CASE WHEN stepped THEN o_ts ELSE last_checked_at END AS last_checked_at,
    CASE WHEN stepped THEN o_pass_id ELSE last_pass_id END AS last_pass_id,
    CASE WHEN stepped THEN o_outcome ELSE last_outcome END AS last_outcome,
    CASE WHEN stepped THEN coalesce(checks, 0) + 1 ELSE checks END AS checks,
    CASE WHEN stepped AND o_class = 'A' THEN least(first_alive_at, o_ts) ELSE first_alive_at END AS first_alive_at,
    CASE WHEN stepped AND o_class = 'A' THEN o_ts ELSE last_alive_at END AS last_alive_at,
    CASE WHEN stepped AND o_peers THEN o_ts ELSE last_peers_at END AS last_peers_at,
    CASE WHEN stepped AND o_peers THEN o_peers_etag ELSE peers_etag END AS peers_etag,
    CASE WHEN stepped AND o_peers THEN o_peers_last_modified ELSE peers_last_modified END AS peers_last_modified,
    CASE WHEN stepped AND o_class = 'A' THEN o_software ELSE software END AS software,
    CASE WHEN stepped AND o_class = 'A' THEN o_version ELSE version END AS version,
    CASE WHEN stepped AND o_class = 'A' THEN o_users ELSE users END AS users,
    CASE WHEN stepped AND o_class = 'A' THEN o_active_month ELSE active_month END AS active_month,
    CASE WHEN stepped AND o_class = 'A' THEN o_open_registrations ELSE open_registrations END AS open_registrations,
    CASE WHEN stepped AND o_class = 'A' THEN o_name ELSE name END AS name,
    CASE WHEN stepped AND o_class = 'A' THEN o_description ELSE description END AS description,
    CASE WHEN stepped AND o_class IN ('T', 'M') THEN o_moved_to ELSE redirect_to END AS redirect_to,
    CASE WHEN stepped THEN o_class ELSE run_class END AS run_class,
    CASE WHEN stepped THEN o_n ELSE run_n END AS run_n,
    CASE WHEN stepped THEN o_run_start ELSE run_start END AS run_start,
    CASE WHEN stepped THEN coalesce(o_pre, 'discovered') ELSE pre_run_state END AS pre_run_state,
    CASE WHEN stepped AND o_state <> from_state THEN o_ts ELSE changed_at END AS changed_at,
    -- For fold_one_events only.
    stepped, from_state, o_moved_to, o_live_break, prev_alive
FROM stepped;

-- fold_one_events: the transitions and live-list stretches of fold_one's
-- checks, for transitions.sql and live_events.sql. Materialised, since both
-- read it and each read of fold_one is a join of every known host.
CREATE OR REPLACE TEMP TABLE fold_one_events AS
SELECT host, from_state, state AS to_state, last_checked_at AS checked_at, o_moved_to AS moved_to,
    last_pass_id AS pass_id, o_live_break AS live_break, prev_alive
FROM fold_one
WHERE stepped AND (state <> from_state OR o_live_break);
