-- window_checks_all: the new checks of the hosts fold_windowless left to the
-- windowed fold (fold_window_hosts), with only the columns fold_runs orders
-- and folds them by: every one, but for a sparse host only those on its
-- sparse_days, each with its place in the host's checks (given_rn, as
-- fold_runs numbers them: the carried row first). foldWindowed splits them
-- into buckets of hosts when they are many.
CREATE OR REPLACE TEMP VIEW window_checks_all AS
SELECT n.host, n.checked_at, n.outcome, n.pass_id, n.moved_to,
    w.rn_offset + list_position(w.set_days, step_day(n.checked_at)) AS given_rn
FROM fold_checks n
JOIN fold_window_hosts w ON w.host = n.host
WHERE w.sparse_days IS NULL OR list_contains(w.sparse_days, step_day(n.checked_at))
