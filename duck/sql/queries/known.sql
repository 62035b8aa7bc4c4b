-- Every host the observer knows of: each was recorded as a discovery (seed,
-- peers list, redirect or manual) before it was ever checked. A host is
-- discovered once, seldom a few times, so the rows are streamed as they are
-- and the caller drops repeats: DISTINCT would hash every name at once, and
-- at ten million hosts ran out of crawl.duckdb_memory_limit (256MB).
SELECT host FROM discoveries
