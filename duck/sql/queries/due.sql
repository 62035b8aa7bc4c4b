-- Hosts due for a check at $1 (the pass's now): every host of the derived
-- state whose next_check_at (the schedule, see views/state.sql) is not after
-- now, and every live or reviving host whose peers list earned a shorter
-- interval than peers_interval and is due (a quiet list waits for its
-- host's next check); the hosts checked before ahead of those never
-- checked, each soonest first: a pass cut short by its budget takes the
-- most overdue, and a flood of new names (a hostile peers list) cannot push
-- the known hosts out of a pass.
--
-- A peers list earns its rate: it is due once the interval it earned has
-- passed since it was last fetched (never fetched: at once). One whose
-- server gives validators is asked conditionally, so reading it often
-- costs a 304 while it is unchanged, and it changes at most daily
-- (Mastodon caches it for a day; see fedisim/spread_serve.go): it is due
-- after $3 (peers_min_interval) if it named a host first discovered
-- through it within the last $2 (peers_interval), and after $4
-- (peers_conditional_interval) if not: a hub serves a list up to a day
-- old, so a new instance is often named first by another list, and with
-- such lists read every $2 the observer waited for a hub's. Without validators
-- every fetch is read in full: a list that named no such host waits $2;
-- one that did, $2 / (1 + yielded), but not below a day (the shortest
-- cache lifetime of the common servers) nor $3. "First discovered through
-- it" is the state's via, so a host named by several lists is credited to
-- the one read first; a list's first reading counts too. Without it a hub
-- whose second reading named nothing first (another hub's renewed list had
-- named it) waited $2 unread, and so could not earn again: on the spread
-- model at 10 000 instances, new instances named only by such hubs were
-- found days late.
-- fetch_peers says whether the host's peers list is due; new says it was
-- never checked; blocked that the operator's blocklist names it
-- (is_blocked), so the pass leaves it out and counts it; peers_etag and
-- peers_last_modified are the validators to ask for the peers list with
-- (If-None-Match, If-Modified-Since).
WITH yield AS (
    SELECT via AS host, count(*) AS yielded
    FROM state
    WHERE discovered_at > $1::TIMESTAMP - to_microseconds($2::BIGINT)
    GROUP BY via
), earned AS (
    SELECT s.host, s.state, s.next_check_at, s.checks, s.last_peers_at, s.peers_etag, s.peers_last_modified,
        CASE WHEN coalesce(s.peers_etag, s.peers_last_modified, '') <> ''
                  THEN CASE WHEN y.yielded IS NULL THEN $4::BIGINT ELSE $3::BIGINT END
             WHEN y.yielded IS NULL THEN $2::BIGINT
             ELSE least($2::BIGINT, greatest($2::BIGINT // (1 + y.yielded), $3::BIGINT, 86400000000))
        END AS peers_every
    FROM state s
    LEFT JOIN yield y USING (host)
), due AS (
    SELECT *,
        CASE WHEN last_peers_at IS NULL THEN NULL
             ELSE last_peers_at + to_microseconds(peers_every) END AS peers_due_at
    FROM earned
)
SELECT host,
    peers_due_at IS NULL OR peers_due_at <= $1::TIMESTAMP AS fetch_peers,
    checks = 0 AS new,
    is_blocked(host) AS blocked,
    coalesce(peers_etag, '') AS peers_etag,
    coalesce(peers_last_modified, '') AS peers_last_modified
FROM due
WHERE next_check_at <= $1::TIMESTAMP
    OR (state IN ('live', 'reviving') AND peers_every < $2::BIGINT AND peers_due_at <= $1::TIMESTAMP)
ORDER BY checks = 0, least(next_check_at, coalesce(peers_due_at, next_check_at)), host
