-- stats_daily: one row per day from the observer's first record to {{now}}:
-- live, the hosts with an alive check in the live window ending that day
-- that had not moved or opted out by then (the live list's definition, on
-- that day), and new, the newcomers first seen alive that day (the new
-- list's definition, over all history). A blocklisted host counts on no
-- day, as in new: the derivation keeps its live events per host for this.
WITH bounds AS (
    SELECT min(discovered_at)::DATE AS first_day FROM state
), days AS (
    SELECT unnest(generate_series(first_day, {{now}}::DATE, INTERVAL 1 DAY))::DATE AS day
    FROM bounds WHERE first_day <= {{now}}::DATE
), excluded AS (
    -- The days a host covered by its last alive check had moved or opted
    -- out: from the change to the end of that check's live window, or to
    -- the host's next change of state if it came first. The live events
    -- count only alive checks, so these days are taken off them.
    SELECT host, checked_at::DATE AS from_day,
        least(alive_before::DATE + {{live_days}}, coalesce(next_change::DATE, DATE '9999-12-31')) AS to_day
    FROM (
        SELECT host, to_state, checked_at, alive_before,
            -- In the fold's order: checks at one instant of one pass go by
            -- class (alive, failure, moved, opted out, moving), which the
            -- state each led to tells (a moved or opted-out host that
            -- fails stays so without a transition, so moved and opted_out
            -- stand for their own classes).
            lead(checked_at) OVER (PARTITION BY host ORDER BY checked_at, pass_id,
                CASE to_state WHEN 'live' THEN 0 WHEN 'reviving' THEN 0 WHEN 'moved' THEN 2
                              WHEN 'opted_out' THEN 3 WHEN 'moving' THEN 4 ELSE 1 END) AS next_change
        FROM transitions
        WHERE host IN (SELECT host FROM transitions WHERE to_state IN ('moved', 'opted_out'))
    )
    WHERE to_state IN ('moved', 'opted_out') AND alive_before IS NOT NULL
), deltas AS (
    SELECT day, sum(delta) AS delta FROM (
        SELECT host, day, delta FROM {{live_events_source}}
        UNION ALL
        SELECT host, last_alive_at::DATE + {{live_days}}, -1 FROM listable WHERE last_alive_at IS NOT NULL
        UNION ALL
        SELECT host, from_day, -1 FROM excluded WHERE from_day < to_day
        UNION ALL
        SELECT host, to_day, 1 FROM excluded WHERE from_day < to_day
    )
    -- Only the hosts a list may show (listable leaves out the blocklist's).
    WHERE host IN (SELECT host FROM listable)
    GROUP BY day
), news AS (
    SELECT first_alive_at::DATE AS day, count(*) AS new
    FROM newcomers
    GROUP BY ALL
)
SELECT days.day,
    coalesce(sum(deltas.delta) OVER (ORDER BY days.day), 0)::BIGINT AS live,
    coalesce(news.new, 0)::BIGINT AS new
FROM days
LEFT JOIN deltas USING (day)
LEFT JOIN news USING (day)
ORDER BY days.day
