-- fold_edge_facts: the facts (software, version, users, name…) of each
-- fold_hosts host's last alive new check, read at facts_at from the files
-- that hold one ({{facts_files}}: a literal list prunes the other files
-- before they are opened). A host's last alive check is nearly always in
-- one of the last few files, so a full derivation decodes a few files'
-- facts, not every file's. Read once the events are written: held from the
-- edge picks on, the facts made the sorts and joins spill at the
-- benchmark's 1 GB memory_limit.
CREATE OR REPLACE TEMP TABLE fold_edge_facts AS
SELECT l.host_key,
    {'software': n.software, 'version': n.version, 'users': n.users, 'active_month': n.active_month,
     'open_registrations': n.open_registrations, 'name': n.name, 'description': n.description} AS facts
FROM (SELECT * FROM fold_checks WHERE file_index IN ({{facts_files}})) n
JOIN fold_edge_located l ON l.facts_at.file = n.file_index AND l.facts_at.row = n.file_row_number
