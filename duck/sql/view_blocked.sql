-- blocked: the operator's blocklist (crawl.blocklist, data/blocklist.txt) as
-- this run read it. kind 'host' is an exact host; kind 'domain' is a
-- "*.domain" entry, which blocks the domain and every host below it. The
-- published lists (live, new and the counts made from them) leave these
-- hosts out; the snapshots and the state keep them.
SELECT kind, entry FROM {{blocklist_source}}
