package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fediverse-observer/observer/crawl"

	"github.com/fediverse-observer/observer"
)

// SharedKnown is the crawl's one known set: a crawl.KnownSet table written
// once, before the pass, into a memory file (memfd) that is then sealed
// against any change and mapped read-only by the orchestrator and every
// checker. Its pages exist once in memory whatever the number of checkers,
// a checker's start costs a mapping instead of a copy, and a compromised
// checker can neither change the table under the others (the seals forbid
// writing, shrinking and growing it) nor make it larger. docs/security.md
// ("The known set") says why this design and what it costs.
type SharedKnown struct {
	file *os.File
	mem  []byte // the read-only mapping
	set  *crawl.KnownSet
}

// knownSeals are the seals a known table carries before any checker sees
// it: no writes, no change of size, no further change of seals.
const knownSeals = unix.F_SEAL_WRITE | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL

// BuildSharedKnown writes the table of at most capacity hosts: fill calls
// add for each host (add reports whether it was new, and an error past
// capacity). Close it when the pass is over.
func BuildSharedKnown(capacity int, fill func(add func(host observer.Host) (bool, error)) error) (*SharedKnown, error) {
	slots := crawl.KnownTableSlots(capacity)
	size := slots * 8
	var n int
	ro, err := sealedFile("observer-known", func(f *os.File) error {
		if err := f.Truncate(int64(size)); err != nil {
			return err
		}
		// Written through a shared mapping: its pages are the file's, so
		// the table is never copied.
		rw, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			return fmt.Errorf("map for writing: %w", err)
		}
		set, err := crawl.BuildKnownTable(asSlots(rw))
		if err == nil {
			err = fill(set.TryAdd)
		}
		_, n = set.Table()
		// Sealing against writes needs every writable mapping gone.
		if merr := unix.Munmap(rw); err == nil && merr != nil {
			err = fmt.Errorf("unmap: %w", merr)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("known table: %w", err)
	}
	k, err := mapTable(ro)
	if err != nil {
		ro.Close()
		return nil, fmt.Errorf("known table: %w", err)
	}
	if err := k.setCount(n); err != nil {
		k.Close()
		return nil, fmt.Errorf("known table: %w", err)
	}
	return k, nil
}

// mapTable maps a sealed known table read-only; setCount completes it.
func mapTable(f *os.File) (*SharedKnown, error) {
	seals, err := unix.FcntlInt(f.Fd(), unix.F_GET_SEALS, 0)
	if err != nil {
		return nil, fmt.Errorf("read seals: %w", err)
	}
	if seals&knownSeals != knownSeals {
		return nil, errors.New("table not sealed against change")
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size < 16*8 || size%8 != 0 || size > 1<<40 {
		return nil, fmt.Errorf("table of %d bytes", size)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map: %w", err)
	}
	return &SharedKnown{file: f, mem: mem}, nil
}

// setCount makes the mapped table a set of n hosts.
func (k *SharedKnown) setCount(n int) error {
	set, err := crawl.KnownSetOf(asSlots(k.mem), n)
	k.set = set
	return err
}

// asSlots views a mapping as the table's 64-bit slots (a mapping is page
// aligned, so the slots are aligned).
func asSlots(mem []byte) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(mem))), len(mem)/8)
}

// Set is the table as a set to read (never to add to).
func (k *SharedKnown) Set() *crawl.KnownSet { return k.set }

// Len is the number of hosts in the table.
func (k *SharedKnown) Len() int { return k.set.Len() }

// Bytes is the table's size.
func (k *SharedKnown) Bytes() int { return len(k.mem) }

// Close unmaps the table and closes its file. The set must not be used
// after.
func (k *SharedKnown) Close() error {
	err := unix.Munmap(k.mem)
	if k.file != nil {
		err = errors.Join(err, k.file.Close())
	}
	return err
}

// NewSharedKnown builds the table of hosts (the tests' and small callers'
// way; a pass fills its table as it reads the known hosts,
// BuildSharedKnown).
func NewSharedKnown(hosts []observer.Host) (*SharedKnown, error) {
	return BuildSharedKnown(len(hosts), func(add func(observer.Host) (bool, error)) error {
		for _, h := range hosts {
			if _, err := add(h); err != nil {
				return err
			}
		}
		return nil
	})
}

// knownFD is the descriptor a checker finds the known table on: the first
// after stdin, stdout and stderr (exec.Cmd.ExtraFiles[0]).
const knownFD = 3

// MapKnownTable maps the known table a checker was started with read-only,
// and closes its descriptor. A checker calls it before Confine, which
// closes every descriptor it inherited; Serve learns the table's host count
// from the orchestrator.
func MapKnownTable() (*SharedKnown, error) {
	f := os.NewFile(knownFD, "known table")
	defer f.Close()
	k, err := mapTable(f)
	if err != nil {
		return nil, fmt.Errorf("known table: %w", err)
	}
	k.file = nil
	return k, nil
}

// readKnownCount reads the orchestrator's 'K' frame: how many hosts the
// known table holds.
func readKnownCount(r io.Reader) (int, error) {
	t, payload, err := readFrame(r, maxRequestFrame)
	if err != nil {
		return 0, fmt.Errorf("read known table: %w", err)
	}
	if t != msgKnown {
		return 0, fmt.Errorf("known table: unexpected message %q", t)
	}
	return decodeKnownCount(payload)
}

// decodeKnownCount reads the 'K' frame's host count.
func decodeKnownCount(payload []byte) (int, error) {
	n, k := binary.Uvarint(payload)
	if k <= 0 || k != len(payload) || n > 1<<40 {
		return 0, errors.New("known table: bad host count")
	}
	return int(n), nil
}
