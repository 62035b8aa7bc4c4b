-- Which of the hosts in the list $1 the observer already knows of (known.sql):
-- observer add asks about the few it is given, not every known host.
SELECT DISTINCT host FROM discoveries WHERE list_contains($1::VARCHAR[], host)
