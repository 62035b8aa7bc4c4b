-- fold_edges: each host's fold_hosts row with its edge checks
-- (fold_edge_picks.sql, fold_edge_ties.sql where they tie, and the facts
-- from fold_edge_facts.sql). A view:
-- fold_windowless and the derived state each make the join, which cost less
-- in the benchmark's full derivation (0.2-0.9 s less, CPU 0.4-1.6 s less in
-- three alternated runs) than copying a million hosts' facts into a table
-- of their own, and fold_hosts and fold_edge_picks, kept until the state is
-- written instead, hold about as much memory as that table did.
DROP VIEW fold_edge_checks;

DROP TABLE fold_edge_times;

DROP TABLE fold_tied_hosts;

CREATE OR REPLACE TEMP VIEW fold_edges AS
SELECT h.host, h.checks, h.alive_checks, h.opted_out_checks, h.moved_checks, h.moving_checks,
    h.first_checked_at, h.last_checked_at, h.last_peers_at, h.first_alive_at, h.last_alive_at, h.alive_days, h.check_days,
    e.first_new, e.last_new, e.facts, e.peers_validators, e.redirect
FROM fold_hosts h
JOIN fold_edge_picks e ON e.host_key = {{host_key}}
