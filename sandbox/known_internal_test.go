package sandbox

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fediverse-observer/observer"
)

// The shared known table holds what was added, and nobody, orchestrator or
// checker, can change it once built: its descriptor is read-only and sealed
// against writes and changes of size.
func TestSharedKnownIsReadOnly(t *testing.T) {
	hosts := make([]observer.Host, 1000)
	for i := range hosts {
		hosts[i] = observer.Host(fmt.Sprintf("h%04d.example", i))
	}
	k, err := NewSharedKnown(hosts)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	set := k.Set()
	if set.Len() != 1000 || !set.Has("h0999.example") || set.Has("other.example") {
		t.Fatalf("table of %d hosts: has h0999 %v, other %v", set.Len(), set.Has("h0999.example"), set.Has("other.example"))
	}
	fd := int(k.file.Fd())
	if _, err := unix.Mmap(fd, 0, k.Bytes(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err == nil {
		t.Error("a writable shared mapping of the table was allowed")
	}
	if err := unix.Mprotect(k.mem, unix.PROT_READ|unix.PROT_WRITE); err == nil {
		t.Error("the read-only mapping could be made writable")
	}
	if err := unix.Ftruncate(fd, 0); err == nil {
		t.Error("the table could be truncated")
	}
	rw, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_RDWR, 0)
	if err == nil {
		defer unix.Close(rw)
		if _, err := unix.Pwrite(rw, []byte{1}, 0); err == nil {
			t.Error("the table could be written through a reopened descriptor")
		}
		// F_SEAL_SEAL: adding seals, even none, is refused.
		if _, err := unix.FcntlInt(uintptr(rw), unix.F_ADD_SEALS, 0); err == nil {
			t.Error("seals could still be changed")
		}
	}
}

// A table sized for n hosts takes n, and one more than it has room for
// is an error, not a table without an empty slot.
func TestSharedKnownCapacity(t *testing.T) {
	_, err := BuildSharedKnown(2, func(add func(observer.Host) (bool, error)) error {
		for i := range 100 {
			if _, err := add(observer.Host(fmt.Sprintf("h%d.example", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		t.Fatal("100 hosts fit a table built for 2")
	}
}
