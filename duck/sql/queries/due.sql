-- Hosts due for a check at $1 (the pass's now): every host of the derived
-- state whose next_check_at (the schedule, see views/state.sql) is not after now,
-- the hosts checked before ahead of those never checked, each soonest first:
-- a pass cut short by its budget takes the most overdue, and a flood of new
-- names (a hostile peers list) cannot push the known hosts out of a pass.
-- fetch_peers says whether the host's peers list is due too: never fetched,
-- or last fetched at least $2 microseconds (peers_interval) before now; new
-- says it was never checked; peers_etag and peers_last_modified are the
-- validators to ask for the peers list with (If-None-Match,
-- If-Modified-Since).
SELECT host,
    last_peers_at IS NULL OR last_peers_at <= $1::TIMESTAMP - to_microseconds($2::BIGINT) AS fetch_peers,
    checks = 0 AS new,
    coalesce(peers_etag, '') AS peers_etag,
    coalesce(peers_last_modified, '') AS peers_last_modified
FROM state
WHERE next_check_at <= $1::TIMESTAMP
ORDER BY checks = 0, next_check_at, host
