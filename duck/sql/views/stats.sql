-- stats: the chart data in one long table, one number per row (docs/data.md,
-- "stats"): the NULL-day, NULL-software rows are the lists' current sizes.
SELECT 'live' AS metric, NULL::DATE AS day, NULL::VARCHAR AS software, count(*) AS value FROM live
UNION ALL
SELECT 'new', NULL, NULL, count(*) FROM new
UNION ALL
SELECT 'live', NULL, software, live FROM stats_software
UNION ALL
SELECT 'live', day, NULL, live FROM stats_daily
UNION ALL
SELECT 'new', day, NULL, new FROM stats_daily
