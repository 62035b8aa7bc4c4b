-- fold_edge_located: what the state keeps of each fold_hosts host's edge
-- checks (first, last, last peers fetch and redirect) and where its last
-- alive one is (facts_at): the checks joined to a row per distinct edge time
-- (unnesting a list took five times as long) on ({{host_key}}, checked_at).
CREATE OR REPLACE TEMP TABLE fold_edge_times AS
WITH new_at AS (
    -- Whether each edge after the first has a time no earlier edge has.
    SELECT {{host_key}} AS host_key, first_checked_at AS f, last_checked_at AS l, last_alive_at AS a,
        last_peers_at AS p, last_redirect_at AS r,
        l <> f AS new_l,
        coalesce(a <> f AND a <> l, false) AS new_a,
        coalesce(p <> f AND p <> l AND p IS DISTINCT FROM a, false) AS new_p,
        coalesce(r <> f AND r <> l AND r IS DISTINCT FROM a AND r IS DISTINCT FROM p, false) AS new_r
    FROM fold_hosts
), e AS (
    SELECT *, f AS edge_at FROM new_at
    UNION ALL SELECT *, l FROM new_at WHERE new_l
    UNION ALL SELECT *, a FROM new_at WHERE new_a
    UNION ALL SELECT *, p FROM new_at WHERE new_p
    UNION ALL SELECT *, r FROM new_at WHERE new_r
)
SELECT host_key, edge_at,
    edge_at = f AS is_first, edge_at = l AS is_last, edge_at IS NOT DISTINCT FROM a AS is_last_alive,
    edge_at IS NOT DISTINCT FROM p AS is_last_peers, edge_at IS NOT DISTINCT FROM r AS is_last_redirect,
    1 + new_l::INTEGER + new_a::INTEGER + new_p::INTEGER + new_r::INTEGER AS n_edges
FROM e;

-- The facts are read later (fold_edge_facts.sql): here, for every check.
CREATE OR REPLACE TEMP VIEW fold_edge_checks AS
SELECT e.host_key, e.n_edges, n.pass_id, n.outcome, n.moved_to, n.peers_etag, n.peers_last_modified,
    n.software, n.version, n.name, e.is_first, e.is_last,
    e.is_last_alive AND n.outcome = 'alive' AS is_facts,
    e.is_last_peers AND (n.peers_fetched OR coalesce(n.peers_not_modified, false)) AS is_peers,
    e.is_last_redirect AND n.outcome IN ('moving', 'moved') AS is_redirect,
    check_class(n.outcome) AS class,
    {'ts': n.checked_at, 'pass_id': n.pass_id, 'outcome': n.outcome, 'moved_to': n.moved_to} AS check_row,
    {'file': n.file_index, 'row': n.file_row_number} AS check_at
FROM fold_checks n
JOIN fold_edge_times e ON e.host_key = {{host_key}} AND n.checked_at = e.edge_at;

-- An edge time nearly always matches one check; fold_edge_ties.sql, which
-- holds more memory, runs only for the hosts where one matched several.
CREATE OR REPLACE TEMP TABLE fold_edge_located AS
SELECT host_key,
    any_value(check_row) FILTER (WHERE is_first) AS first_new,
    any_value(check_row) FILTER (WHERE is_last) AS last_new,
    any_value(check_at) FILTER (WHERE is_facts) AS facts_at,
    any_value({'etag': peers_etag, 'last_modified': peers_last_modified}) FILTER (WHERE is_peers) AS peers_validators,
    any_value({'target': moved_to}) FILTER (WHERE is_redirect) AS redirect,
    count(*) > any_value(n_edges) AS tied
FROM fold_edge_checks
GROUP BY host_key
