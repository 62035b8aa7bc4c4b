-- fold_hosts: one row per host of fold_checks (the hosts checked in this
-- derivation step, but for those fold_one advances), summarising its new
-- checks with plain aggregates: how many of each class, the first
-- and last check, and the times of the checks that carry the state's facts
-- (the last alive check, the last redirect, the last peers fetch). It is
-- the only aggregate over every new check; fold_edges then fetches those
-- checks' columns (a join, the second read of the new checks), and
-- fold_single decides from it which hosts need the windowed fold
-- (fold_runs) and which are folded without windows.
--
-- alive_days has a bit per day of the step's checks, set on the days with an
-- alive check, so a gap of more than live_days days between two alive checks
-- shows as a run of zeros without ordering the checks. Derive makes it NULL
-- when the checks span years (a bit per day per host would not fit in
-- memory), which sends every alive host with a long run to the windowed
-- fold instead.
CREATE OR REPLACE TEMP TABLE fold_hosts AS
SELECT host,
    count(*) AS checks,
    count(*) FILTER (WHERE outcome = 'alive') AS alive_checks,
    count(*) FILTER (WHERE outcome = 'opted_out') AS opted_out_checks,
    count(*) FILTER (WHERE outcome = 'moved') AS moved_checks,
    count(*) FILTER (WHERE outcome = 'moving') AS moving_checks,
    min(checked_at) AS first_checked_at,
    max(checked_at) AS last_checked_at,
    max(checked_at) FILTER (WHERE peers_fetched OR coalesce(peers_not_modified, false)) AS last_peers_at,
    min(checked_at) FILTER (WHERE outcome = 'alive') AS first_alive_at,
    max(checked_at) FILTER (WHERE outcome = 'alive') AS last_alive_at,
    max(checked_at) FILTER (WHERE outcome IN ('moving', 'moved')) AS last_redirect_at,
    {{alive_days}} AS alive_days
FROM fold_checks
GROUP BY host
