-- fold_runs: the runs of this derivation step's hosts that fold_windowless could
-- not fold without windows (the view bucket_checks holds a bucket's new checks
-- of them, carry_all the carried state). A run is a maximal sequence of
-- consecutive checks of one host (ordered by checked_at, then pass_id) with
-- the same class: A alive, O opted_out, M moved (permanent redirect), T moving
-- (temporary redirect), F any failure. Every state rule is a function of a
-- check's position n in its run, the run's start and the state before the
-- run, so the fold is window functions, not recursion.
--
-- The windows partition by {{host_key}}: a hash of the host, which sorts
-- faster than its name, or the name itself when two of the hosts' hashes
-- collide (hostKey, derive.go). The host's name rides along as a payload and
-- each run keeps it with any_value: joining the runs back to
-- fold_window_hosts by key for it took 0.1-0.2 s more over the benchmark's
-- million hosts (the opposite of what was measured before the edge and
-- windowed folds held less memory).
--
-- Incremental and full derivation are the same SQL: the carry holds one
-- row per host summarising its past (its current run's class, length n and
-- start, the state before that run, its last alive time), which stands in for
-- the host's old checks as the first row of its history. Full derivation runs
-- with an empty carry. New checks are strictly later than a host's carried
-- last check (Derive falls back to a full derivation otherwise).
--
-- Per run: the first row, the first row that crosses its threshold (F/T:
-- n > failures_to_dead and at least dead_after since the run began; A: at
-- least revive_after since the run began), and the starts and ends of
-- live-list coverage (an alive check more than live_days days after the
-- previous one opens a new stretch; the previous stretch ends live_days days
-- after its last alive day) for the daily live counts. A run's last row is
-- not kept: only a host's last run needs it, and that is the host's last new
-- check, which fold_edge_picks has.
CREATE OR REPLACE TEMP VIEW fold_runs AS
WITH src AS (
    SELECT host, {{host_key}} AS window_key, last_checked_at AS ts, last_pass_id AS pass_id, run_class AS class,
           last_outcome AS outcome, NULL::VARCHAR AS moved_to,
           true AS is_carry, run_n AS base_n, run_start AS base_start, last_alive_at AS alive_ts
    FROM carry_all
    WHERE checks > 0 AND host IN (SELECT host FROM bucket_checks)
    UNION ALL
    SELECT host, {{host_key}}, checked_at, pass_id,
           check_class(outcome),
           outcome, moved_to,
           false, 1, checked_at, CASE WHEN outcome = 'alive' THEN checked_at END
    FROM bucket_checks
), marked AS (
    SELECT *,
        row_number() OVER w AS rn,
        coalesce(lag(class) OVER w <> class, true) AS brk,
        -- The last alive check before this one: alive times grow with the
        -- order (the carry's last alive time is before its last check).
        lag(alive_ts IGNORE NULLS) OVER w AS prev_alive
    FROM src
    WINDOW w AS (PARTITION BY window_key ORDER BY ts, pass_id, class, outcome, moved_to)
), positioned AS (
    SELECT *,
        sum(brk::INTEGER) OVER w AS run_id,
        rn + last_value(CASE WHEN brk THEN base_n - rn END IGNORE NULLS) OVER w AS n,
        last_value(CASE WHEN brk THEN base_start END IGNORE NULLS) OVER w AS run_start
    FROM marked
    WINDOW w AS (PARTITION BY window_key ORDER BY rn)
), flagged AS (
    SELECT *,
        run_crosses(class, n, ts, run_start) AS crosses,
        class = 'A' AND NOT is_carry AND opens_live_stretch(ts, prev_alive) AS live_break,
        {'rn': rn, 'ts': ts, 'pass_id': pass_id, 'moved_to': moved_to, 'is_carry': is_carry,
         'ever_alive': prev_alive IS NOT NULL OR (is_carry AND alive_ts IS NOT NULL),
         'alive_before': prev_alive} AS row
    FROM positioned
), runs AS (
    SELECT any_value(host) AS host, window_key, run_id,
        any_value(class) AS class,
        bool_or(is_carry) AS carry_run,
        max(n) AS n,
        any_value(run_start) AS run_start,
        arg_min(row, rn) AS first_row,
        arg_min(row, rn) FILTER (WHERE crosses) AS cross_row,
        list(ts::DATE) FILTER (WHERE live_break) AS live_starts,
        list(prev_alive::DATE + {{live_days}}) FILTER (WHERE live_break AND prev_alive IS NOT NULL) AS live_ends
    FROM flagged
    GROUP BY window_key, run_id
)
SELECT * FROM runs;
