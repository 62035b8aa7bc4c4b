-- late_checks: whether a new check is not later than its host's last folded
-- one (a file restored from a backup, a pass run with an earlier --now). The
-- common case is answered from two aggregates, without the join.
SELECT CASE
    WHEN (SELECT min(checked_at) FROM new_checks_all) > (SELECT max(last_checked_at) FROM carry_all) THEN false
    ELSE EXISTS (SELECT 1 FROM new_checks_all n JOIN carry_all c USING (host) WHERE n.checked_at <= c.last_checked_at)
END AS late
