-- Every host the observer knows of: each was recorded as a discovery (seed,
-- peers list, redirect or manual) before it was ever checked. A host is
-- discovered once, seldom a few times, so the rows are streamed as they are
-- and the caller drops repeats: DISTINCT would hash every name at once, and
-- at ten million hosts ran out of crawl.duckdb_memory_limit (256MB).
--
-- Part $2 of $1, by a hash of the name: the driver holds a whole result
-- before its first row is read, so the caller reads the hosts in parts.
SELECT host FROM discoveries WHERE hash(host) % $1::UBIGINT = $2::UBIGINT
