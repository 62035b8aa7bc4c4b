-- fold_several: the hosts with more than one new check in an incremental
-- step (none in a full one, {{full}}: every check goes through fold_hosts).
CREATE OR REPLACE TEMP TABLE fold_several AS
SELECT host, count(*) AS checks
FROM new_checks_all
WHERE NOT {{full}}
GROUP BY host
HAVING count(*) > 1
