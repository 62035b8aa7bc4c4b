package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fediverse-observer/observer/build"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/internal/cliflag"
	"github.com/fediverse-observer/observer/preview"
)

// runServe is the live preview: it builds the site with the preview's own
// address as base_url, serves it on 127.0.0.1 and rebuilds (re-reading the
// config, re-deriving) whenever the content, layouts, static files, themes,
// config, blocklist or data change.
func runServe(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "serve", "[flags]")
	var c common
	c.register(fs)
	out := fs.String("out", "", "`directory` to build the preview into (default: a temporary directory removed on exit, so the preview's links never end up in public/)")
	port := fs.Int("port", 0, "port to listen on at 127.0.0.1, 0 picks a free one (default: serve.port from the config)")
	if err := cliflag.ParseNoArgs(fs, args); err != nil {
		return err
	}
	if err := config.CheckPort(*port); err != nil {
		return cliflag.Usagef("invalid -port %d: %v", *port, err)
	}
	cfg, log, err := c.setup(e)
	if err != nil {
		return err
	}
	if !cliflag.Given(fs)["port"] {
		*port = cfg.Serve.Port
	}
	// Changes are watched in the data directory: it must exist now.
	if err := duck.CheckDataDir(c.data); err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		tmp, err := os.MkdirTemp("", "observer-serve-")
		if err != nil {
			return fmt.Errorf("preview directory: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "public")
	} else if err := checkOutDir(c, dir); err != nil {
		return err
	}
	lock, err := build.LockOutput(dir)
	if err != nil {
		return err
	}
	defer lock.Release()

	return preview.Serve(ctx, preview.Options{
		Port:   *port,
		OutDir: dir,
		Watch:  build.WatchPaths(config.SiteDir(c.config), c.data, config.InUse(c.config), cfg.Crawl.Blocklist),
		// What a rebuild writes itself: the derived state.
		Ignore: []string{filepath.Join(c.data, duck.DerivedDir), filepath.Join(c.data, duck.TmpDir)},
		Rebuild: func(ctx context.Context, baseURL string) error {
			cfg, err := config.LoadNamed(c.config)
			if err != nil {
				return err
			}
			cfg.Site.BaseURL = baseURL
			_, err = buildSite(ctx, c, cfg, log, dir, false)
			return err
		},
		Logger: log,
		Ready: func(url string) {
			fmt.Fprintf(e.stdout, "Serving the preview at %s (built into %s); Ctrl-C stops.\n", url, dir)
		},
	})
}
