-- is_blocked(h): whether the operator's blocklist (blocked) names host h
-- (blocked_by): the published lists (listable, the redirect targets of the
-- recent changes) and the due list (queries/due.sql) leave such hosts out.
blocked_by(h) IS NOT NULL
