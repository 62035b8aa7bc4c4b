-- window_checks_all: the new checks of fold_window_hosts' hosts, with the
-- columns fold_runs orders and folds them by.
CREATE OR REPLACE TEMP VIEW window_checks_all AS
SELECT n.host, n.checked_at, n.outcome, n.pass_id, n.moved_to
FROM fold_checks n
JOIN fold_window_hosts w ON w.host = n.host
