-- fold_observer: when the observer started, the earliest discovered_at of any
-- known host (a host's discovered_at is the earliest of its carried
-- discovery, its discoveries and its checks, whose earliest fold_hosts and
-- fold_one_checks have).
-- The warmup rule of the schedule compares every never-checked host with it.
CREATE OR REPLACE TEMP TABLE fold_observer AS
SELECT least(
    (SELECT min(discovered_at) FROM carry_all),
    (SELECT min(discovered_at) FROM new_discoveries_all),
    (SELECT min(first_checked_at) FROM fold_hosts),
    (SELECT min(checked_at) FROM fold_one_checks)) AS start
