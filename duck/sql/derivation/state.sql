-- fold_state: the derived state (docs/data.md, "state"): fold_step, with
-- the discoveries and fold_edge_facts, typed by a union with state_empty.sql.
CREATE OR REPLACE TEMP VIEW fold_state AS
WITH new_disc AS (
    SELECT host, min(discovered_at) AS via_at, arg_min(via, row(discovered_at, via)) AS via
    FROM new_discoveries_all
    GROUP BY host
), merged AS (
    SELECT host,
        s.* EXCLUDE (host, state, discovered_at, via, via_at, checks, facts_key,
            software, version, users, active_month, open_registrations, name, description,
            folded_here, from_state, n_first_pass, n_first_moved_to, n_first_at, live_break, prev_alive),
        coalesce(s.state, 'discovered') AS state,
        least(s.discovered_at, d.via_at) AS discovered_at,
        CASE WHEN d.via_at IS NOT NULL AND (s.via_at IS NULL OR d.via_at < s.via_at OR (d.via_at = s.via_at AND d.via < s.via))
             THEN d.via ELSE s.via END AS via,
        least(s.via_at, d.via_at) AS via_at,
        coalesce(s.checks, 0) AS checks, f.host_key IS NOT NULL AS edge_facts,
        if(edge_facts, f.facts.software, s.software) AS software, if(edge_facts, f.facts.version, s.version) AS version,
        if(edge_facts, f.facts.users, s.users) AS users, if(edge_facts, f.facts.active_month, s.active_month) AS active_month,
        if(edge_facts, f.facts.open_registrations, s.open_registrations) AS open_registrations,
        if(edge_facts, f.facts.name, s.name) AS name, if(edge_facts, f.facts.description, s.description) AS description
    FROM fold_step s
    FULL JOIN new_disc d USING (host)
    LEFT JOIN fold_edge_facts f ON f.host_key = s.facts_key
)
FROM ({{state_empty}})
UNION ALL BY NAME
SELECT * EXCLUDE (edge_facts) FROM merged
