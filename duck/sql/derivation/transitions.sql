-- fold_transitions: the step's changes of state (docs/data.md): a windowed
-- run's at its first check and its crossing, a fold_step host's at its first.
CREATE OR REPLACE TEMP TABLE fold_transitions AS
SELECT host, from_state, to_state, row.ts AS checked_at,
    CASE WHEN to_state IN ('moving', 'moved') THEN row.moved_to END AS moved_to,
    row.pass_id AS pass_id, row.alive_before AS alive_before
FROM (
    SELECT host, pre AS from_state, start_state AS to_state, first_row AS row
    FROM fold_window_run_states WHERE start_changes
    UNION ALL
    SELECT host, before, after, cross_row
    FROM fold_window_run_states WHERE cross_changes
)
UNION ALL
SELECT host, from_state, to_state, checked_at,
    CASE WHEN to_state IN ('moving', 'moved') THEN moved_to END,
    pass_id, prev_alive
FROM fold_step_events
WHERE to_state <> from_state
