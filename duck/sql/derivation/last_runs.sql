-- fold_last_runs: the last run of each host of fold_checks, with its
-- states (fold_run_states), and the time of the host's last change of
-- state in this step (changed_at, from fold_transitions; NULL when it has
-- none), which is all the state (state.sql) needs of the runs. Once the
-- transitions and live events are found, the runs' tables are dropped and
-- this narrow copy stands for them: over the benchmark's million hosts
-- they held 450 MB, which at a 1 GB memory_limit made the state's joins
-- spill to disk.
CREATE OR REPLACE TEMP TABLE fold_last_runs AS
SELECT r.host, r.class, r.n, r.run_start, r.pre, r.end_state, t.changed_at
FROM fold_run_states r
LEFT JOIN (SELECT host, max(checked_at) AS changed_at FROM fold_transitions GROUP BY host) t ON t.host = r.host
WHERE r.is_last
