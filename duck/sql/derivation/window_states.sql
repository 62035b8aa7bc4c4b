-- fold_window_states: a bucket's runs (fold_runs materialised: in one
-- query the sorts exceeded the memory limit) with their states and changes.
-- The state before a run follows from the three runs before it: lags, each
-- stage its own query (an alias reused inline is recomputed).
CREATE OR REPLACE TEMP VIEW fold_window_states AS
WITH r AS (
    -- Joined on host alone and the carried run picked after: with
    -- r.carry_run in the join condition DuckDB chose no hash join.
    SELECT r.*, CASE WHEN r.carry_run THEN c.pre_run_state END AS carry_pre
    FROM fold_bucket_runs r LEFT JOIN carry_all c ON c.host = r.host
), lagged AS (
    SELECT *, lag(x0, 1) OVER w AS x1, lag(x0, 2) OVER w AS x2, lag(x0, 3) OVER w AS x3
    FROM (SELECT *, {'class': class, 'crossed': cross_row IS NOT NULL, 'ever_alive': first_row.ever_alive,
        'carry_run': carry_run, 'carry_pre': carry_pre} AS x0 FROM r)
    WINDOW w AS (PARTITION BY window_key ORDER BY run_id)
), before_run AS (
    SELECT *, CASE WHEN carry_run THEN carry_pre ELSE coalesce(run_end(x1, e2), 'discovered') END AS pre
    FROM (SELECT *, run_end(x2, run_end(x3, NULL)) AS e2 FROM lagged)
), states AS (
    SELECT *, run_end(x0, pre) AS end_state,
        next_state(pre, class, false, first_row.ever_alive) AS before, next_state(pre, class, true, first_row.ever_alive) AS after
    FROM before_run
)
SELECT host, run_id::BIGINT AS run_id, class, n::BIGINT AS n, run_start, first_row, cross_row,
    live_starts, live_ends, pre, end_state, before, after, start_state,
    NOT first_row.is_carry AND pre <> start_state AS start_changes,
    cross_row IS NOT NULL AND cross_row.rn <> first_row.rn AND NOT cross_row.is_carry AND before <> after AS cross_changes
FROM (SELECT *, CASE WHEN cross_row.rn = first_row.rn THEN after ELSE before END AS start_state FROM states)
