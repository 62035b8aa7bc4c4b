-- carry_touched: in an incremental step that folds the hosts it touches
-- alone (docs/data.md, "The state's base and delta"), those hosts (named by
-- its new checks and discoveries) and their carried rows: carry_all, which
-- every later step reads, is those rows alone.
CREATE OR REPLACE TEMP TABLE fold_touched AS
SELECT host FROM new_checks_all
UNION
SELECT host FROM new_discoveries_all;

CREATE OR REPLACE TEMP TABLE carry_touched AS
SELECT * FROM {{state_source}} SEMI JOIN fold_touched USING (host);

CREATE OR REPLACE TEMP VIEW carry_all AS
SELECT * FROM carry_touched;
