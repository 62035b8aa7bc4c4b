package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/hostname"
	"github.com/fediverse-observer/observer/internal/cliflag"
)

// runAdd records manual discoveries. Every host is validated first: one
// invalid or blocklisted host means nothing is recorded.
func runAdd(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "add", "[flags] HOST...")
	var c common
	c.register(fs)
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return cliflag.Usagef("want at least one HOST")
	}
	var hosts []observer.Host
	for _, arg := range fs.Args() {
		h, err := hostname.Normalize(arg)
		if err != nil {
			return cliflag.Usagef("invalid host %q: %v", arg, err)
		}
		hosts = append(hosts, h)
	}
	cfg, log, err := c.setup(e)
	if err != nil {
		return err
	}
	blocklist, err := hostname.ReadBlocklistFile(cfg.Crawl.Blocklist)
	if err != nil {
		return err
	}
	// The data directory must exist, as for build and sql (Open without
	// Create refuses it): a mistyped --data must not start a new one
	// somewhere.
	store, err := duck.Open(ctx, c.data, duck.Options{Logger: log})
	if err != nil {
		return err
	}
	defer store.Close()
	added, err := store.AddManual(ctx, hosts, c.at(), blocklist.Entries())
	if refused, ok := errors.AsType[*duck.BlockedError](err); ok {
		return fmt.Errorf("on the blocklist %s: %v; nothing was added", cfg.Crawl.Blocklist, refused)
	}
	if err != nil {
		return fmt.Errorf("%w; nothing was added", err)
	}
	// Said only once it is true: a failed write adds nothing.
	var report strings.Builder
	for _, a := range added {
		what := "added"
		if a.Known {
			what = "already known"
		}
		fmt.Fprintf(&report, "%s: %s\n", a.Host, what)
	}
	_, err = io.WriteString(e.stdout, report.String())
	return err
}
