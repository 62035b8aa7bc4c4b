-- listable: the hosts of state that a published list may show: all but those
-- on the operator's blocklist (an exact entry, or a "*.domain" entry for the
-- domain or any host below it). live, new and the daily counts read it;
-- the observer's start (its first record) is still taken from all of state.
SELECT * FROM state s
WHERE NOT EXISTS (SELECT 1 FROM blocked b
                  WHERE b.entry = s.host OR (b.kind = 'domain' AND ends_with(s.host, '.' || b.entry)))
