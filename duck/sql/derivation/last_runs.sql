-- fold_last_runs: each windowed host's last run and its last change of
-- state in this step (NULL: none), all fold_step needs of its runs.
CREATE OR REPLACE TEMP TABLE fold_last_runs AS
SELECT host,
    arg_max({'class': class, 'n': n, 'run_start': run_start, 'pre': pre, 'end_state': end_state}, run_id) AS last_run,
    max(greatest(CASE WHEN start_changes THEN first_row.ts END, CASE WHEN cross_changes THEN cross_row.ts END)) AS changed_at
FROM fold_window_run_states
GROUP BY host
