//go:build unix

package duck

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on path, waiting for it, so two
// derivations of one data directory (a crawl pass and `observer build`, say)
// never interleave their writes. The lock goes with the process if it dies.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
