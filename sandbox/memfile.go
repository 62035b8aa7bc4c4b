package sandbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// sealedFile creates a memory file, has write fill it, seals it against
// change (knownSeals) and returns a read-only descriptor of it. What the
// checkers inherit so (the known table, the --connect-to rules) can be
// neither changed under the orchestrator nor mapped writable, whatever the
// kernel's handling of seals in mprotect.
func sealedFile(name string, write func(f *os.File) error) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if err := write(f); err != nil {
		return nil, err
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, knownSeals); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	ro, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", fd), os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("reopen read-only: %w", err)
	}
	return ro, nil
}
