-- The step's results, merged from the buckets' part files (fold_parts_state,
-- fold_parts_transitions, fold_parts_live_events). State and transitions are
-- per host, so the parts just add up; the live events are per day, so each
-- day's deltas are summed again over the buckets.
CREATE OR REPLACE TEMP VIEW derived_state AS SELECT * FROM fold_parts_state;
CREATE OR REPLACE TEMP VIEW derived_transitions AS SELECT * FROM fold_parts_transitions;
CREATE OR REPLACE TEMP VIEW derived_live_events AS
SELECT day, sum(delta)::BIGINT AS delta
FROM fold_parts_live_events
GROUP BY day
HAVING sum(delta) <> 0;
