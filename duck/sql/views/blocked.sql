-- blocked: the operator's blocklist (crawl.blocklist, data/blocklist.txt) as
-- this run read it. kind 'host' is an exact host; kind 'domain' is a
-- "*.domain" entry, which blocks the domain and every host below it. The
-- published lists (live, new and the counts made from them: stats'
-- current sizes, stats_software, stats_daily) leave these hosts out; the
-- snapshots, the state and the derivation's live events keep them.
SELECT kind, entry FROM {{blocklist_source}}
