-- The hosts of $1 (a list) the operator's blocklist names (blocks), each
-- with the entry that names it in the file's form ("host" or "*.domain"):
-- an exact entry before a "*.domain" one, the nearest domain first. One
-- query for a whole list of names, for observer add, a first pass's seeds
-- and the hosts one check discovers.
SELECT h.host,
    arg_max(CASE b.kind WHEN 'domain' THEN '*.' || b.entry ELSE b.entry END, (b.kind = 'host', length(b.entry))) AS entry
FROM unnest($1::VARCHAR[]) AS h(host)
JOIN blocked b ON blocks(b.kind, b.entry, h.host)
GROUP BY h.host
