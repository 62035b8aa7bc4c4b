-- is_blocked(h): whether the operator's blocklist (blocked) names host h: an
-- exact entry, or a "*.domain" entry for the domain or any host below it.
-- The one place SQL matches the blocklist (listable, and the redirect
-- targets of the recent changes).
EXISTS (SELECT 1 FROM blocked b WHERE b.entry = h OR (b.kind = 'domain' AND ends_with(h, '.' || b.entry)))
