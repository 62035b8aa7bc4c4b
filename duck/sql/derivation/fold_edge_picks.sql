-- The edge checks of each host in fold_hosts (fold_edge_located): the
-- columns of the few new checks the derived state and the windowless fold
-- need: the validators of the last peers fetch, the target of the last
-- redirect, the first and last check themselves, and where the last alive
-- check is (facts_at), whose facts fold_edge_facts.sql then reads from its
-- file alone. Each is the check at a time fold_hosts found, so this is a
-- join on (host, checked_at), not a sort. Checks of one host at the same
-- instant are found here and ordered by fold_edge_ties.sql.

-- fold_edge_times: each host's edge times (first and last check, last alive
-- check, last peers fetch, last redirect), one row per distinct time, with
-- the edges it is and how many distinct edge times the host has. The
-- checks are joined to it on (host, checked_at), so that only the few at an
-- edge come out of the join. An edge a host lacks (no alive check, say) is
-- NULL and gives no row.
--
-- The host is there as its host_key: {{host_key}}, a 64-bit hash of its
-- name when no two of fold_hosts' hosts share one, or the name itself
-- (hostKey, derive.go). Joining and grouping by an integer rather than a name
-- took a fifth less time and held less memory here.
--
-- Each edge time gives one row: the first check's, then each later edge's
-- unless an earlier edge (first, last, last alive, last peers fetch) has
-- that time, a UNION ALL of one scan of fold_hosts per edge. Unnesting a
-- list_distinct of the five times per host took five times as long (0.46 s
-- against 0.09 s for a million hosts).
CREATE OR REPLACE TEMP TABLE fold_edge_times AS
WITH h AS (
    SELECT {{host_key}} AS host_key, first_checked_at AS f, last_checked_at AS l, last_alive_at AS a,
        last_peers_at AS p, last_redirect_at AS r
    FROM fold_hosts
), new_at AS (
    -- Whether each edge after the first has a time no earlier edge has (f
    -- and l are never NULL; a missing edge is not new).
    SELECT *,
        l <> f AS new_l,
        coalesce(a <> f AND a <> l, false) AS new_a,
        coalesce(p <> f AND p <> l AND p IS DISTINCT FROM a, false) AS new_p,
        coalesce(r <> f AND r <> l AND r IS DISTINCT FROM a AND r IS DISTINCT FROM p, false) AS new_r
    FROM h
), e AS (
    SELECT *, f AS edge_at FROM new_at
    UNION ALL SELECT *, l FROM new_at WHERE new_l
    UNION ALL SELECT *, a FROM new_at WHERE new_a
    UNION ALL SELECT *, p FROM new_at WHERE new_p
    UNION ALL SELECT *, r FROM new_at WHERE new_r
)
SELECT host_key, edge_at,
    edge_at = f AS is_first,
    edge_at = l AS is_last,
    edge_at IS NOT DISTINCT FROM a AS is_last_alive,
    edge_at IS NOT DISTINCT FROM p AS is_last_peers,
    edge_at IS NOT DISTINCT FROM r AS is_last_redirect,
    1 + new_l::INTEGER + new_a::INTEGER + new_p::INTEGER + new_r::INTEGER AS n_edges
FROM e;

-- fold_edge_located: the edge checks, one row per host, with whether an edge
-- time matched more than one check (more matches than edge times; a time
-- comes from a check, so it matches at least one). An edge time nearly
-- always matches one check, so each edge is picked with any_value: the
-- tie-breaking aggregate (fold_edge_ties.sql) holds more memory (over a
-- million hosts at a 1 GB memory_limit it sometimes ran out), and is run
-- only for the hosts where an edge time matched more than one check
-- (fold_tied_hosts), the rare checks of one host at the same instant.
-- fold_windowless and the state join it back to the hosts' fold_hosts rows
-- (carrying those columns through the aggregate cost more than the join),
-- and it is a table of its own, since the aggregate and that join in one
-- query held more than the benchmark's memory limit.
--
-- The facts (software, version, users, name, description…) are not read
-- here: decoding them for every new check took 0.7 s of the benchmark's
-- full derivation, though a host's last alive check is nearly always in one
-- of the last few files. facts_at is that check's file (its file_index in
-- new_checks_all's list) and its row there.
CREATE OR REPLACE TEMP VIEW fold_edge_checks AS
SELECT e.host_key, e.n_edges, n.file_index, n.file_row_number, n.pass_id, n.outcome, n.moved_to, n.peers_etag, n.peers_last_modified,
    n.software, n.version, n.name,
    e.is_first, e.is_last,
    e.is_last_alive AND n.outcome = 'alive' AS is_facts,
    e.is_last_peers AND (n.peers_fetched OR coalesce(n.peers_not_modified, false)) AS is_peers,
    e.is_last_redirect AND n.outcome IN ('moving', 'moved') AS is_redirect,
    check_class(n.outcome) AS class,
    {'ts': n.checked_at, 'pass_id': n.pass_id, 'outcome': n.outcome, 'moved_to': n.moved_to} AS check_row,
    {'file': n.file_index, 'row': n.file_row_number} AS check_at
FROM fold_checks n
JOIN fold_edge_times e ON e.host_key = {{host_key}} AND n.checked_at = e.edge_at;

CREATE OR REPLACE TEMP TABLE fold_edge_located AS
SELECT host_key,
    any_value(check_row) FILTER (WHERE is_first) AS first_new,
    any_value(check_row) FILTER (WHERE is_last) AS last_new,
    any_value(check_at) FILTER (WHERE is_facts) AS facts_at,
    any_value({'etag': peers_etag, 'last_modified': peers_last_modified}) FILTER (WHERE is_peers) AS peers_validators,
    any_value({'target': moved_to}) FILTER (WHERE is_redirect) AS redirect,
    count(*) > any_value(n_edges) AS tied
FROM fold_edge_checks
GROUP BY host_key;

CREATE OR REPLACE TEMP TABLE fold_tied_hosts AS
SELECT host_key FROM fold_edge_located WHERE tied;
