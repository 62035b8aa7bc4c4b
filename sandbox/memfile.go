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
	rw, ro, err := memFile(name)
	if err != nil {
		return nil, err
	}
	if err := write(rw); err != nil {
		rw.Close()
		ro.Close()
		return nil, err
	}
	if err := seal(rw); err != nil {
		ro.Close()
		return nil, err
	}
	return ro, nil
}

// memFile creates a memory file that can be sealed: rw to write it and
// seal it (seal), ro, a read-only descriptor of it, to hand on. A process
// given ro before the file is sealed can neither write it nor add seals.
func memFile(name string) (rw, ro *os.File, err error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, nil, fmt.Errorf("memfd_create: %w", err)
	}
	rw = os.NewFile(uintptr(fd), name)
	ro, err = os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", fd), os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		rw.Close()
		return nil, nil, fmt.Errorf("reopen read-only: %w", err)
	}
	return rw, ro, nil
}

// seal seals a memory file against change (knownSeals) and closes rw.
func seal(rw *os.File) error {
	defer rw.Close()
	if _, err := unix.FcntlInt(rw.Fd(), unix.F_ADD_SEALS, knownSeals); err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	return nil
}
