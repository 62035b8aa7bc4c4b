-- fold_state: the derived state after this step, one row per known host
-- (docs/data.md, "state"): fold_step, with the step's discoveries (the
-- earliest discovered_at over discoveries and checks, via of the earliest
-- discovery) and the facts of the latest alive check. Its columns take
-- their types and order from state_empty.sql by a union with it.
CREATE OR REPLACE TEMP VIEW fold_state AS
WITH new_disc AS (
    SELECT host, min(discovered_at) AS via_at, arg_min(via, row(discovered_at, via)) AS via
    FROM new_discoveries_all
    GROUP BY host
), merged AS (
    SELECT host,
        s.* EXCLUDE (host, state, discovered_at, via, via_at, checks, new_facts, facts_key,
            folded_here, from_state, first_new, live_break, prev_alive),
        coalesce(s.state, 'discovered') AS state,
        least(s.discovered_at, d.via_at) AS discovered_at,
        CASE WHEN d.via_at IS NOT NULL AND (s.via_at IS NULL OR d.via_at < s.via_at OR (d.via_at = s.via_at AND d.via < s.via))
             THEN d.via ELSE s.via END AS via,
        least(s.via_at, d.via_at) AS via_at,
        coalesce(s.checks, 0) AS checks,
        coalesce(s.new_facts, f.facts) AS facts
    FROM fold_step s
    FULL JOIN new_disc d USING (host)
    LEFT JOIN fold_edge_facts f ON f.host_key = s.facts_key
)
FROM ({{state_empty}})
UNION ALL BY NAME
SELECT * EXCLUDE (facts, software, version, users, active_month, open_registrations, name, description),
    CASE WHEN facts IS NOT NULL THEN facts.software ELSE software END AS software,
    CASE WHEN facts IS NOT NULL THEN facts.version ELSE version END AS version,
    CASE WHEN facts IS NOT NULL THEN facts.users ELSE users END AS users,
    CASE WHEN facts IS NOT NULL THEN facts.active_month ELSE active_month END AS active_month,
    CASE WHEN facts IS NOT NULL THEN facts.open_registrations ELSE open_registrations END AS open_registrations,
    CASE WHEN facts IS NOT NULL THEN facts.name ELSE name END AS name,
    CASE WHEN facts IS NOT NULL THEN facts.description ELSE description END AS description,
    coalesce(changed_at, discovered_at) AS since,
    CASE WHEN state IN ('moving', 'moved') THEN redirect_to END AS moved_to,
    CASE WHEN run_class = 'F' THEN run_n ELSE 0 END AS failures
FROM merged
