-- fold_edge_facts: the facts (software, name…) of fold_hosts' hosts' last alive new checks,
-- from the files that hold one ({{facts_files}}: a literal list leaves the others unopened),
-- once the events are written (held earlier, they made the benchmark's sorts spill).
CREATE OR REPLACE TEMP TABLE fold_edge_facts AS
SELECT l.host_key,
    {'software': n.software, 'version': n.version, 'users': n.users, 'active_month': n.active_month,
     'open_registrations': n.open_registrations, 'name': n.name, 'description': n.description} AS facts
FROM (SELECT * FROM fold_checks WHERE file_index IN ({{facts_files}})) n
JOIN fold_edge_located l ON l.facts_at.file = n.file_index AND l.facts_at.row = n.file_row_number
