-- fold_edges: for each host in fold_hosts, the columns of the few new checks
-- the derived state and the windowless fold need: the facts of the last
-- alive check, the validators of the last peers fetch, the target of the
-- last redirect, and the first and last check themselves. Each is the check
-- at a time fold_hosts found, so this is a join on (host, checked_at), not a
-- sort; ties at the same time are broken as the windowed fold orders checks
-- (by pass_id, then class, outcome and moved_to, NULLs last), and the facts
-- by pass_id, software, version and name, so the result never depends on
-- the order the files are read in. Each row repeats its host's fold_hosts
-- row: the join of the two is made once here, so that fold_single and the
-- derived state do not each make it.

-- fold_edge_times: each host's edge times (first and last check, last alive
-- check, last peers fetch, last redirect), one row per distinct time, with
-- the edges it is. The checks are joined to it on (host, checked_at), so
-- that only the few at an edge come out of the join. An edge a host lacks
-- (no alive check, say) is NULL and gives no row.
CREATE OR REPLACE TEMP TABLE fold_edge_times AS
SELECT host, edge_at,
    edge_at IS NOT DISTINCT FROM first_checked_at AS is_first,
    edge_at IS NOT DISTINCT FROM last_checked_at AS is_last,
    edge_at IS NOT DISTINCT FROM last_alive_at AS is_last_alive,
    edge_at IS NOT DISTINCT FROM last_peers_at AS is_last_peers,
    edge_at IS NOT DISTINCT FROM last_redirect_at AS is_last_redirect
FROM (
    SELECT host, first_checked_at, last_checked_at, last_alive_at, last_peers_at, last_redirect_at,
        unnest(list_distinct([first_checked_at, last_checked_at, last_alive_at, last_peers_at, last_redirect_at])) AS edge_at
    FROM fold_hosts
);

-- fold_edge_picks: the edge checks, one row per host, ties broken by the
-- aggregate. fold_edges joins it back to the hosts' fold_hosts rows
-- (carrying those columns through the aggregate cost more than the join),
-- and it is a table of its own, since the aggregate and that join in one
-- query held more than the benchmark's memory limit.
CREATE OR REPLACE TEMP TABLE fold_edge_picks AS
WITH at_edge AS (
    SELECT n.host, n.pass_id, n.outcome, n.moved_to, n.peers_etag, n.peers_last_modified,
        n.software, n.version, n.name,
        e.is_first, e.is_last,
        e.is_last_alive AND n.outcome = 'alive' AS is_facts,
        e.is_last_peers AND (n.peers_fetched OR coalesce(n.peers_not_modified, false)) AS is_peers,
        e.is_last_redirect AND n.outcome IN ('moving', 'moved') AS is_redirect,
        check_class(n.outcome) AS class,
        {'ts': n.checked_at, 'pass_id': n.pass_id, 'outcome': n.outcome, 'moved_to': n.moved_to} AS check_row,
        {'software': n.software, 'version': n.version, 'users': n.users, 'active_month': n.active_month,
         'open_registrations': n.open_registrations, 'name': n.name, 'description': n.description} AS check_facts
    FROM fold_checks n
    JOIN fold_edge_times e ON n.host = e.host AND n.checked_at = e.edge_at
)
SELECT host,
    arg_min(check_row, row(pass_id, class, outcome, moved_to)) FILTER (WHERE is_first) AS first_new,
    arg_max(check_row, row(pass_id, class, outcome, moved_to)) FILTER (WHERE is_last) AS last_new,
    arg_max(check_facts, row(pass_id, software, version, name)) FILTER (WHERE is_facts) AS facts,
    arg_max({'etag': peers_etag, 'last_modified': peers_last_modified}, pass_id) FILTER (WHERE is_peers) AS peers_validators,
    arg_max({'target': moved_to}, row(pass_id, moved_to)) FILTER (WHERE is_redirect) AS redirect
FROM at_edge
GROUP BY host;

DROP TABLE fold_edge_times;

CREATE OR REPLACE TEMP TABLE fold_edges AS
SELECT h.host, h.checks, h.alive_checks, h.opted_out_checks, h.moved_checks, h.moving_checks,
    h.first_checked_at, h.last_checked_at, h.last_peers_at, h.first_alive_at, h.last_alive_at, h.alive_days,
    e.first_new, e.last_new, e.facts, e.peers_validators, e.redirect
FROM fold_hosts h
JOIN fold_edge_picks e ON e.host = h.host;

DROP TABLE fold_edge_picks
