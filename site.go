package observer

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The repository is itself an observer site: its observer.toml, content/
// and seed list are what `observer new site` copies, so the skeleton can
// never drift from what this project ships and tests.
//
//go:embed observer.toml content/_index.md content/about.md data/seeds.txt
var skeleton embed.FS

// SiteSkeleton holds the files of a new site, at their paths in the site
// directory.
func SiteSkeleton() fs.FS { return skeleton }

// NewSite writes the skeleton into dir, which must not exist or be empty,
// so nothing of an existing site is ever overwritten, and makes the empty
// layouts/, static/ and themes/ for overriding the theme file by file, as
// in Hugo.
func NewSite(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case err == nil && len(entries) > 0:
		return fmt.Errorf("new site %s: directory exists and is not empty", dir)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("new site %s: %w", dir, err)
	}
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
	for _, sub := range []string{"layouts", "static", "themes"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return fmt.Errorf("new site %s: %w", dir, err)
		}
	}
	return nil
}
