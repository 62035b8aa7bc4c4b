-- fold_window_states: the runs of a bucket (fold_bucket_runs, fold_runs
-- materialised: its sorts and these in one query exceeded the benchmark's
-- memory) with their states: pre before the run, start_state at its first
-- check, before and after its threshold, end_state after it; whether the
-- run changes state at its first check (start_changes, from pre) and at its
-- crossing (cross_changes; changes at the carried row were found before).
-- A run's end follows from its own inputs and the two runs before it
-- (run_end_of), so one window's lags do, without recursion.
CREATE OR REPLACE TEMP VIEW fold_window_states AS
WITH r AS (
    -- Joined on host alone and the carried run picked after: with
    -- r.carry_run in the join condition DuckDB chose no hash join.
    SELECT r.*, CASE WHEN r.carry_run THEN c.pre_run_state END AS carry_pre
    FROM fold_bucket_runs r LEFT JOIN carry_all c ON c.host = r.host
), lagged AS (
    SELECT *,
        lag(x0, 1) OVER w AS x1,
        lag(x0, 2) OVER w AS x2,
        lag(x0, 3) OVER w AS x3
    FROM (
        SELECT *, {'class': class, 'crossed': cross_row IS NOT NULL, 'ever_alive': first_row.ever_alive,
            'carry_run': carry_run, 'carry_pre': carry_pre} AS x0
        FROM r
    )
    WINDOW w AS (PARTITION BY window_key ORDER BY run_id)
), states AS (
    SELECT *,
        CASE WHEN carry_run THEN carry_pre ELSE coalesce(run_end_of(x1, x2, x3), 'discovered') END AS pre,
        run_end_of(x0, x1, x2) AS end_state
    FROM lagged
), crossing AS (
    SELECT *,
        next_state(pre, class, false, first_row.ever_alive) AS before,
        next_state(pre, class, true, first_row.ever_alive) AS after
    FROM states
)
SELECT host, run_id::BIGINT AS run_id, class, n::BIGINT AS n, run_start, first_row, cross_row,
    live_starts, live_ends, pre, end_state, before, after, start_state,
    NOT first_row.is_carry AND pre <> start_state AS start_changes,
    cross_row IS NOT NULL AND cross_row.rn <> first_row.rn AND NOT cross_row.is_carry AND before <> after AS cross_changes
FROM (
    SELECT *, CASE WHEN cross_row.rn = first_row.rn THEN after ELSE before END AS start_state
    FROM crossing
)
