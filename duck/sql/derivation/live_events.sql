-- fold_live_events: each host's changes to the daily live count: +1 on the
-- day a stretch of the live list opens, -1 the day after the one before it
-- ended. Per host: the counts leave out the blocklisted hosts when read.
CREATE OR REPLACE TEMP TABLE fold_live_events AS
SELECT host, day, sum(delta)::BIGINT AS delta
FROM (
    SELECT host, unnest(live_starts) AS day, 1 AS delta FROM fold_window_run_states WHERE len(live_starts) > 0
    UNION ALL
    SELECT host, unnest(live_ends), -1 FROM fold_window_run_states WHERE len(live_ends) > 0
    UNION ALL
    SELECT host, checked_at::DATE, 1 FROM fold_step_events WHERE live_break
    UNION ALL
    SELECT host, prev_alive::DATE + {{live_days}}, -1 FROM fold_step_events WHERE live_break AND prev_alive IS NOT NULL
)
GROUP BY host, day
HAVING sum(delta) <> 0
