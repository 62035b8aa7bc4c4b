-- fold_windowless_runs: the runs (in fold_runs' shape) of the hosts whose new
-- checks all extend one run, folded from fold_hosts' aggregates and their
-- first new check (fold_edge_located) without windows; fold_window_hosts:
-- every other checked host, which fold_runs folds with windows. Most hosts
-- are alive (or failing) at every check, so this keeps the sort of every
-- check out of a derivation step.
--
-- A host is folded here when all its new checks have one class, the same as
-- its carried run's (if it has carried checks), and where its run would
-- cross its threshold is known without ordering its checks:
--   F, T: the carried row already crossed (n > failures_to_dead and
--     dead_after since the run began), or the run cannot cross in this step
--     (too few checks, or the last is too early), or the first new check
--     crosses;
--   A: the threshold only matters after dead (reviving becomes live), and
--     then as for F; and no two alive checks are more than live_days days
--     apart (a gap opens a new stretch of the live list), seen in alive_days;
--   O, M: they have no threshold.
-- Every field means what it means in fold_runs; the property test folds the
-- same histories both ways.
--
-- fold_host_runs places each host's new checks so, for fold_windowless_runs
-- and for fold_window_hosts (the hosts it leaves). It is a table: as a view
-- read twice, a daily step read the carried state twice.
CREATE OR REPLACE TEMP TABLE fold_host_runs AS
WITH classed AS (
    SELECT e.host, e.checks, e.first_checked_at, e.last_checked_at, e.first_alive_at, e.last_alive_at,
        e.alive_days, e.first_new,
        CASE WHEN e.alive_checks = e.checks THEN 'A'
             WHEN e.opted_out_checks = e.checks THEN 'O'
             WHEN e.moved_checks = e.checks THEN 'M'
             WHEN e.moving_checks = e.checks THEN 'T'
             WHEN e.alive_checks + e.opted_out_checks + e.moved_checks + e.moving_checks = 0 THEN 'F' END AS class,
        coalesce(c.checks, 0) > 0 AS carry_run,
        c.run_class AS carry_class, c.run_n AS carry_n, c.run_start AS carry_start,
        c.last_checked_at AS carry_ts, c.last_pass_id AS carry_pass_id,
        c.last_alive_at AS carry_alive_at, c.pre_run_state AS carry_pre
    FROM (
        SELECT h.*, l.first_new
        FROM fold_hosts h
        JOIN fold_edge_located l ON l.host_key = {{host_key}}
    ) e
    LEFT JOIN carry_all c ON c.host = e.host
), placed AS (
    SELECT *,
        class IS NOT NULL AND (NOT carry_run OR carry_class = class) AS one_run,
        CASE WHEN carry_run THEN carry_n ELSE 0 END AS base_n,
        CASE WHEN carry_run THEN carry_start ELSE first_checked_at END AS run_start,
        CASE WHEN carry_run THEN carry_alive_at END AS prev_alive,
        -- A run of alive checks only has a threshold when it follows dead.
        class IN ('F', 'T') OR (class = 'A' AND carry_run AND carry_pre = 'dead') AS has_threshold
    FROM classed
), crossing AS (
    SELECT *,
        CASE WHEN NOT has_threshold THEN 'none'
             WHEN carry_run AND run_crosses(class, carry_n, carry_ts, run_start) THEN 'carry'
             WHEN NOT run_crosses(class, base_n + checks, last_checked_at, run_start) THEN 'none'
             WHEN run_crosses(class, base_n + 1, first_checked_at, run_start) THEN 'first'
        END AS crossed_at,
        class = 'A' AND opens_live_stretch(first_checked_at, prev_alive) AS first_breaks,
        class = 'A' AND last_alive_at::DATE - first_alive_at::DATE > {{live_days}}
            AND contains(trim({{alive_bits}}, '0'), repeat('0', {{live_days}})) AS gap_inside
    FROM placed
)
-- Only the columns the two statements below read are kept: the table of
-- every column took 0.05-0.1 s more to write for a million hosts.
-- (gap_inside is NULL when the step spans too many days for alive_days.)
SELECT host, checks, first_checked_at, first_new, class,
    carry_run, carry_ts, carry_pass_id, carry_alive_at, carry_pre,
    one_run, base_n, run_start, prev_alive, crossed_at, first_breaks,
    coalesce(one_run AND crossed_at IS NOT NULL AND NOT gap_inside, false) AND {{windowless}} AS windowless
FROM crossing;

CREATE OR REPLACE TEMP TABLE fold_windowless_runs AS
WITH r AS (
    SELECT *,
        {'rn': 1::BIGINT, 'ts': carry_ts, 'pass_id': carry_pass_id, 'moved_to': NULL::VARCHAR,
         'is_carry': true, 'ever_alive': carry_alive_at IS NOT NULL,
         'alive_before': NULL::TIMESTAMP} AS carry_row,
        {'rn': 1 + carry_run::BIGINT, 'ts': first_new.ts, 'pass_id': first_new.pass_id, 'moved_to': first_new.moved_to,
         'is_carry': false, 'ever_alive': prev_alive IS NOT NULL,
         'alive_before': prev_alive} AS first_new_row
    FROM fold_host_runs
    WHERE windowless
)
SELECT host,
    1::BIGINT AS run_id,
    class,
    carry_run,
    (base_n + checks)::BIGINT AS n,
    run_start,
    CASE WHEN carry_run THEN carry_row ELSE first_new_row END AS first_row,
    CASE crossed_at WHEN 'carry' THEN carry_row WHEN 'first' THEN first_new_row END AS cross_row,
    CASE WHEN first_breaks THEN [first_checked_at::DATE] END AS live_starts,
    CASE WHEN first_breaks AND prev_alive IS NOT NULL THEN [prev_alive::DATE + {{live_days}}] END AS live_ends,
    -- The state before the run, for run_states: the carry's, or none before
    -- a host's first run.
    CASE WHEN carry_run THEN carry_pre END AS carry_pre
FROM r;

-- fold_window_hosts: the hosts left to the windowed fold.
CREATE OR REPLACE TEMP TABLE fold_window_hosts AS
SELECT host FROM fold_host_runs WHERE NOT windowless;

DROP TABLE fold_host_runs
