-- The new checks divided between the two folds (see fold_several.sql).
-- fold_checks: those of fold_several's hosts (every check, in a full
-- derivation), for fold_hosts and what follows it. It is a TABLE when they
-- are few (a daily step), so that fold_hosts, the edge picks and the windowed
-- fold do not each read every new check to find them, and a VIEW when
-- holding them could exceed memory ({{fold_checks_kind}}).
--
-- {{in_several}} is `host IN (SELECT host FROM fold_several)`, and
-- {{not_in_several}} its negation; in a full derivation they are `true` and
-- `false`. (Written as `{{full}} OR host IN (...)`, DuckDB would still probe
-- fold_several with every check of a full derivation: 0.3 s per read of a
-- million hosts' month.)
CREATE OR REPLACE TEMP {{fold_checks_kind}} fold_checks AS
SELECT * FROM new_checks_all
WHERE {{in_several}};

-- fold_one_checks: the new checks of every other host, exactly one each,
-- for fold_one.sql.
CREATE OR REPLACE TEMP VIEW fold_one_checks AS
SELECT * FROM new_checks_all
WHERE {{not_in_several}};
