-- fold_observer: when the observer started, the earliest discovered_at of any
-- known host (a host's discovered_at is the earliest of its carried
-- discovery, its discoveries and its checks). The warmup rule of the
-- schedule compares every never-checked host with it, so it is computed once
-- over the whole step's input, before the fold splits the hosts into buckets.
CREATE OR REPLACE TEMP TABLE fold_observer AS
SELECT least(
    (SELECT min(discovered_at) FROM carry_all),
    (SELECT min(discovered_at) FROM new_discoveries_all),
    (SELECT min(checked_at) FROM new_checks_all)) AS start
