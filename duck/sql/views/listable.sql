-- listable: the hosts of state that a published list may show: all but those
-- on the operator's blocklist. live, new and the daily counts read it; the
-- observer's start (its first record) is still taken from all of state.
SELECT * FROM state WHERE NOT is_blocked(host)
