-- fold_runs: the runs of this derivation step. A run is a maximal sequence of
-- consecutive checks of one host (ordered by checked_at, then pass_id) with
-- the same class: A alive, O opted_out, M moved (permanent redirect), T moving
-- (temporary redirect), F any failure. Every state rule is a function of a
-- check's position n in its run, the run's start and the state before the
-- run, so the fold is window functions, not recursion.
--
-- Incremental and full derivation are the same SQL: the carry table holds one
-- row per host summarising its past (its current run's class, length n and
-- start, the state before that run, its last alive time), which stands in for
-- the host's old checks as the first row of its history. Full derivation runs
-- with an empty carry. New checks are strictly later than a host's carried
-- last check (Derive falls back to a full derivation otherwise).
--
-- Per run: the first row, the last row, the first row that crosses its
-- threshold (F/T: n > failures_to_dead and at least dead_after since the run
-- began; A: at least revive_after since the run began), and the starts and
-- ends of live-list coverage (an alive check more than live_days days after
-- the previous one opens a new stretch; the previous stretch ends live_days
-- days after its last alive day) for the daily live counts.
CREATE OR REPLACE TEMP VIEW fold_runs AS
WITH src AS (
    SELECT host, last_checked_at AS ts, last_pass_id AS pass_id, run_class AS class,
           last_outcome AS outcome, NULL::VARCHAR AS moved_to,
           true AS is_carry, run_n AS base_n, run_start AS base_start, last_alive_at AS alive_ts
    FROM carry
    WHERE checks > 0 AND host IN (SELECT host FROM new_checks)
    UNION ALL
    SELECT host, checked_at, pass_id,
           CASE outcome WHEN 'alive' THEN 'A' WHEN 'opted_out' THEN 'O' WHEN 'moved' THEN 'M'
                        WHEN 'moving' THEN 'T' ELSE 'F' END,
           outcome, moved_to,
           false, 1, checked_at, CASE WHEN outcome = 'alive' THEN checked_at END
    FROM new_checks
), marked AS (
    SELECT *,
        row_number() OVER w AS rn,
        coalesce(lag(class) OVER w <> class, true) AS brk,
        max(alive_ts) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_alive
    FROM src
    WINDOW w AS (PARTITION BY host ORDER BY ts, pass_id, class, outcome, moved_to)
), positioned AS (
    SELECT *,
        sum(brk::INTEGER) OVER w AS run_id,
        rn + last_value(CASE WHEN brk THEN base_n - rn END IGNORE NULLS) OVER w AS n,
        last_value(CASE WHEN brk THEN base_start END IGNORE NULLS) OVER w AS run_start
    FROM marked
    WINDOW w AS (PARTITION BY host ORDER BY rn)
), flagged AS (
    SELECT *,
        CASE WHEN class IN ('F', 'T') THEN n > {{failures_to_dead}} AND ts >= run_start + to_microseconds({{dead_after_us}})
             WHEN class = 'A' THEN ts >= run_start + to_microseconds({{revive_after_us}})
             ELSE false END AS crosses,
        class = 'A' AND NOT is_carry
            AND (prev_alive IS NULL OR ts::DATE - prev_alive::DATE > {{live_days}}) AS live_break,
        {'rn': rn, 'ts': ts, 'pass_id': pass_id, 'moved_to': moved_to, 'outcome': outcome,
         'is_carry': is_carry, 'ever_alive': prev_alive IS NOT NULL OR (is_carry AND alive_ts IS NOT NULL)} AS row
    FROM positioned
)
SELECT host, run_id,
    any_value(class) AS class,
    bool_or(is_carry) AS carry_run,
    max(n) AS n,
    any_value(run_start) AS run_start,
    arg_min(row, rn) AS first_row,
    arg_max(row, rn) AS last_row,
    arg_min(row, rn) FILTER (WHERE crosses) AS cross_row,
    list(ts::DATE) FILTER (WHERE live_break) AS live_starts,
    list(prev_alive::DATE + {{live_days}}) FILTER (WHERE live_break AND prev_alive IS NOT NULL) AS live_ends
FROM flagged
GROUP BY host, run_id;

-- fold_run_states: the state before, during and after each run. Within a run
-- the state is `before` until its crossing row and `after` from it on:
--   T: moving, then moved;
--   F: moved throughout if the host was moved before the run (a moved host
--      that fails stays moved); else dying (or discovered if never alive),
--      then dead;
--   A: reviving, then live, if the host was dead before the run; else live;
--   O: opted_out; M: moved.
-- The state before a run is the end state of the previous run (the carry's
-- pre_run_state for a run that continues the carried one, discovered for a
-- host's first run). F only needs to know whether that was moved (decided by
-- O/M/T runs alone), and A only whether it was dead (decided by F), so three
-- lags settle it without recursion.
CREATE OR REPLACE TEMP TABLE fold_run_states AS
WITH r AS (
    -- Joined on host alone (carry has one row per host) and the carried
    -- run picked after: with r.carry_run in the join condition DuckDB did
    -- not use a hash join, and the carried fold took minutes per 250,000
    -- hosts instead of about 2 s.
    SELECT r.*, CASE WHEN r.carry_run THEN c.pre_run_state END AS carry_pre
    FROM fold_runs r LEFT JOIN carry c ON c.host = r.host
), s1 AS (
    SELECT *,
        CASE class WHEN 'O' THEN 'opted_out' WHEN 'M' THEN 'moved'
                   WHEN 'T' THEN CASE WHEN cross_row IS NULL THEN 'moving' ELSE 'moved' END END AS e1
    FROM r
), s2 AS (
    SELECT *,
        CASE WHEN class = 'F' THEN
            CASE WHEN (CASE WHEN carry_run THEN carry_pre ELSE lag(e1) OVER w END) = 'moved' THEN 'moved'
                 WHEN cross_row IS NOT NULL THEN 'dead'
                 WHEN first_row.ever_alive THEN 'dying'
                 ELSE 'discovered' END
            ELSE e1 END AS e2
    FROM s1
    WINDOW w AS (PARTITION BY host ORDER BY run_id)
), s3 AS (
    SELECT *,
        CASE WHEN class = 'A' THEN
            CASE WHEN (CASE WHEN carry_run THEN carry_pre ELSE lag(e2) OVER w END) = 'dead'
                      AND cross_row IS NULL THEN 'reviving' ELSE 'live' END
            ELSE e2 END AS end_state
    FROM s2
    WINDOW w AS (PARTITION BY host ORDER BY run_id)
), s4 AS (
    SELECT *,
        CASE WHEN carry_run THEN carry_pre ELSE coalesce(lag(end_state) OVER w, 'discovered') END AS pre
    FROM s3
    WINDOW w AS (PARTITION BY host ORDER BY run_id)
)
SELECT host, run_id, class, carry_run, n, run_start, first_row, last_row, cross_row,
    live_starts, live_ends, pre, end_state, before, after,
    CASE WHEN cross_row IS NOT NULL AND cross_row.rn = first_row.rn THEN after ELSE before END AS start_state
FROM (
    SELECT *,
        CASE class WHEN 'T' THEN 'moving'
                   WHEN 'F' THEN CASE WHEN pre = 'moved' THEN 'moved' WHEN first_row.ever_alive THEN 'dying' ELSE 'discovered' END
                   WHEN 'A' THEN CASE WHEN pre = 'dead' THEN 'reviving' ELSE 'live' END
                   ELSE end_state END AS before,
        CASE class WHEN 'T' THEN 'moved'
                   WHEN 'F' THEN CASE WHEN pre = 'moved' THEN 'moved' ELSE 'dead' END
                   WHEN 'A' THEN 'live'
                   ELSE end_state END AS after
    FROM s4
);
