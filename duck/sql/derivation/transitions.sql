-- fold_transitions: the changes of state found by this derivation step, one
-- row per change: host, from_state, to_state, checked_at (the causing check's
-- checked_at), moved_to (the redirect target when to_state is moving or
-- moved), pass_id (with host and checked_at, it names the causing check)
-- and alive_before (the host's last alive check before the causing one, for
-- the daily live counts: a host that moves or opts out leaves them while the
-- live window of that check still runs). A run
-- changes state at most twice: at its first check (from the state before the
-- run) and at the check that crosses its threshold. Changes at the carried
-- row happened in an earlier step and are not repeated. A host folded by
-- fold_one changes at most once, at its one new check (fold_one_events).
CREATE OR REPLACE TEMP TABLE fold_transitions AS
SELECT host, from_state, to_state, row.ts AS checked_at,
    CASE WHEN to_state IN ('moving', 'moved') THEN row.moved_to END AS moved_to,
    row.pass_id AS pass_id, row.alive_before AS alive_before
FROM (
    SELECT host, pre AS from_state, start_state AS to_state, first_row AS row
    FROM fold_run_states
    WHERE NOT first_row.is_carry AND pre <> start_state
    UNION ALL
    SELECT host, before, after, cross_row
    FROM fold_run_states
    WHERE cross_row IS NOT NULL AND cross_row.rn <> first_row.rn
      AND NOT cross_row.is_carry AND before <> after
)
UNION ALL
SELECT host, from_state, to_state, checked_at,
    CASE WHEN to_state IN ('moving', 'moved') THEN moved_to END,
    pass_id, prev_alive
FROM fold_one_events
WHERE to_state <> from_state
