-- new: the published list of new instances at {{now}}: the newcomers whose
-- first alive check falls in the new window before it, newest first.
SELECT *
FROM newcomers
WHERE first_alive_at >= {{now}} - to_microseconds({{new_window_us}})
  AND first_alive_at <= {{now}}
ORDER BY first_alive_at DESC, host
