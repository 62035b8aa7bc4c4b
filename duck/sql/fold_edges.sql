-- fold_edges: for each host in fold_hosts, the columns of the few new checks
-- the derived state and the windowless fold need: the facts of the last
-- alive check, the validators of the last peers fetch, the target of the
-- last redirect, and the first and last check themselves. Each is the check
-- at a time fold_hosts found, so this is a join on (host, checked_at), not a
-- sort; ties at the same time are broken as the windowed fold orders checks
-- (by pass_id, then class, outcome and moved_to, NULLs last), and the facts
-- by pass_id, software, version and name, so the result never depends on
-- the order the files are read in. Each row repeats its host's fold_hosts
-- row, so that fold_single and the derived state read one table instead of
-- joining two (a join of a million rows to a million costs more than the
-- columns).

-- at_edge(lo, hi): the new checks at the edges of the hosts with lo to hi
-- new checks, and the flags saying which edges each is at.
CREATE OR REPLACE TEMP MACRO at_edge(lo, hi) AS TABLE
SELECT n.host, n.checked_at, n.outcome, n.pass_id, n.moved_to, n.peers_etag, n.peers_last_modified,
    n.software, n.version, n.name,
    h.checks, h.alive_checks, h.opted_out_checks, h.moved_checks, h.moving_checks,
    h.first_checked_at, h.last_checked_at, h.last_peers_at, h.first_alive_at, h.last_alive_at, h.alive_days,
    n.checked_at = h.first_checked_at AS is_first,
    n.checked_at = h.last_checked_at AS is_last,
    n.checked_at = h.last_alive_at AND n.outcome = 'alive' AS is_facts,
    n.checked_at = h.last_peers_at AND (n.peers_fetched OR coalesce(n.peers_not_modified, false)) AS is_peers,
    n.checked_at = h.last_redirect_at AND n.outcome IN ('moving', 'moved') AS is_redirect,
    check_class(n.outcome) AS class,
    {'ts': n.checked_at, 'pass_id': n.pass_id, 'outcome': n.outcome, 'moved_to': n.moved_to} AS check_row,
    {'software': n.software, 'version': n.version, 'users': n.users, 'active_month': n.active_month,
     'open_registrations': n.open_registrations, 'name': n.name, 'description': n.description} AS check_facts
FROM fold_checks n
JOIN (SELECT * FROM fold_hosts WHERE checks BETWEEN lo AND hi) h ON n.host = h.host
    AND n.checked_at IN (h.first_checked_at, h.last_checked_at, h.last_alive_at, h.last_peers_at, h.last_redirect_at);

-- fold_edge_picks: the edges of the hosts with more than one new check,
-- one row per host: the tie-breaking aggregate. fold_edges joins it back to
-- their fold_hosts rows: carrying those columns through the aggregate
-- (any_value of each) cost more than the join, about 1.5 s of 7 in the
-- benchmark's full derivation; and a table of its own, since the aggregate
-- and the join in one query held more than the benchmark's memory limit.
CREATE OR REPLACE TEMP TABLE fold_edge_picks AS
SELECT host,
    arg_min(check_row, row(pass_id, class, outcome, moved_to)) FILTER (WHERE is_first) AS first_new,
    arg_max(check_row, row(pass_id, class, outcome, moved_to)) FILTER (WHERE is_last) AS last_new,
    arg_max(check_facts, row(pass_id, software, version, name)) FILTER (WHERE is_facts) AS facts,
    arg_max({'etag': peers_etag, 'last_modified': peers_last_modified}, pass_id) FILTER (WHERE is_peers) AS peers_validators,
    arg_max({'target': moved_to}, row(pass_id, moved_to)) FILTER (WHERE is_redirect) AS redirect
FROM at_edge(2, 9223372036854775807)
GROUP BY host;

CREATE OR REPLACE TEMP TABLE fold_edges AS
-- A host checked once in the step (nearly every host, in a daily step) has
-- one check at every edge, so it needs no aggregate.
SELECT host, checks, alive_checks, opted_out_checks, moved_checks, moving_checks,
    first_checked_at, last_checked_at, last_peers_at, first_alive_at, last_alive_at, alive_days,
    check_row AS first_new,
    check_row AS last_new,
    CASE WHEN is_facts THEN check_facts END AS facts,
    CASE WHEN is_peers THEN {'etag': peers_etag, 'last_modified': peers_last_modified} END AS peers_validators,
    CASE WHEN is_redirect THEN {'target': moved_to} END AS redirect
FROM at_edge(1, 1)
UNION ALL
SELECT h.host, h.checks, h.alive_checks, h.opted_out_checks, h.moved_checks, h.moving_checks,
    h.first_checked_at, h.last_checked_at, h.last_peers_at, h.first_alive_at, h.last_alive_at, h.alive_days,
    e.first_new, e.last_new, e.facts, e.peers_validators, e.redirect
FROM fold_hosts h
JOIN fold_edge_picks e ON e.host = h.host;

DROP TABLE fold_edge_picks
