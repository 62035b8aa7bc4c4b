-- stats: the chart data in one long table, one number per row: metric is
-- 'live' or 'new'; day is set for the daily history (stats_daily) and NULL
-- for current figures; software is set for live counts by software
-- (stats_software). The two NULL-day, NULL-software rows are the current
-- sizes of the live and new lists.
SELECT 'live' AS metric, NULL::DATE AS day, NULL::VARCHAR AS software, count(*) AS value FROM live
UNION ALL
SELECT 'new', NULL, NULL, count(*) FROM new
UNION ALL
SELECT 'live', NULL, software, live FROM stats_software
UNION ALL
SELECT 'live', day, NULL, live FROM stats_daily
UNION ALL
SELECT 'new', day, NULL, new FROM stats_daily
