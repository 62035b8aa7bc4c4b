-- fold_hosts: one row per host of fold_checks, summarising its new checks
-- with plain aggregates (the only aggregate over every new check): their
-- count, their class when they all have one, the first and last check, and
-- the times of the checks whose columns the state keeps (fold_edge_picks
-- fetches them).
--
-- alive_days has bit d set when the host had an alive check on day d of the
-- step (step_day), so that a gap of more than live_days days between alive
-- checks shows without ordering them: a BIGINT's bits over at most 63 days,
-- a bitstring's up to a few years, and NULL beyond ({{day_bits}}, hostParams).
--
-- Aggregating by host and outcome first, then by host, cost a third less
-- than FILTERed aggregates over every check.
CREATE OR REPLACE TEMP MACRO step_day(ts) AS (epoch_us(ts) - {{first_day_us}}) // 86400000000;

CREATE OR REPLACE TEMP TABLE fold_hosts AS
WITH by_outcome AS (
    SELECT host, check_class(outcome) AS class,
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
    CASE WHEN min(class) = max(class) THEN min(class) END AS class,
    min(first_at) AS first_checked_at,
    max(last_at) AS last_checked_at,
    max(last_peers_at) AS last_peers_at,
    min(first_at) FILTER (WHERE class = 'A') AS first_alive_at,
    max(last_at) FILTER (WHERE class = 'A') AS last_alive_at,
    max(last_at) FILTER (WHERE class IN ('T', 'M')) AS last_redirect_at,
    any_value(days) FILTER (WHERE class = 'A') AS alive_days
FROM by_outcome
GROUP BY host
