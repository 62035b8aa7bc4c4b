-- transitions: every change of state, one row per change (docs/data.md,
-- "transitions"). A host's first change is from discovered.
SELECT host, from_state, to_state, checked_at, moved_to, pass_id, alive_before
FROM {{transitions_source}}
