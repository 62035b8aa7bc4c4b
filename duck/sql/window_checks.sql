-- window_checks_all: the new checks of the hosts fold_windowless left to the
-- windowed fold (fold_window_hosts), with only the columns fold_runs orders
-- and folds them by. foldWindowed splits them into buckets of hosts when
-- they are many.
CREATE OR REPLACE TEMP VIEW window_checks_all AS
SELECT host, checked_at, outcome, pass_id, moved_to FROM fold_checks
WHERE host IN (SELECT host FROM fold_window_hosts)
