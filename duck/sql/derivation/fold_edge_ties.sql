-- The edges of hosts with checks tied at an edge time, picked again in the
-- windowed fold's order (facts: by pass_id, software, version, name).
CREATE OR REPLACE TEMP TABLE fold_edge_tie_picks AS
SELECT host_key,
    arg_min(check_row, row(pass_id, class, outcome, moved_to)) FILTER (WHERE is_first) AS first_new,
    arg_max(check_row, row(pass_id, class, outcome, moved_to)) FILTER (WHERE is_last) AS last_new,
    arg_max(check_at, row(pass_id, software, version, name)) FILTER (WHERE is_facts) AS facts_at,
    arg_max({'etag': peers_etag, 'last_modified': peers_last_modified}, pass_id) FILTER (WHERE is_peers) AS peers_validators,
    arg_max({'target': moved_to}, row(pass_id, moved_to)) FILTER (WHERE is_redirect) AS redirect,
    true AS tied
FROM fold_edge_checks
WHERE host_key IN (SELECT host_key FROM fold_edge_located WHERE tied)
GROUP BY host_key;

DELETE FROM fold_edge_located WHERE tied;
INSERT INTO fold_edge_located BY NAME SELECT * FROM fold_edge_tie_picks;
DROP TABLE fold_edge_tie_picks
