-- fold_run_states: the state before, during and after each run of the step
-- (fold_window_runs, from fold_runs, and fold_single_runs). Within a run
-- the state is `before` until its crossing row and `after` from it on:
--   T: moving, then moved;
--   F: moved throughout if the host was moved before the run (a moved host
--      that fails stays moved); else dying (or discovered if never alive),
--      then dead;
--   A: reviving, then live, if the host was dead before the run; else live;
--   O: opted_out; M: moved.
-- is_last marks each host's last run. The state before a run is the end state of the previous run (the carry's
-- pre_run_state for a run that continues the carried one, discovered for a
-- host's first run). F only needs to know whether that was moved (decided by
-- O/M/T runs alone), and A only whether it was dead (decided by F), so three
-- lags settle it without recursion. The rules are macros, applied once with
-- the lags to the windowed runs and once without to fold_single's runs,
-- which are their hosts' only runs (nothing precedes them but the carry).

-- The end state of a run as far as its class alone decides it.
CREATE OR REPLACE TEMP MACRO run_e1(class, crossed) AS
    CASE class WHEN 'O' THEN 'opted_out' WHEN 'M' THEN 'moved'
               WHEN 'T' THEN CASE WHEN crossed THEN 'moved' ELSE 'moving' END END;
-- ... and once a failing run knows whether the host was moved before it.
CREATE OR REPLACE TEMP MACRO run_e2(class, crossed, ever_alive, e1, prev_e1) AS
    CASE WHEN class = 'F' THEN
        CASE WHEN prev_e1 = 'moved' THEN 'moved'
             WHEN crossed THEN 'dead'
             WHEN ever_alive THEN 'dying'
             ELSE 'discovered' END
    ELSE e1 END;
-- ... and once an alive run knows whether the host was dead before it.
CREATE OR REPLACE TEMP MACRO run_end(class, crossed, e2, prev_e2) AS
    CASE WHEN class = 'A' THEN
        CASE WHEN prev_e2 = 'dead' AND NOT crossed THEN 'reviving' ELSE 'live' END
    ELSE e2 END;
-- The state of a run's checks before its crossing row ...
CREATE OR REPLACE TEMP MACRO run_before(class, pre, ever_alive, end_state) AS
    CASE class WHEN 'T' THEN 'moving'
               WHEN 'F' THEN CASE WHEN pre = 'moved' THEN 'moved' WHEN ever_alive THEN 'dying' ELSE 'discovered' END
               WHEN 'A' THEN CASE WHEN pre = 'dead' THEN 'reviving' ELSE 'live' END
               ELSE end_state END;
-- ... and from it on.
CREATE OR REPLACE TEMP MACRO run_after(class, pre, end_state) AS
    CASE class WHEN 'T' THEN 'moved'
               WHEN 'F' THEN CASE WHEN pre = 'moved' THEN 'moved' ELSE 'dead' END
               WHEN 'A' THEN 'live'
               ELSE end_state END;

CREATE OR REPLACE TEMP TABLE fold_run_states AS
WITH r AS (
    -- Joined on host alone (carry has one row per host) and the carried
    -- run picked after: with r.carry_run in the join condition DuckDB did
    -- not use a hash join, and the carried fold took minutes per 250,000
    -- hosts instead of about 2 s.
    SELECT r.*, CASE WHEN r.carry_run THEN c.pre_run_state END AS carry_pre
    FROM fold_window_runs r LEFT JOIN carry_all c ON c.host = r.host
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
), windowed AS (
    SELECT *,
        CASE WHEN carry_run THEN carry_pre ELSE coalesce(lag(end_state) OVER w, 'discovered') END AS pre,
        lead(run_id) OVER w IS NULL AS is_last
    FROM s3
    WINDOW w AS (PARTITION BY host ORDER BY run_id)
), single AS (
    SELECT *,
        run_end(class, cross_row IS NOT NULL,
                run_e2(class, cross_row IS NOT NULL, first_row.ever_alive, run_e1(class, cross_row IS NOT NULL), carry_pre),
                carry_pre) AS end_state,
        CASE WHEN carry_run THEN carry_pre ELSE 'discovered' END AS pre,
        true AS is_last
    FROM fold_single_runs
), runs AS (
    SELECT host, run_id::BIGINT AS run_id, class, carry_run, n::BIGINT AS n, run_start, first_row, last_row, cross_row,
        live_starts, live_ends, pre, end_state, is_last
    FROM windowed
    UNION ALL
    SELECT host, run_id, class, carry_run, n, run_start, first_row, last_row, cross_row,
        live_starts, live_ends, pre, end_state, is_last
    FROM single
)
SELECT *,
    CASE WHEN cross_row IS NOT NULL AND cross_row.rn = first_row.rn THEN after ELSE before END AS start_state
FROM (
    SELECT *,
        run_before(class, pre, first_row.ever_alive, end_state) AS before,
        run_after(class, pre, end_state) AS after
    FROM runs
);
