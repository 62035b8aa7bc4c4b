-- fold_checks: the new checks of fold_several's hosts (every check, in a
-- full derivation): a TABLE when few, so that later steps do not each read
-- every new check to find them ({{fold_checks_kind}}). {{in_several}} is
-- `true` in a full derivation, where the subquery would be probed anyway.
CREATE OR REPLACE TEMP {{fold_checks_kind}} fold_checks AS
SELECT * FROM new_checks_all
WHERE {{in_several}};

-- fold_one_checks: the one new check of each other checked host.
CREATE OR REPLACE TEMP VIEW fold_one_checks AS
SELECT * FROM new_checks_all
WHERE {{not_in_several}};
