-- transitions: every change of state, one row per change: the host, the
-- state it left (from_state) and took (to_state), checked_at and pass_id of
-- the check that caused it (with host they name that check; checked_at is
-- when the change happened), moved_to (the redirect target when to_state is
-- moving or moved) and alive_before (the host's last alive check before
-- that one, NULL if none). A host's first change is from discovered.
SELECT host, from_state, to_state, checked_at, moved_to, pass_id, alive_before
FROM {{transitions_source}}
