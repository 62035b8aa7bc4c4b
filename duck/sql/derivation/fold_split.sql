-- The new checks divided between the two kinds of input of fold_step.sql.
-- fold_checks: those of fold_several's hosts (every check, in a full derivation), for
-- fold_hosts and the steps after it: a TABLE when few, so that those steps
-- do not each read every new check to find them, a VIEW when holding them
-- could exceed memory ({{fold_checks_kind}}). {{in_several}} is `host IN
-- (SELECT host FROM fold_several)`, or `true` in a full derivation, where
-- the subquery would still be probed with every check.
CREATE OR REPLACE TEMP {{fold_checks_kind}} fold_checks AS
SELECT * FROM new_checks_all
WHERE {{in_several}};

-- fold_one_checks: the one new check of every other checked host.
CREATE OR REPLACE TEMP VIEW fold_one_checks AS
SELECT * FROM new_checks_all
WHERE {{not_in_several}};
