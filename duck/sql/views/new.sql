-- new: the published list of new instances at {{now}}: hosts whose first
-- alive check falls in the new window before it, newest first. Hosts already
-- discovered during the observer's warmup (its first days after its earliest
-- record) are its baseline, not new: the crawler was only finding what
-- already existed. Opted-out and blocklisted hosts are never listed.
-- stats_daily's news (views/stats_daily.sql) repeats this definition over the
-- whole history: change both together.
SELECT host, state, software, version, users, active_month, open_registrations, name, description,
    discovered_at, first_alive_at, last_alive_at
FROM listable
WHERE first_alive_at >= {{now}} - to_microseconds({{new_window_us}})
  AND first_alive_at <= {{now}}
  AND discovered_at >= (SELECT min(discovered_at) FROM state) + to_microseconds({{warmup_us}})
  AND state <> 'opted_out'
ORDER BY first_alive_at DESC, host
