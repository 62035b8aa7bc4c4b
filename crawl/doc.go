// Package crawl checks Fediverse hosts over the network: one check of one
// host (robots.txt, NodeInfo discovery, the NodeInfo document, the peers
// list) and a pass of checks over the hosts that are due.
//
// Everything a check fetches comes from untrusted hosts, so the rules of the
// threat model (docs/security.md) are enforced here: HTTPS and HTTP/1.1
// only (classical key exchanges: what a check reads is public), no proxy
// from the environment, an address guard at dial time
// (code.dny.dev/ssrf) so no name can lead to a non-public address, redirects
// followed only within the host and to paths robots.txt allows (robots.txt
// itself may redirect to another host's /robots.txt, RFC 9309), body caps
// after decompression (one cap for all pages of a peers list), streamed and
// bounded parsing, and a deadline on every request and on the whole check.
//
// NodeInfo (see crawl/internal/parse): the discovery document's links are
// tried in order of preference, highest schema version first, until one
// yields a usable document, at most maxNodeInfoLinks requests; a link to
// another host is skipped unfetched; an opt-out, a redirect off the
// document, a network failure or an oversized body ends the check. A usable
// document is a JSON object with a software name; its other fields are
// informational, kept when usable and otherwise named in the check's
// UnusableFields. Its own version may differ from its link's schema: both
// are recorded.
//
// Politeness, besides robots.txt (RFC 9309, with the configured product
// token):
//
//   - Opt-out flags: after a valid NodeInfo, software that publishes a
//     "leave me out" flag is asked for it, and only that software:
//     GNU social and Friendica, site.private in /api/statusnet/config.json;
//     Hubzilla (and redmatrix, zap), hide_in_statistics in /siteinfo.json. One
//     request of at most 64 KiB, subject to robots.txt; a set flag makes the
//     outcome opted_out (Error names the flag, nothing the site said about
//     itself is kept, the peers list is not asked for); a flag that cannot
//     be read changes nothing. A 410 Gone on the NodeInfo documents is
//     opted_out too.
//   - Conditional peers lists: CheckOptions.PeersETag and PeersLastModified
//     (the validators the derived state kept) are sent as If-None-Match and
//     If-Modified-Since on the single-GET lists (Mastodon's, Lemmy's and
//     Mbin's); paged lists (Misskey's POST, PeerTube's and Lemmy 1.x's pages) are always
//     asked in full. The response's validators are recorded in the check (only when
//     the list was read whole, or on 304). A 304 sets PeersNotModified and
//     leaves PeersFetched false (PeersCount describes no list read in this
//     check): the body is not read, nothing is discovered. "The list was
//     fetched" for scheduling is PeersFetched || PeersNotModified.
//   - Per address (see address.go): with Pass.Resolve set, the pass
//     resolves each host before its check, runs at most one check at a
//     time per address, an address being an IPv4 address or an IPv6 /64
//     (a check uses one connection at a time and closes it when it ends,
//     so this is one connection at a time per address), pins the check to
//     the address it resolved (CheckOptions.Addr, still under the
//     address guard; only a robots.txt redirected to another host is
//     fetched elsewhere), and stops checking hosts at an address once
//     Pass.AddressBudget requests were made to it in this pass. A host
//     the pass cannot resolve is recorded as unreachable, not checked. Hosts
//     skipped for the budget are not recorded and stay due; the Summary
//     counts them and the busiest address, for tuning the budget. Because
//     the pass (the trusted orchestrator) enforces this, the limit holds
//     across all checks of a pass whether they run in-process or in
//     sandboxed checker processes.
//
// Peers lists, by NodeInfo software name (see families in check.go); none
// of them is a blocklist, and where the software lists blocked instances
// beside the others, those are left out:
//
//   - Misskey and its forks: POST /api/federation/instances, paged, asked
//     with "blocked": false (without it Misskey lists the instances its
//     admin blocked too); entries marked "isBlocked": true are dropped as
//     well, for forks that ignore the parameter.
//   - Lemmy before 1.0: GET /api/v3/federated_instances, linked and
//     allowed, never blocked. Lemmy 1.0 and later (by NodeInfo's version)
//     list them only as GET /api/v4/federated_instances?kind=linked, fifty
//     to a page (its largest), each page naming the next by a cursor;
//     entries marked blocked are dropped as well. Like the other paged
//     lists, it stops at MaxPeerPages requests.
//   - PeerTube: GET /api/v1/server/followers and /following, paged, with
//     state=accepted (without it PeerTube lists pending and rejected
//     follows too).
//   - Mbin and kbin: GET /api/federated ({"instances": [{"domain": ...}]});
//     never /api/defederated, which is their blocklist.
//   - Everything else: Mastodon's GET /api/v1/instance/peers.
//
// Wiring, in outline (config.Config's CrawlOptions and PassOptions map the
// config onto these options; internal/crawlpass runs a pass over a data
// directory, with a logger, the per-address resolver and, maybe, checks in
// sandboxed processes):
//
//	opts := cfg.CrawlOptions(version) // the User-Agent, timeouts, denied addresses
//	opts.ConnectTo, opts.AllowAddrs, opts.CAFiles = rules, allowed, caFiles // crawl.ParseConnectTo per --connect-to, ParseAllowAddr per --allow-addr; --ca-cert
//	c, err := crawl.New(opts)
//	known := crawl.NewKnownSet(0) // then known.Add each known host
//	due := crawl.NewDueList(cfg.Crawl.DomainBudget) // then due.Offer each due host, saying whether it is blocklisted
//	pass := &crawl.Pass{Checker: c, Sink: sink, Known: known,
//		Concurrency: cfg.Crawl.Concurrency, MaxChecks: maxChecks,
//		Duration: cfg.Crawl.Duration.D(), Now: now, PassID: id,
//		Peers:         due.Peers, // what each host's last peers fetch was served with
//		Resolve:       c.Resolve, // a host's address is where ConnectTo or DNS sends it
//		AddressBudget: cfg.Crawl.AddressBudget}
//	summary, err := pass.Run(ctx, due.Hosts)
//
// With process isolation the Checker is a pool of checker processes, but
// Resolve is still an in-process Crawler's (built with the same options):
// resolving is the orchestrator's job, so that it can hold the address.
//
// A check depends only on its inputs and the network (Crawler.Check), and
// the pass takes any Checker, so checks can run in sandboxed processes
// without changing the pass.
package crawl
