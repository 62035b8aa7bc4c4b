-- is_blocked(h): whether the operator's blocklist (blocked) names host h
-- (blocks): the published lists (listable, the redirect targets of the
-- recent changes) and the due list (queries/due.sql) leave such hosts out.
EXISTS (SELECT 1 FROM blocked b WHERE blocks(b.kind, b.entry, h))
