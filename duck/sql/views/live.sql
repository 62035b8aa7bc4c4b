-- live: the published list of running instances at {{now}}: hosts alive at
-- least once in the live window before it, neither opted out nor moved (so
-- live, reviving, and dying or moving for less than the window), and not on
-- the operator's blocklist, with what their latest alive check said. Sorted
-- by host. At a --now in the past, a host first alive after it is left out
-- (the state keeps only a host's latest alive check, so one alive both
-- before and after that moment is listed by its latest).
SELECT host, state, software, version, users, active_month, open_registrations, name, description,
    discovered_at, first_alive_at, last_alive_at
FROM listable
WHERE last_alive_at >= {{now}} - to_microseconds({{live_window_us}})
  AND first_alive_at <= {{now}}
  AND state NOT IN ('opted_out', 'moved')
ORDER BY host
