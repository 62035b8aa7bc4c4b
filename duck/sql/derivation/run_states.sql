-- fold_run_states: every run of the step with its states: the windowed
-- runs' (fold_window_run_states, from window_states.sql, bucket by bucket)
-- and fold_windowless's, whose runs are their hosts' only ones (nothing precedes
-- them but the carry), so the rules of run_rules.sql apply without lags.
-- pre is the state before the run, end_state the state after it, before and
-- after the states before and from its crossing row, start_state the state
-- at its first check, and is_last marks each host's last run.
-- A windowless run's carry_pre is NULL when it has no carried run;
-- next_state takes it as it is, since it treats NULL as 'discovered' (only
-- dead, moved and opted_out before a run change its end).
CREATE OR REPLACE TEMP VIEW fold_run_states AS
WITH windowless AS (
    SELECT host, run_id, class, carry_run, n, run_start, first_row, cross_row, live_starts, live_ends,
        CASE WHEN carry_run THEN carry_pre ELSE 'discovered' END AS pre,
        next_state(carry_pre, class, cross_row IS NOT NULL, first_row.ever_alive) AS end_state,
        true AS is_last
    FROM fold_windowless_runs
), runs AS (
    SELECT * FROM fold_window_run_states
    UNION ALL BY NAME
    SELECT * FROM windowless
)
SELECT *,
    CASE WHEN cross_row IS NOT NULL AND cross_row.rn = first_row.rn THEN after ELSE before END AS start_state
FROM (
    SELECT *,
        next_state(pre, class, false, first_row.ever_alive) AS before,
        next_state(pre, class, true, first_row.ever_alive) AS after
    FROM runs
)
