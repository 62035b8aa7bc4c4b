-- fold_hosts: one row per host of fold_checks (the hosts checked in this
-- derivation step, but for those fold_one advances), summarising its new
-- checks with plain aggregates: how many of each class, the first
-- and last check, and the times of the checks that carry the state's facts
-- (the last alive check, the last redirect, the last peers fetch). It is
-- the only aggregate over every new check; fold_edge_picks then fetches
-- those checks' columns (a join, the second read of the new checks), and
-- fold_windowless decides from it which hosts need the windowed fold
-- (fold_runs) and which are folded without windows.
--
-- alive_days has a bit per day of the step's checks (step_day), set on the
-- days with an alive check, so a gap of more than live_days days between two
-- alive checks shows as a run of zeros without ordering the checks. They
-- are a BIGINT's bits when the checks span at most 63 days, a bitstring up
-- to a few years (hostParams), and NULL beyond (a bit per day per host would
-- not fit in memory), which sends every such alive host to the windowed
-- fold instead.
--
-- The checks are aggregated by host and outcome first, with plain
-- aggregates, and those few rows per host by host: over every check of the
-- benchmark's full derivation the FILTERed aggregates cost a third more
-- than this. (The one FILTER left over every check, for the peers fetches,
-- took 0.06 s less than the same as a CASE.)

-- step_day: the day of the step a time falls on, from 0 (the step's first
-- check's midnight); negative before it.
CREATE OR REPLACE TEMP MACRO step_day(ts) AS (epoch_us(ts) - {{first_day_us}}) // 86400000000;

CREATE OR REPLACE TEMP TABLE fold_hosts AS
WITH by_outcome AS (
    SELECT host, outcome,
        count(*) AS checks,
        min(checked_at) AS first_at,
        max(checked_at) AS last_at,
        max(checked_at) FILTER (WHERE peers_fetched OR peers_not_modified) AS last_peers_at,
        {{day_bits}} AS days
    FROM fold_checks
    GROUP BY host, outcome
)
SELECT host,
    sum(checks)::BIGINT AS checks,
    -- One row per outcome: its count needs no sum (DuckDB sums a BIGINT
    -- into a HUGEINT, whose state costs more).
    coalesce(any_value(checks) FILTER (WHERE outcome = 'alive'), 0) AS alive_checks,
    coalesce(any_value(checks) FILTER (WHERE outcome = 'opted_out'), 0) AS opted_out_checks,
    coalesce(any_value(checks) FILTER (WHERE outcome = 'moved'), 0) AS moved_checks,
    coalesce(any_value(checks) FILTER (WHERE outcome = 'moving'), 0) AS moving_checks,
    min(first_at) AS first_checked_at,
    max(last_at) AS last_checked_at,
    max(last_peers_at) AS last_peers_at,
    min(first_at) FILTER (WHERE outcome = 'alive') AS first_alive_at,
    max(last_at) FILTER (WHERE outcome = 'alive') AS last_alive_at,
    max(last_at) FILTER (WHERE outcome IN ('moving', 'moved')) AS last_redirect_at,
    any_value(days) FILTER (WHERE outcome = 'alive') AS alive_days
FROM by_outcome
GROUP BY host
