-- Which of the hosts in the list $1 the snapshots record as discovered: the
-- seed list's hosts and observer add's that are already known, asked before
-- the derivation (the derived state lags the snapshots until it runs). A
-- semi-join on the few given, so that each discovery is one hash probe.
SELECT DISTINCT host, true AS known FROM discoveries WHERE host IN (SELECT unnest($1::VARCHAR[]))
