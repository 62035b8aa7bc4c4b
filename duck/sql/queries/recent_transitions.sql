-- The recent changes a site publishes: at most $1 transitions made up to
-- $2 (the moment the site is built for, like live and new), newest first,
-- of the hosts a published list may show (listable: not on the
-- blocklist), neither opted out (it leaves every published list at once)
-- nor never seen alive (a name only ever seen in a peers list would
-- otherwise be published for dying: any hostile list could put one on the
-- site). A redirect target on the blocklist is left out of its row.
SELECT t.host, t.from_state, t.to_state, t.checked_at,
    CASE WHEN NOT is_blocked(t.moved_to) THEN t.moved_to END AS moved_to
FROM transitions t
JOIN listable l ON l.host = t.host AND l.state <> 'opted_out' AND l.first_alive_at IS NOT NULL
WHERE t.checked_at <= $2
ORDER BY t.checked_at DESC, t.host, t.to_state
LIMIT $1
