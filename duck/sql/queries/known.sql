-- Every host the observer knows of: each was recorded as a discovery (seed,
-- peers list, redirect or manual) before it was ever checked.
SELECT DISTINCT host FROM discoveries
