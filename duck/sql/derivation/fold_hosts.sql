-- fold_hosts: each host of fold_checks, its new checks summed up (by host
-- and outcome first: a third cheaper than FILTERs over every check).
-- alive_days has bit d set when alive on day d of the step, to see gaps in
-- the live list unordered ({{day_bits}}: BIGINT, bitstring, or NULL).
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
