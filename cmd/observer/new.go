package main

import (
	"context"
	"fmt"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/internal/cliflag"
)

// runNew creates things: `observer new site DIR`, as `hugo new site` does.
func runNew(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "new", "site DIR")
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 || fs.Arg(0) != "site" {
		return cliflag.Usagef("want: observer new site DIR")
	}
	if fs.Arg(1) == "" {
		// os.ReadDir("") fails as if nothing were there, and the files
		// would land in (and over) the current directory's site.
		return cliflag.Usagef("invalid DIR: empty")
	}
	return newSite(e, fs.Arg(1))
}

// newSite writes the skeleton into dir (observer.NewSite) and says what
// to do next.
func newSite(e env, dir string) error {
	if err := observer.NewSite(dir); err != nil {
		return err
	}
	// The site is made: a failed write of this message only loses the
	// message, but says so, as every command does.
	if _, err := fmt.Fprintf(e.stdout, `Created a new observer site in %s.

  cd %s
  observer crawl     # one crawl pass (edit observer.toml's [crawl] contact_url first)
  observer build     # render the site into public/
  observer serve     # preview it on http://127.0.0.1:1313/

Override a theme file by putting one of the same name in layouts/ or static/;
see docs/theming.md.
`, dir, dir); err != nil {
		return fmt.Errorf("new site %s: write message: %w", dir, err)
	}
	return nil
}
