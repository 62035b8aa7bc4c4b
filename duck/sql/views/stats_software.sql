-- stats_software: live hosts by software (their latest alive check's
-- software, '' when it did not say), most common first.
SELECT coalesce(software, '') AS software, count(*) AS live
FROM live
GROUP BY ALL
ORDER BY live DESC, software
