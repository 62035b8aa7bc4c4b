-- fold_window_hosts: the hosts of fold_hosts left to the windowed fold, as
-- their new checks do not all give one state: more than one class, a gap in
-- the live list among them (NULL alive_bits: too many days to tell), or
-- their run's threshold crossed after the first of them.
CREATE OR REPLACE TEMP TABLE fold_window_hosts AS
WITH placed AS (
    SELECT h.*, c.run_n AS carry_n, c.last_checked_at AS carry_ts,
        run_placed(c.checks, c.run_class, c.run_n, c.run_start, c.pre_run_state, c.state,
            h.class, h.checks, h.first_checked_at) AS p
    FROM fold_hosts h
    LEFT JOIN carry_all c ON c.host = h.host
)
SELECT host FROM placed
WHERE NOT {{windowless}} OR class IS NULL
    OR (class = 'A' AND (last_alive_at::DATE - first_alive_at::DATE > {{live_days}}
        AND contains(trim({{alive_bits}}, '0'), repeat('0', {{live_days}}))) IS NOT false)
    -- The threshold matters (A: after dead) and is crossed after the first
    -- new check: not at the carried ones, at the last, not at the first.
    OR ((class IN ('F', 'T') OR (class = 'A' AND p.pre = 'dead'))
        AND NOT coalesce(p.continues AND run_crosses(class, carry_n, carry_ts, p.run_start), false)
        AND run_crosses(class, p.n, last_checked_at, p.run_start)
        AND NOT run_crosses(class, p.n - checks + 1, first_checked_at, p.run_start))
