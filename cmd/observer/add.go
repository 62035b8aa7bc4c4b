package main

import (
	"context"
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
	blocked, err := loadBlocklist(cfg, c.config)
	if err != nil {
		return err
	}
	var refused []string
	for _, h := range hosts {
		if entry := blocked.Match(h); entry != "" {
			refused = append(refused, fmt.Sprintf("%s (entry %q)", h, entry))
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("on the blocklist %s: %s; nothing was added", relativeToConfig(cfg.Crawl.Blocklist, c.config), strings.Join(refused, ", "))
	}
	// The data directory must exist, as for build and sql (Open without
	// Create refuses it): a mistyped --data must not start a new one
	// somewhere.
	store, err := duck.Open(ctx, c.data, duck.Options{Logger: log})
	if err != nil {
		return err
	}
	defer store.Close()
	now := c.at()
	// The snapshots alone: add does not derive, and data/derived may be
	// damaged or older than this observer until the next derivation.
	if err := store.Reader.CreateSnapshotViews(ctx); err != nil {
		return err
	}
	known := map[observer.Host]bool{}
	if err := store.Reader.KnownHosts(ctx, func(h observer.Host) { known[h] = true }); err != nil {
		return err
	}
	var ds []observer.Discovery
	var report strings.Builder
	given := map[observer.Host]bool{}
	for _, h := range hosts {
		switch {
		case given[h]:
			// NEW.social and new.social. are one host: said once.
			continue
		case known[h]:
			fmt.Fprintf(&report, "%s: already known\n", h)
			given[h] = true
			continue
		}
		given[h] = true
		ds = append(ds, observer.Discovery{Host: h, DiscoveredAt: now, Via: observer.ViaManual})
		fmt.Fprintf(&report, "%s: added\n", h)
	}
	// Said only once it is true: a failed write adds nothing.
	if err := store.Snapshots.WriteDiscoveries(ctx, ds); err != nil {
		return fmt.Errorf("%w; nothing was added", err)
	}
	_, err = io.WriteString(e.stdout, report.String())
	return err
}
