// Package themes embeds the default theme in the binary, so that `observer
// build` works in any directory. It lives here rather than in build because
// an embed directive cannot reach parent directories.
package themes

import (
	"embed"
	"io/fs"
)

//go:embed all:default
var files embed.FS

// DefaultName is the theme that is also available without a themes/ directory.
const DefaultName = "default"

// Default returns the embedded default theme, rooted at its directory (so it
// holds layouts/ and static/).
func Default() fs.FS {
	sub, err := fs.Sub(files, DefaultName)
	if err != nil {
		// fs.Sub only fails for an invalid path, and DefaultName is valid.
		panic(err)
	}
	return sub
}
