package build

import (
	"fmt"
	"os"
)

// swapByRename swaps with two renames. Between them dir does not exist for
// the time of one rename system call (microseconds): a request in that
// window gets a 404, never a mixture of old and new files. Each rename is
// atomic, and if the second fails the first is undone.
func swapByRename(stage, dir string) error {
	old := stage + ".old"
	if err := os.Rename(dir, old); err != nil {
		return err
	}
	if err := os.Rename(stage, dir); err != nil {
		if rerr := os.Rename(old, dir); rerr != nil {
			return fmt.Errorf("%w (and restoring the old site failed: %v)", err, rerr)
		}
		return err
	}
	return os.Rename(old, stage)
}
