-- Hosts due for a check at $1 (the pass's now): every known host not checked
-- in the day before it. Oldest check first, never-checked hosts before all,
-- so a pass cut short by its budget still makes progress across the list.
SELECT d.host
FROM (SELECT host, min(discovered_at) AS discovered_at FROM discoveries GROUP BY host) AS d
LEFT JOIN (SELECT host, max(checked_at) AS last_checked FROM checks GROUP BY host) AS c USING (host)
WHERE c.last_checked IS NULL OR c.last_checked <= $1::TIMESTAMP - INTERVAL 1 DAY
ORDER BY c.last_checked NULLS FIRST, d.discovered_at, d.host
