-- The windowed fold's checks with their bucket of hosts: the buckets fold
-- independently, each sort bounded by a bucket (hash() lives for one step).
SELECT *, hash(host) % {{buckets}} AS bucket FROM {{input}}
