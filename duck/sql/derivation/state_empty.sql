-- The materialised derived state with no row: the shape of
-- data/derived/state-N.parquet, used before the first derivation and as the
-- empty carry of a full derivation. One row per known host. The run_*,
-- pre_run_state, changed_at, via_at, redirect_to and last_pass_id columns are
-- the fold's carry: what the next incremental step needs from the past.
SELECT
    NULL::VARCHAR   AS host,
    NULL::VARCHAR   AS state,
    NULL::TIMESTAMP AS since,
    NULL::VARCHAR   AS moved_to,
    NULL::TIMESTAMP AS discovered_at,
    NULL::VARCHAR   AS via,
    NULL::TIMESTAMP AS via_at,
    NULL::TIMESTAMP AS first_checked_at,
    NULL::TIMESTAMP AS last_checked_at,
    NULL::VARCHAR   AS last_pass_id,
    NULL::VARCHAR   AS last_outcome,
    NULL::BIGINT    AS checks,
    NULL::BIGINT    AS failures,
    NULL::TIMESTAMP AS first_alive_at,
    NULL::TIMESTAMP AS last_alive_at,
    NULL::TIMESTAMP AS last_peers_at,
    NULL::VARCHAR   AS peers_etag,
    NULL::VARCHAR   AS peers_last_modified,
    NULL::VARCHAR   AS software,
    NULL::VARCHAR   AS version,
    NULL::BIGINT    AS users,
    NULL::BIGINT    AS active_month,
    NULL::BOOLEAN   AS open_registrations,
    NULL::VARCHAR   AS name,
    NULL::VARCHAR   AS description,
    NULL::VARCHAR   AS redirect_to,
    NULL::VARCHAR   AS run_class,
    NULL::BIGINT    AS run_n,
    NULL::TIMESTAMP AS run_start,
    NULL::VARCHAR   AS pre_run_state,
    NULL::TIMESTAMP AS changed_at
WHERE false
