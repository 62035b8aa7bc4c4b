-- fold_window_states: the windowed runs of this bucket (fold_bucket_runs,
-- fold_runs materialised: its sorts and these in one query did not fit the
-- benchmark's memory) with the state before each (pre), at its end
-- (end_state), and whether it is its host's last run (is_last), by the rules
-- of run_rules.sql. Per host, so it is computed bucket by bucket with
-- fold_runs.
--
-- A run's end state depends on its own inputs and on the end states of the
-- runs before it, but only through three lags (see run_rules.sql), so
-- each run takes its inputs and those of the three runs before it in one
-- window (one sort), and the rules are applied to them as plain
-- expressions: run_end_of(x0, x1, x2) is the end state of the run with
-- inputs x0 after runs x1 and x2.
CREATE OR REPLACE TEMP VIEW fold_window_states AS
WITH r AS (
    -- Joined on host alone (carry has one row per host) and the carried
    -- run picked after: with r.carry_run in the join condition DuckDB did
    -- not use a hash join, and the carried fold took minutes per 250,000
    -- hosts instead of about 2 s.
    SELECT r.*, CASE WHEN r.carry_run THEN c.pre_run_state END AS carry_pre
    FROM fold_bucket_runs r LEFT JOIN carry_all c ON c.host = r.host
), lagged AS (
    SELECT *,
        lag(x0, 1) OVER w AS x1,
        lag(x0, 2) OVER w AS x2,
        lag(x0, 3) OVER w AS x3,
        lead(run_id) OVER w IS NULL AS is_last
    FROM (
        SELECT *, run_inputs(class, cross_row IS NOT NULL, first_row.ever_alive, carry_run, carry_pre) AS x0
        FROM r
    )
    WINDOW w AS (PARTITION BY window_key ORDER BY run_id)
)
SELECT host, run_id::BIGINT AS run_id, class, carry_run, n::BIGINT AS n, run_start, first_row, cross_row,
    live_starts, live_ends,
    CASE WHEN carry_run THEN carry_pre ELSE coalesce(run_end_of(x1, x2, x3), 'discovered') END AS pre,
    run_end_of(x0, x1, x2) AS end_state,
    is_last
FROM lagged
