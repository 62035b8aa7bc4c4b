-- fold_several: the hosts with more than one new check in this step, and
-- how many. Their checks go through fold_hosts and what follows it; every
-- other checked host has exactly one new check, which fold_one.sql folds
-- onto its carried state (fold_split.sql divides the checks). A full
-- derivation ({{full}}) carries nothing to fold onto: it leaves this empty
-- and takes every check through fold_hosts.
CREATE OR REPLACE TEMP TABLE fold_several AS
SELECT host, count(*) AS checks
FROM new_checks_all
WHERE NOT {{full}}
GROUP BY host
HAVING count(*) > 1
