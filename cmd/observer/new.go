package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fediverse-observer/observer"
)

// runNew creates things: `observer new site DIR`, as `hugo new site` does.
func runNew(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "new", "site DIR")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 || fs.Arg(0) != "site" {
		return usagef("want: observer new site DIR")
	}
	if fs.Arg(1) == "" {
		// os.ReadDir("") fails as if nothing were there, and the files
		// would land in (and over) the current directory's site.
		return usagef("invalid DIR: empty")
	}
	return newSite(e, fs.Arg(1))
}

// newSite writes the skeleton into dir, which must not exist or be empty,
// so nothing of an existing site is ever overwritten.
func newSite(e env, dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case err == nil && len(entries) > 0:
		return fmt.Errorf("new site %s: directory exists and is not empty", dir)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("new site %s: %w", dir, err)
	}
	skeleton := observer.SiteSkeleton()
	err = fs.WalkDir(skeleton, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(skeleton, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		// Exclusive: a file that appeared since the check above is an
		// error, not overwritten.
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	if err != nil {
		return fmt.Errorf("new site %s: %w", dir, err)
	}
	// Empty folders for overriding the theme file by file, as in Hugo.
	for _, sub := range []string{"layouts", "static", "themes"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return fmt.Errorf("new site %s: %w", dir, err)
		}
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
