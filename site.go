package observer

import (
	"embed"
	"io/fs"
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
