//go:build !linux

package build

import (
	"errors"
	"io/fs"
	"os"
)

// swapDirs puts dir stage in place of dir, leaving the old site at stage.
func swapDirs(stage, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(stage, dir)
	}
	return swapByRename(stage, dir)
}
