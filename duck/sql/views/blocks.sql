-- blocks(kind, entry, h): whether the blocklist entry (kind, entry), a row
-- of blocked, names host h: an exact entry (kind 'host') that host alone, a
-- "*.domain" entry (kind 'domain') the domain and every host below it.
-- The one place the blocklist's rule is written: is_blocked, the due list,
-- observer add and the hosts a pass discovers (queries/blocked_among.sql)
-- all match through it.
entry = h OR (kind = 'domain' AND ends_with(h, '.' || entry))
