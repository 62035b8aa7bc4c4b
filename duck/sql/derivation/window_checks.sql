-- window_checks_all: the new checks of the hosts fold_windowless left to the
-- windowed fold (fold_window_hosts), with only the columns fold_runs orders
-- and folds them by. foldWindowed splits them into buckets of hosts when
-- they are many.
CREATE OR REPLACE TEMP VIEW window_checks_all AS
SELECT n.host, n.checked_at, n.outcome, n.pass_id, n.moved_to
FROM fold_checks n
JOIN fold_window_hosts w ON w.host = n.host
