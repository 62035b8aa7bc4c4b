package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/fediverse-observer/observer/build"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/hostname"
	"github.com/fediverse-observer/observer/internal/cliflag"
)

// runBuild renders the site: derive, define the views, build into --out.
func runBuild(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "build", "[flags]")
	var c common
	c.register(fs)
	out := fs.String("out", "public", "output `directory`, replaced as a whole by the new site (empty, new, or built by observer)")
	full := fs.Bool("full", false, "derive from scratch over every snapshot instead of folding only the new ones")
	if err := cliflag.ParseNoArgs(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return cliflag.Usagef("invalid -out: must not be empty")
	}
	cfg, log, err := c.setup(e)
	if err != nil {
		return err
	}
	if err := checkOutDir(c, *out); err != nil {
		return err
	}
	lock, err := build.LockOutput(*out)
	if err != nil {
		return err
	}
	defer lock.Release()
	_, err = buildSite(ctx, c, cfg, log, *out, *full)
	return err
}

// checkOutDir refuses an output directory whose replacement would take the
// site's sources, the data directory or the config file with it (see
// build.CheckOutDir); it runs before the output's lock file is made beside
// it. A source that cannot be resolved (content/ a link in a loop, say) is
// reported as itself: blaming -out sent the operator to the wrong flag.
func checkOutDir(c common, out string) error {
	err := build.CheckOutDir(out, config.SiteDir(c.config), c.data, config.InUse(c.config))
	if _, ok := errors.AsType[*build.SourceError](err); ok {
		return err
	}
	if err != nil {
		return cliflag.Usagef("invalid -out: %v", err)
	}
	return nil
}

// buildSite derives, defines the views for the build time and renders the
// site into out. It opens its own Store each time, so `observer serve`
// rebuilds see new snapshots, a changed config and a changed blocklist.
func buildSite(ctx context.Context, c common, cfg config.Config, log *slog.Logger, out string, full bool) (build.Report, error) {
	now := c.at()
	store, _, err := openViews(ctx, c, cfg, log, now, false, full)
	if err != nil {
		return build.Report{}, err
	}
	defer store.Close()
	return build.Build(ctx, build.Options{
		Site:    cfg.BuildSettings(version()),
		SiteDir: config.SiteDir(c.config),
		OutDir:  out,
		Data:    duck.SiteData{Reader: store.Reader, Now: now},
		Now:     now,
		Logger:  log,
		// Both callers, observer build and serve, hold build.LockOutput.
		OutputLocked: true,
	})
}

// openViews opens the data directory for queries (duck.OpenForQueries)
// with the views defined for now, the config's rules and the blocklist.
// With staleOK, a data directory this process cannot write is queried as
// of its last derivation; full derives from scratch (--full). The views'
// parameters are returned for ViewsSQL.
func openViews(ctx context.Context, c common, cfg config.Config, log *slog.Logger, now time.Time, staleOK, full bool) (*duck.Store, duck.ViewParams, error) {
	blocked, err := hostname.ReadBlocklistFile(cfg.Crawl.Blocklist)
	if err != nil {
		return nil, duck.ViewParams{}, err
	}
	params := duck.ViewParams{Now: now, Rules: cfg.Rules(), Blocklist: blocked.Entries()}
	derive := cfg.DeriveOptions()
	derive.Full = full
	store, err := duck.OpenForQueries(ctx, c.data, duck.QueryOptions{Logger: log, Views: params, StaleOK: staleOK, Derive: derive})
	return store, params, err
}
