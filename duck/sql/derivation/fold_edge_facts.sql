-- fold_edge_picks: fold_edge_located with each host's facts (software,
-- version, users, name, description…) in place of where they are: those of
-- its last alive check (facts_at, a file of new_checks_all's list and a row
-- of it), NULL for a host with no alive new check.
--
-- Only the files that hold such a check are read ({{facts_files}}, their
-- file_index values, listed by foldState: a literal list prunes the other
-- files before they are opened, where a subquery's list was pruned by its
-- range once it held more than a few dozen files). A host's last alive
-- check is nearly always in one of the last few files, so a full derivation
-- decodes a few files' facts instead of every file's: over the benchmark's
-- month of a million hosts, four files, read in 0.5 s, where decoding every
-- check's facts in the edge join had cost it 0.8-1.0 s.
--
-- A right join, so that every host keeps its row, and a table that replaces
-- fold_edge_located. It is the state's last step before state.sql (Derive
-- runs it once the transitions and live events are written and their
-- tables dropped): the facts are what the state holds most of, and held
-- from the edge picks on, they made the windowed fold's sorts and the
-- state's joins spill at the benchmark's 1 GB memory_limit.
CREATE OR REPLACE TEMP TABLE fold_edge_picks AS
SELECT l.host_key, l.first_new, l.last_new,
    CASE WHEN n.file_index IS NOT NULL THEN
        {'software': n.software, 'version': n.version, 'users': n.users, 'active_month': n.active_month,
         'open_registrations': n.open_registrations, 'name': n.name, 'description': n.description} END AS facts,
    l.peers_validators, l.redirect, l.tied
FROM (SELECT * FROM fold_checks WHERE file_index IN ({{facts_files}})) n
RIGHT JOIN fold_edge_located l ON l.facts_at.file = n.file_index AND l.facts_at.row = n.file_row_number;

DROP TABLE fold_edge_located
