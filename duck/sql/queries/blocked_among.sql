-- The hosts of $1 (a list) the operator's blocklist names, each with the
-- entry that names it in the file's form (blocked_by). One query for a
-- whole list of names, for observer add, a first pass's seeds and the hosts
-- one check discovers.
SELECT host, entry
FROM (SELECT host, blocked_by(host) AS entry FROM unnest($1::VARCHAR[]) AS h(host))
WHERE entry IS NOT NULL
