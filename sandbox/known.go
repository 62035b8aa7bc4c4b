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
	file *os.File // read-only, what checkers inherit
	rw   *os.File // until Write seals the file
	mem  []byte   // the read-only mapping
	set  *crawl.KnownSet
	// written is closed when Write is done; err is its error.
	written chan struct{}
	err     error
}

// knownSeals are the seals a known table carries before any checker sees
// it: no writes, no change of size, no further change of seals.
const knownSeals = unix.F_SEAL_WRITE | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL

// NewPendingKnown creates a known table's memory file, empty until Write
// writes it. A pool can be started on it (PoolOptions.Known) before then:
// its checkers start, confine themselves and wait for the table, so that
// their start overlaps the pass's reading of its known hosts. Close it
// when the pass is over.
func NewPendingKnown() (*SharedKnown, error) {
	rw, ro, err := memFile("observer-known")
	if err != nil {
		return nil, fmt.Errorf("known table: %w", err)
	}
	return &SharedKnown{file: ro, rw: rw, written: make(chan struct{})}, nil
}

// BuildSharedKnown writes the table of at most capacity hosts (Write).
// Close it when the pass is over.
func BuildSharedKnown(capacity int, fill func(add func(host observer.Host) (bool, error)) error) (*SharedKnown, error) {
	k, err := NewPendingKnown()
	if err != nil {
		return nil, err
	}
	if err := k.Write(capacity, fill); err != nil {
		k.Close()
		return nil, err
	}
	return k, nil
}

// Write writes a pending table (NewPendingKnown) of at most capacity
// hosts, seals it and maps it read-only: fill calls add for each host (add
// reports whether it was new, and an error past capacity). It may be
// called once; a pool's checkers waiting for the table then map it, or
// fail to start if it failed.
func (k *SharedKnown) Write(capacity int, fill func(add func(host observer.Host) (bool, error)) error) error {
	if k.rw == nil {
		return errors.New("known table: written twice")
	}
	k.err = k.write(capacity, fill)
	k.rw = nil
	close(k.written)
	return k.err
}

func (k *SharedKnown) write(capacity int, fill func(add func(host observer.Host) (bool, error)) error) error {
	slots := crawl.KnownTableSlots(capacity)
	size := slots * 8
	var n int
	err := func() error {
		if err := k.rw.Truncate(int64(size)); err != nil {
			return err
		}
		// Written through a shared mapping: its pages are the file's, so
		// the table is never copied.
		rw, err := unix.Mmap(int(k.rw.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
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
	}()
	if err == nil {
		err = seal(k.rw)
	} else {
		k.rw.Close()
	}
	if err == nil {
		k.mem, err = mapTable(k.file)
	}
	if err == nil {
		err = k.setCount(n)
	}
	if err != nil {
		return fmt.Errorf("known table: %w", err)
	}
	return nil
}

// mapTable maps a sealed known table read-only.
func mapTable(f *os.File) ([]byte, error) {
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
	return mem, nil
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
	var err error
	if k.mem != nil {
		err = unix.Munmap(k.mem)
	}
	for _, f := range []*os.File{k.file, k.rw} {
		if f != nil {
			err = errors.Join(err, f.Close())
		}
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

// InheritedKnown is the known table's descriptor a checker inherits,
// marked close-on-exec so that Confine, which closes the descriptors a
// checker inherited by accident (those without the mark), keeps it: the
// table may still be being written when the checker confines itself, and
// Serve maps it when the orchestrator's first message says it is written.
func InheritedKnown() (*os.File, error) {
	if _, err := unix.FcntlInt(knownFD, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return nil, fmt.Errorf("known table on descriptor %d: %w", knownFD, err)
	}
	return os.NewFile(knownFD, "known table"), nil
}

// mapKnown maps the written table on f read-only as a set of n hosts, and
// closes f.
func mapKnown(f *os.File, n int) (*SharedKnown, error) {
	defer f.Close()
	mem, err := mapTable(f)
	if err != nil {
		return nil, fmt.Errorf("known table: %w", err)
	}
	k := &SharedKnown{mem: mem}
	if err := k.setCount(n); err != nil {
		k.Close()
		return nil, fmt.Errorf("known table: %w", err)
	}
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
