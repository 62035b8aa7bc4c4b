-- The checks the windowed fold sorts ({{input}}) with the bucket of hosts
-- each belongs to, of {{buckets}} buckets, by a hash of the host. Every
-- window of fold_runs is per host, so the buckets fold independently and
-- their runs are simply concatenated. Folding in buckets bounds the memory
-- of the sort by the size of a bucket; Derive writes the checks once, split
-- by bucket, so that each bucket reads only its own rows. hash() differs
-- between DuckDB versions, which does not matter: buckets live for one
-- derivation step.
SELECT *, hash(host) % {{buckets}} AS bucket FROM {{input}}
