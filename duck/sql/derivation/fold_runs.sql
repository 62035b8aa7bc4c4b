-- fold_runs: the runs of a bucket of windowed hosts' checks, the carried
-- row first. Every rule is a function of a check's place n in its run, the
-- run's start and the state before it: windows, no recursion, partitioned
-- by {{host_key}} (faster than a name; joining the name back cost more).
CREATE OR REPLACE TEMP VIEW fold_runs AS
WITH src AS (
    SELECT host, {{host_key}} AS window_key, last_checked_at AS ts, last_pass_id AS pass_id, run_class AS class,
           last_outcome AS outcome, NULL::VARCHAR AS moved_to,
           true AS is_carry, run_n AS base_n, run_start AS base_start, last_alive_at AS alive_ts
    FROM carry_all
    WHERE checks > 0 AND host IN (SELECT host FROM bucket_checks)
    UNION ALL
    SELECT host, {{host_key}}, checked_at, pass_id, check_class(outcome), outcome, moved_to,
           false, 1, checked_at, CASE WHEN outcome = 'alive' THEN checked_at END
    FROM bucket_checks
), marked AS (
    SELECT *,
        row_number() OVER w AS rn,
        coalesce(lag(class) OVER w <> class, true) AS brk,
        -- Alive times grow with the order (the carry's is before its check).
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
)
SELECT any_value(host) AS host, window_key, run_id, any_value(class) AS class,
    bool_or(is_carry) AS carry_run, max(n) AS n, any_value(run_start) AS run_start,
    arg_min(row, rn) AS first_row,
    arg_min(row, rn) FILTER (WHERE crosses) AS cross_row,
    list(ts::DATE) FILTER (WHERE live_break) AS live_starts,
    list(prev_alive::DATE + {{live_days}}) FILTER (WHERE live_break AND prev_alive IS NOT NULL) AS live_ends
FROM flagged
GROUP BY window_key, run_id

