package main

import (
	"context"
	"fmt"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/hostname"
)

// runAdd records manual discoveries. Every host is validated first: one
// invalid host means nothing is recorded.
func runAdd(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "add", "[flags] HOST...")
	var c common
	c.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("want at least one HOST")
	}
	var hosts []string
	for _, arg := range fs.Args() {
		h, err := hostname.Normalize(arg)
		if err != nil {
			return usagef("invalid host %q: %v", arg, err)
		}
		hosts = append(hosts, h)
	}
	store, err := duck.Open(ctx, c.data, duck.Options{Create: true})
	if err != nil {
		return err
	}
	defer store.Close()
	now := c.at()
	if err := store.CreateViews(ctx, duck.ViewParams{Now: now}); err != nil {
		return err
	}
	known := map[string]bool{}
	if err := store.KnownHosts(ctx, func(h string) { known[h] = true }); err != nil {
		return err
	}
	var ds []observer.Discovery
	for _, h := range hosts {
		if known[h] {
			fmt.Fprintf(e.stdout, "%s: already known\n", h)
			continue
		}
		known[h] = true
		ds = append(ds, observer.Discovery{Host: h, DiscoveredAt: now, Via: observer.ViaManual})
		fmt.Fprintf(e.stdout, "%s: added\n", h)
	}
	return store.WriteDiscoveries(ctx, ds)
}
