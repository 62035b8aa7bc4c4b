-- newcomers: every host that counts as new on the day it was first seen
-- alive, the one definition of "new" that the new list (its window) and
-- stats_daily's news (every day) read. Hosts already discovered during the
-- observer's warmup (its first days after its earliest record) are its
-- baseline, not new: the crawler was only finding what already existed.
-- Opted-out and blocklisted hosts are never new.
SELECT host, state, software, version, users, active_month, open_registrations, name, description,
    discovered_at, first_alive_at, last_alive_at
FROM listable
WHERE first_alive_at IS NOT NULL
  AND discovered_at >= (SELECT min(discovered_at) FROM state) + to_microseconds({{warmup_us}})
  AND state <> 'opted_out'
