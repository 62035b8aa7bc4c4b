package main

import (
	"context"
	"fmt"

	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/hostname"
	"github.com/fediverse-observer/observer/internal/cliflag"
)

// runCheck checks one host as a pass would and prints what the crawler saw,
// step by step. It records nothing and reads no data directory (so no
// blocklist either): it is for looking, not crawling.
func runCheck(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "check", "[flags] HOST")
	var c common
	var n network
	c.registerNoData(fs)
	n.register(fs)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	peers := fs.Bool("peers", true, "fetch the peers list too")
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cliflag.Usagef("want exactly one HOST, got %d arguments", fs.NArg())
	}
	host, err := hostname.Normalize(fs.Arg(0))
	if err != nil {
		return cliflag.Usagef("invalid host %q: %v", fs.Arg(0), err)
	}
	cfg, log, err := c.setup(e)
	if err != nil {
		return err
	}
	_, crawler, err := n.crawler(cfg, log)
	if err != nil {
		return err
	}
	result, trace := crawler.Check(ctx, host, crawl.CheckOptions{FetchPeers: *peers, CheckedAt: c.at()})
	write := crawl.WriteText
	if *asJSON {
		write = crawl.WriteJSON
	}
	if err := write(e.stdout, result, trace); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
