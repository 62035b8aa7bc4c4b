-- fold_live_events: how each host's presence in the live list changes per
-- day, from this step's checks: +1 on the day an alive check opens a
-- stretch of live-list coverage, -1 on the day after the previous stretch
-- ended (live_days after its last alive day). Stretches still open are
-- closed by the stats_daily view from state.last_alive_at. Kept per host,
-- so that the daily counts can leave out the hosts the blocklist names
-- when they are read (the blocklist is not the derivation's to know).
CREATE OR REPLACE TEMP TABLE fold_live_events AS
SELECT host, day, sum(delta)::BIGINT AS delta
FROM (
    SELECT host, unnest(live_starts) AS day, 1 AS delta FROM fold_run_states WHERE len(live_starts) > 0
    UNION ALL
    SELECT host, unnest(live_ends), -1 FROM fold_run_states WHERE len(live_ends) > 0
    UNION ALL
    SELECT host, checked_at::DATE, 1 FROM fold_one_events WHERE live_break
    UNION ALL
    SELECT host, prev_alive::DATE + {{live_days}}, -1 FROM fold_one_events WHERE live_break AND prev_alive IS NOT NULL
)
GROUP BY host, day
HAVING sum(delta) <> 0
