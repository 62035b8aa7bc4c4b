-- state: one row per known host, as of the last derivation (`observer sql`
-- and `observer build` derive first). state is one of discovered, live,
-- dying, dead, reviving, moving, moved, opted_out; since is when it took that
-- state (or the discovery, for a host never changed); moved_to is the
-- redirect target while moving or moved; the software..description columns
-- are what the latest alive check said.
--
-- next_check_at is the schedule, computed here from the derived state and
-- the schedule's settings (so a change of them applies at once, and a
-- derivation does not hash a million hosts to store it):
--   never checked: at discovered_at when added by hand (observer add, as
--     its first discovery) or while the observer is young (discovered
--     within warmup of the earliest discovery of any host), else
--     discovered_at plus a hash-uniform delay in [0, discovery_delay);
--   checked but never alive (discovered, or dead without ever having
--     answered: names from peers lists that never were servers): backing
--     off, last_checked_at + active_interval × 2^(checks - 1), at most
--     backoff_max, ± active_jitter;
--   live, reviving, dying, moving: last_checked_at + active_interval ±
--     active_jitter;
--   dead (once alive): backing off, last_checked_at + inactive_interval ×
--     2^(failures past the first that made it dead), at most backoff_max,
--     ± inactive_jitter, so that a host dead for months costs a check every
--     backoff_max and one that answers again is still found (reviving);
--   moved, opted_out: last_checked_at + inactive_interval ± inactive_jitter.
-- The jitter is md5(host ':' checks), so it is deterministic and the same on
-- every DuckDB version (hash() is not stable across versions). It is in
-- integer microseconds, with an unsigned modulus: md5_number_lower is a
-- UBIGINT, and a signed one made the remainder a HUGEINT, which cost more
-- than the md5 itself.
SELECT host, state, coalesce(changed_at, discovered_at) AS since, if(state IN ('moving', 'moved'), redirect_to, NULL) AS moved_to,
    discovered_at, via, first_checked_at, last_checked_at, last_outcome, checks, if(run_class = 'F', run_n, 0) AS failures, first_alive_at, last_alive_at, last_peers_at, peers_etag, peers_last_modified,
    software, version, users, active_month, open_registrations, name, description,
    (CASE
        WHEN checks = 0 THEN
            CASE WHEN via = 'manual' OR discovered_at < (SELECT min(discovered_at) FROM {{state_rows}}) + to_microseconds({{warmup_us}}) THEN discovered_at
                 ELSE make_timestamp(epoch_us(discovered_at)
                     + (md5_number_lower(host || ':0') % ({{discovery_delay_us}})::UBIGINT)::BIGINT) END
        WHEN first_alive_at IS NULL AND state IN ('discovered', 'dead') THEN
            make_timestamp(epoch_us(last_checked_at)
                + least({{active_us}}::DOUBLE * pow(2, least(greatest(checks - 1, 0), 40)), {{backoff_max_us}}::DOUBLE)::BIGINT
                + (md5_number_lower(host || ':' || checks) % (2 * {{active_jitter_us}} + 1)::UBIGINT)::BIGINT - {{active_jitter_us}})
        WHEN state = 'dead' THEN
            make_timestamp(epoch_us(last_checked_at)
                + least({{inactive_us}}::DOUBLE * pow(2, least(greatest(failures - {{failures_to_dead}} - 1, 0), 40)), {{backoff_max_us}}::DOUBLE)::BIGINT
                + (md5_number_lower(host || ':' || checks) % (2 * {{inactive_jitter_us}} + 1)::UBIGINT)::BIGINT - {{inactive_jitter_us}})
        WHEN state IN ('moved', 'opted_out') THEN
            make_timestamp(epoch_us(last_checked_at) + {{inactive_us}}
                + (md5_number_lower(host || ':' || checks) % (2 * {{inactive_jitter_us}} + 1)::UBIGINT)::BIGINT - {{inactive_jitter_us}})
        ELSE
            make_timestamp(epoch_us(last_checked_at) + {{active_us}}
                + (md5_number_lower(host || ':' || checks) % (2 * {{active_jitter_us}} + 1)::UBIGINT)::BIGINT - {{active_jitter_us}})
    END)::TIMESTAMP AS next_check_at
FROM {{state_source}}
