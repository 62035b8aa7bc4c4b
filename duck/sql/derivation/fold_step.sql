-- fold_new: what the step's checks say of each checked host, in one shape
-- from two kinds of input: a host's one new check, as it is (most hosts of a
-- daily step), or the others' aggregates, edge checks and windowed last run.
-- In flat columns: the join copies each into its hash table, and structs
-- built for every host cost a day's derivation more than the join.
CREATE OR REPLACE TEMP VIEW fold_new AS
SELECT host, 1::BIGINT AS n_checks, check_class(outcome) AS n_class, checked_at AS n_first_at,
    pass_id AS n_first_pass, moved_to AS n_first_moved_to, checked_at AS n_last_at, pass_id AS n_last_pass, outcome AS n_last_outcome,
    CASE WHEN outcome = 'alive' THEN checked_at END AS n_first_alive_at, n_first_alive_at AS n_last_alive_at,
    peers_fetched OR coalesce(peers_not_modified, false) AS n_peers, if(n_peers, checked_at, NULL) AS n_last_peers_at,
    peers_etag AS n_etag, peers_last_modified AS n_last_modified, outcome IN ('moving', 'moved') AS n_redirect, moved_to AS n_redirect_to,
    outcome = 'alive' AS n_facts, software AS n_software, version AS n_version, users AS n_users, active_month AS n_active_month,
    open_registrations AS n_open_registrations, name AS n_name, description AS n_description
FROM fold_one_checks
UNION ALL BY NAME
SELECT h.host, h.checks AS n_checks, h.class AS n_class, h.first_checked_at AS n_first_at, e.first_new.pass_id AS n_first_pass,
    e.first_new.moved_to AS n_first_moved_to, e.last_new.ts AS n_last_at, e.last_new.pass_id AS n_last_pass,
    e.last_new.outcome AS n_last_outcome, h.first_alive_at AS n_first_alive_at, h.last_alive_at AS n_last_alive_at,
    e.peers_validators IS NOT NULL AS n_peers, h.last_peers_at AS n_last_peers_at, e.peers_validators.etag AS n_etag,
    e.peers_validators.last_modified AS n_last_modified, e.redirect IS NOT NULL AS n_redirect, e.redirect.target AS n_redirect_to,
    false AS n_facts, e.host_key AS facts_key, r.host IS NOT NULL AS windowed, r.last_run, r.changed_at AS last_run_changed_at
FROM fold_hosts h
JOIN fold_edge_located e ON e.host_key = {{host_key}}
LEFT JOIN fold_last_runs r ON r.host = h.host;

-- fold_step: the step's one join with the carried state, in the state's
-- columns (state.sql adds the discoveries and facts). A host whose new
-- checks give one state (all but the windowed) is folded here: its state is
-- next_state at the last of them, on the run they continue or start.
CREATE OR REPLACE TEMP VIEW fold_step AS
WITH joined AS (
    SELECT coalesce(c.host, n.host) AS host, c.* EXCLUDE (host), n.* EXCLUDE (host),
        n.host IS NOT NULL AS stepped, coalesce(windowed, false) AS by_runs,
        run_placed(c.checks, c.run_class, c.run_n, c.run_start, c.pre_run_state, c.state, n_class, n_checks, n_first_at) AS p
    FROM carry_all c
    FULL JOIN fold_new n ON n.host = c.host
), folded AS (
    SELECT *,
        coalesce(state, 'discovered') AS from_state,
        CASE WHEN by_runs THEN last_run.end_state
             ELSE next_state(p.pre, n_class, run_crosses(n_class, p.n, n_last_at, p.run_start), last_alive_at IS NOT NULL)
        END AS new_state,
        n_class = 'A' AND opens_live_stretch(n_first_at, last_alive_at) AS live_break
    FROM joined
)
SELECT host,
    if(stepped, new_state, state) AS state,
    least(discovered_at, n_first_at) AS discovered_at,
    via, via_at,
    least(first_checked_at, n_first_at) AS first_checked_at,
    coalesce(n_last_at, last_checked_at) AS last_checked_at,
    coalesce(n_last_pass, last_pass_id) AS last_pass_id,
    coalesce(n_last_outcome, last_outcome) AS last_outcome,
    coalesce(checks, 0) + coalesce(n_checks, 0) AS checks,
    least(first_alive_at, n_first_alive_at) AS first_alive_at,
    greatest(last_alive_at, n_last_alive_at) AS last_alive_at,
    greatest(last_peers_at, n_last_peers_at) AS last_peers_at,
    if(n_peers, n_etag, peers_etag) AS peers_etag,
    if(n_peers, n_last_modified, peers_last_modified) AS peers_last_modified,
    if(n_facts, n_software, software) AS software, if(n_facts, n_version, version) AS version,
    if(n_facts, n_users, users) AS users, if(n_facts, n_active_month, active_month) AS active_month,
    if(n_facts, n_open_registrations, open_registrations) AS open_registrations,
    if(n_facts, n_name, name) AS name, if(n_facts, n_description, description) AS description, facts_key,
    if(n_redirect, n_redirect_to, redirect_to) AS redirect_to,
    CASE WHEN NOT stepped THEN run_class WHEN by_runs THEN last_run.class ELSE n_class END AS run_class,
    CASE WHEN NOT stepped THEN run_n WHEN by_runs THEN last_run.n ELSE p.n END AS run_n,
    CASE WHEN NOT stepped THEN run_start WHEN by_runs THEN last_run.run_start ELSE p.run_start END AS run_start,
    CASE WHEN NOT stepped THEN pre_run_state WHEN by_runs THEN last_run.pre ELSE coalesce(p.pre, 'discovered') END AS pre_run_state,
    CASE WHEN by_runs THEN coalesce(last_run_changed_at, changed_at)
         WHEN stepped AND new_state <> from_state THEN n_first_at
         ELSE changed_at END AS changed_at,
    -- For fold_step_events: what a host folded here changes at its first new check.
    stepped AND NOT by_runs AS folded_here, from_state, n_first_pass, n_first_moved_to, n_first_at, live_break, last_alive_at AS prev_alive
FROM folded;

-- Materialised: the transitions and the live events both read it.
CREATE OR REPLACE TEMP TABLE fold_step_events AS
SELECT host, from_state, state AS to_state, n_first_at AS checked_at, n_first_moved_to AS moved_to,
    n_first_pass AS pass_id, live_break, prev_alive
FROM fold_step
WHERE folded_here AND (state <> from_state OR live_break);
