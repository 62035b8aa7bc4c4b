package build

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// swapDirs puts dir stage in place of dir. On Linux both names are
// exchanged in one renameat2(RENAME_EXCHANGE) call, so there is no instant
// at which dir is missing; the old site is then at stage.
func swapDirs(stage, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(stage, dir)
	}
	err := unix.Renameat2(unix.AT_FDCWD, stage, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		// A file system without RENAME_EXCHANGE.
		return swapByRename(stage, dir)
	}
	return err
}
