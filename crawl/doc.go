// Package crawl checks Fediverse hosts over the network: one check of one
// host (robots.txt, NodeInfo discovery, the NodeInfo document, the peers
// list) and a pass of checks over the hosts that are due.
//
// Everything a check fetches comes from untrusted hosts, so the rules of the
// design document's threat model are enforced here: HTTPS and HTTP/1.1
// only, no proxy from the environment, an address guard at dial time
// (code.dny.dev/ssrf) so no name can lead to a non-public address, redirects
// followed only within the host, body caps after decompression, streamed
// and bounded parsing, and a deadline on every request and on the whole
// check.
//
// Wiring, as cmd/observer does it:
//
//	c, err := crawl.New(crawl.Options{
//		UserAgent:    cfg.Crawl.UserAgent(version),
//		ProductToken: cfg.Crawl.ProductToken,
//		ConnectTo:    rules,   // crawl.ParseConnectTo per --connect-to
//		AllowAddrs:   allowed, // crawl.ParseAllowAddr per --allow-addr
//		CAFiles:      caFiles, // --ca-cert
//		CheckTimeout: cfg.Crawl.CheckTimeout.D(),
//	})
//	known := crawl.NewKnownSet(len(hosts)) // then known.Add each known host
//	pass := &crawl.Pass{Checker: c, Sink: sink, Known: known,
//		Concurrency: cfg.Crawl.Concurrency, MaxChecks: maxChecks,
//		Duration: cfg.Crawl.Duration.D(), Now: now, PassID: id}
//	summary, err := pass.Run(ctx, due)
//
// A check depends only on its inputs and the network (Crawler.Check), and
// the pass takes any Checker, so checks can later move into sandboxed
// processes without changing the pass.
package crawl
