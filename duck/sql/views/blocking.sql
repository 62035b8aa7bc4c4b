-- blocking(h): the entries of the operator's blocklist (blocked) that name
-- host h, a table of (kind, entry). An exact entry (kind 'host') names that
-- host alone, a "*.domain" entry (kind 'domain') the domain and every host
-- below it. The one place the blocklist's rule is written: is_blocked (the
-- published lists, the due list) asks whether it has a row, blocked_by
-- which entry to name (observer add, the hosts a pass discovers).
--
-- A join of h's domains (h itself and each domain above it: a.b.c, b.c, c)
-- to the entries, so a host costs the same whatever the list's size
-- (docs/benchmarks.md, "blocklist"), where comparing h with each entry
-- would cost hosts × entries. The domains are unnested in a projection:
-- unnest as a lateral join costs several times more.
SELECT b.kind, b.entry
FROM (SELECT unnest([array_to_string(string_split(h, '.')[i:], '.') FOR i IN range(1, len(string_split(h, '.')) + 1)]) AS domain) d
JOIN blocked b ON b.entry = d.domain AND (b.kind = 'domain' OR d.domain = h)
