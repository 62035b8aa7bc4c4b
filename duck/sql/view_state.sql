-- state: one row per known host, as of the last derivation (`observer sql`
-- and `observer build` derive first). state is one of discovered, live,
-- dying, dead, reviving, moving, moved, opted_out; since is when it took that
-- state (or the discovery, for a host never changed); moved_to is the
-- redirect target while moving or moved; the software..description columns
-- are what the latest alive check said; next_check_at is the schedule.
SELECT host, state, since, moved_to, discovered_at, via, first_checked_at, last_checked_at,
    last_outcome, checks, failures, first_alive_at, last_alive_at, last_peers_at, peers_etag, peers_last_modified,
    software, version, users, active_month, open_registrations, name, description, next_check_at
FROM {{state_source}}
