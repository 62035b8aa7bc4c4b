-- fold_window_states: the windowed runs of this bucket (fold_bucket_runs,
-- fold_runs materialised: its sorts and these in one query did not fit the
-- benchmark's memory) with the state before each (pre), at its end
-- (end_state), and whether it is its host's last run (is_last), by the rules
-- of run_rules.sql with three lags. Per host, so it is computed bucket by
-- bucket with fold_runs.
CREATE OR REPLACE TEMP VIEW fold_window_states AS
WITH r AS (
    -- Joined on host alone (carry has one row per host) and the carried
    -- run picked after: with r.carry_run in the join condition DuckDB did
    -- not use a hash join, and the carried fold took minutes per 250,000
    -- hosts instead of about 2 s.
    SELECT r.*, CASE WHEN r.carry_run THEN c.pre_run_state END AS carry_pre
    FROM fold_bucket_runs r LEFT JOIN carry_all c ON c.host = r.host
), s1 AS (
    SELECT *, run_e1(class, cross_row IS NOT NULL) AS e1 FROM r
), s2 AS (
    SELECT *,
        run_e2(class, cross_row IS NOT NULL, first_row.ever_alive, e1,
               CASE WHEN carry_run THEN carry_pre ELSE lag(e1) OVER w END) AS e2
    FROM s1
    WINDOW w AS (PARTITION BY host ORDER BY run_id)
), s3 AS (
    SELECT *,
        run_end(class, cross_row IS NOT NULL, e2, CASE WHEN carry_run THEN carry_pre ELSE lag(e2) OVER w END) AS end_state
    FROM s2
    WINDOW w AS (PARTITION BY host ORDER BY run_id)
)
SELECT host, run_id::BIGINT AS run_id, class, carry_run, n::BIGINT AS n, run_start, first_row, last_row, cross_row,
    live_starts, live_ends,
    CASE WHEN carry_run THEN carry_pre ELSE coalesce(lag(end_state) OVER w, 'discovered') END AS pre,
    end_state,
    lead(run_id) OVER w IS NULL AS is_last
FROM s3
WINDOW w AS (PARTITION BY host ORDER BY run_id)
