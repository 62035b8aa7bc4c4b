-- blocked_by(h): the entry of the operator's blocklist that names host h
-- (blocking), in the file's form ("host" or "*.domain"), or NULL; of
-- several, the exact entry, then the nearest domain's. observer add names
-- it when it refuses a host (queries/blocked_among.sql).
(SELECT arg_max(CASE kind WHEN 'domain' THEN '*.' || entry ELSE entry END, (kind = 'host', length(entry)))
 FROM blocking(h))
