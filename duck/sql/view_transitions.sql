-- transitions: every change of state, one row per change: the host, the
-- state it left (from_state) and took (to_state), checked_at and pass_id of
-- the check that caused it (with host they name that check; checked_at is
-- when the change happened), moved_to (the redirect target when to_state is
-- moving or moved). A host's first change is from discovered.
SELECT host, from_state, to_state, checked_at, moved_to, pass_id
FROM {{transitions_source}}
