-- stats_daily: one row per day from the observer's first record to {{now}}:
-- live, the hosts with an alive check in the live window ending that day
-- (counted from the derivation's live events, so whatever their state is
-- now: hosts that moved or opted out within the window, and blocklisted
-- ones, still count), and new, the hosts first seen alive that day, without the warmup
-- baseline, opted-out and blocklisted hosts (as in the new list, but over all history).
WITH bounds AS (
    SELECT min(discovered_at)::DATE AS first_day, min(discovered_at) AS start FROM state
), days AS (
    SELECT unnest(generate_series(first_day, {{now}}::DATE, INTERVAL 1 DAY))::DATE AS day
    FROM bounds WHERE first_day <= {{now}}::DATE
), deltas AS (
    SELECT day, sum(delta) AS delta FROM (
        SELECT day, delta FROM {{live_events_source}}
        UNION ALL
        SELECT last_alive_at::DATE + {{live_days}}, -1 FROM state WHERE last_alive_at IS NOT NULL
    ) GROUP BY day
), news AS (
    SELECT first_alive_at::DATE AS day, count(*) AS new
    FROM listable, bounds
    WHERE first_alive_at IS NOT NULL
      AND discovered_at >= bounds.start + to_microseconds({{warmup_us}})
      AND state <> 'opted_out'
    GROUP BY ALL
)
SELECT days.day,
    coalesce(sum(deltas.delta) OVER (ORDER BY days.day), 0)::BIGINT AS live,
    coalesce(news.new, 0)::BIGINT AS new
FROM days
LEFT JOIN deltas USING (day)
LEFT JOIN news USING (day)
ORDER BY days.day
