-- Every host the observer knows of: the derived state has one row for each
-- host discovered (seed, peers list, redirect or manual) or checked.
--
-- Part $2 of $1, by a hash of the name: the driver holds a whole result
-- before its first row is read, so the caller reads the hosts in parts.
SELECT host FROM state WHERE hash(host) % $1::UBIGINT = $2::UBIGINT
