-- is_blocked(h): whether the operator's blocklist names host h (blocking):
-- the published lists (listable, the redirect targets of the recent
-- changes) and the due list (queries/due.sql) leave such hosts out.
EXISTS (FROM blocking(h))
