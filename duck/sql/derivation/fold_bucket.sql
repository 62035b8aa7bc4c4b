-- The windowed fold's checks ({{input}}) with their bucket of hosts, of
-- {{buckets}}: every window is per host, so buckets fold independently, and
-- the memory of the sort is bounded by a bucket's. (hash() may differ
-- between DuckDB versions: buckets live for one step.)
SELECT *, hash(host) % {{buckets}} AS bucket FROM {{input}}
