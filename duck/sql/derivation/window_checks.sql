-- window_checks_all: the new checks of the hosts fold_windowless left to the
-- windowed fold (fold_window_hosts), with only the columns fold_runs orders
-- and folds them by: every one, but for a sparse host only those on its
-- days day1 to day5, each with its place in the host's checks (given_rn,
-- as fold_runs numbers them: the carried row first). foldWindowed splits
-- them into buckets of hosts when they are many.
CREATE OR REPLACE TEMP VIEW window_checks_all AS
SELECT host, checked_at, outcome, pass_id, moved_to,
    rn_offset + CASE day WHEN day1 THEN pos1 WHEN day2 THEN pos2 WHEN day3 THEN pos3
        WHEN day4 THEN pos4 WHEN day5 THEN pos5 END AS given_rn
FROM (
    SELECT n.host, n.checked_at, n.outcome, n.pass_id, n.moved_to, step_day(n.checked_at) AS day,
        w.rn_offset, w.sparse, w.day1, w.day2, w.day3, w.day4, w.day5, w.pos1, w.pos2, w.pos3, w.pos4, w.pos5
    FROM fold_checks n
    JOIN fold_window_hosts w ON w.host = n.host
)
WHERE NOT sparse OR day IN (day1, day2, day3, day4, day5)
