-- fold_new: what the step's checks say of each checked host, in one shape
-- from two kinds of input: a host's one new check, as it is (most hosts of a
-- daily step), or the others' aggregates, edge checks and windowed last run.
CREATE OR REPLACE TEMP VIEW fold_new AS
SELECT host, 1::BIGINT AS checks, check_class(outcome) AS class, checked_at AS first_checked_at,
    CASE WHEN outcome = 'alive' THEN checked_at END AS first_alive_at,
    first_alive_at AS last_alive_at,
    CASE WHEN peers_fetched OR coalesce(peers_not_modified, false) THEN checked_at END AS last_peers_at,
    {'ts': checked_at, 'pass_id': pass_id, 'outcome': outcome, 'moved_to': moved_to} AS first_new,
    first_new AS last_new,
    CASE WHEN peers_fetched OR coalesce(peers_not_modified, false)
         THEN {'etag': peers_etag, 'last_modified': peers_last_modified} END AS peers_validators,
    CASE WHEN outcome IN ('moving', 'moved') THEN {'target': moved_to} END AS redirect,
    CASE WHEN outcome = 'alive' THEN {'software': software, 'version': version, 'users': users, 'active_month': active_month,
        'open_registrations': open_registrations, 'name': name, 'description': description} END AS facts
FROM fold_one_checks
UNION ALL BY NAME
SELECT h.host, h.checks, h.class, h.first_checked_at, h.first_alive_at, h.last_alive_at, h.last_peers_at,
    e.first_new, e.last_new, e.peers_validators, e.redirect, e.host_key AS facts_key,
    r.host IS NOT NULL AS windowed, r.last_run, r.changed_at AS last_run_changed_at
FROM fold_hosts h
JOIN fold_edge_located e ON e.host_key = {{host_key}}
LEFT JOIN fold_last_runs r ON r.host = h.host;

-- fold_step: the step's one join with the carried state, in the state's
-- columns (state.sql adds the discoveries and facts). A host whose new
-- checks give one state (all but the windowed) is folded here: its state is
-- next_state at the last of them, on the run they continue or start.
CREATE OR REPLACE TEMP VIEW fold_step AS
WITH joined AS (
    SELECT coalesce(c.host, n.host) AS host, c.* EXCLUDE (host),
        n.host IS NOT NULL AS stepped, coalesce(n.windowed, false) AS windowed,
        n.checks AS new_checks, n.class AS new_class, n.first_checked_at AS new_first_at,
        n.first_alive_at AS new_first_alive_at, n.last_alive_at AS new_last_alive_at, n.last_peers_at AS new_last_peers_at,
        n.first_new, n.last_new, n.peers_validators, n.redirect, n.facts AS new_facts, n.facts_key,
        n.last_run, n.last_run_changed_at,
        run_placed(c.checks, c.run_class, c.run_n, c.run_start, c.pre_run_state, c.state,
            n.class, n.checks, n.first_checked_at) AS p
    FROM carry_all c
    FULL JOIN fold_new n ON n.host = c.host
), folded AS (
    SELECT *,
        coalesce(state, 'discovered') AS from_state,
        CASE WHEN windowed THEN last_run.end_state
             ELSE next_state(p.pre, new_class, run_crosses(new_class, p.n, last_new.ts, p.run_start), last_alive_at IS NOT NULL)
        END AS new_state,
        new_class = 'A' AND opens_live_stretch(new_first_at, last_alive_at) AS live_break
    FROM joined
)
SELECT host,
    CASE WHEN stepped THEN new_state ELSE state END AS state,
    least(discovered_at, new_first_at) AS discovered_at,
    via, via_at,
    least(first_checked_at, new_first_at) AS first_checked_at,
    coalesce(last_new.ts, last_checked_at) AS last_checked_at,
    coalesce(last_new.pass_id, last_pass_id) AS last_pass_id,
    coalesce(last_new.outcome, last_outcome) AS last_outcome,
    coalesce(checks, 0) + coalesce(new_checks, 0) AS checks,
    least(first_alive_at, new_first_alive_at) AS first_alive_at,
    greatest(last_alive_at, new_last_alive_at) AS last_alive_at,
    greatest(last_peers_at, new_last_peers_at) AS last_peers_at,
    CASE WHEN peers_validators IS NOT NULL THEN peers_validators.etag ELSE peers_etag END AS peers_etag,
    CASE WHEN peers_validators IS NOT NULL THEN peers_validators.last_modified ELSE peers_last_modified END AS peers_last_modified,
    software, version, users, active_month, open_registrations, name, description, new_facts, facts_key,
    CASE WHEN redirect IS NOT NULL THEN redirect.target ELSE redirect_to END AS redirect_to,
    CASE WHEN NOT stepped THEN run_class WHEN windowed THEN last_run.class ELSE new_class END AS run_class,
    CASE WHEN NOT stepped THEN run_n WHEN windowed THEN last_run.n ELSE p.n END AS run_n,
    CASE WHEN NOT stepped THEN run_start WHEN windowed THEN last_run.run_start ELSE p.run_start END AS run_start,
    CASE WHEN NOT stepped THEN pre_run_state WHEN windowed THEN last_run.pre ELSE coalesce(p.pre, 'discovered') END AS pre_run_state,
    CASE WHEN windowed THEN coalesce(last_run_changed_at, changed_at)
         WHEN stepped AND new_state <> from_state THEN first_new.ts
         ELSE changed_at END AS changed_at,
    -- For fold_step_events: what a host folded here changes at its first new check.
    stepped AND NOT windowed AS folded_here, from_state, first_new, live_break, last_alive_at AS prev_alive
FROM folded;

-- Materialised: the transitions and the live events both read it.
CREATE OR REPLACE TEMP TABLE fold_step_events AS
SELECT host, from_state, state AS to_state, first_new.ts AS checked_at, first_new.moved_to AS moved_to,
    first_new.pass_id AS pass_id, live_break, prev_alive
FROM fold_step
WHERE folded_here AND (state <> from_state OR live_break);
