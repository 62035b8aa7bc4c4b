package crawl

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/zeebo/xxh3"

	"github.com/fediverse-observer/observer"
)

// KnownSet is a set of host names stored as 64-bit XXH3 hashes in an
// open-addressing table (linear probing), so a million hosts cost 16 MiB or
// less and a lookup is one hash and, usually, one memory access.
//
// Because only hashes are kept, Has can report a host that was never added
// when two names collide: with n hosts stored, the chance that a given new
// host is mistaken for a known one is about n/2^64 (5e-14 for a million
// hosts), i.e. the observer might, over its lifetime, fail to record a
// handful of discoveries' first sighting. Nothing else depends on exactness.
//
// A set that grows (NewKnownSet, the zero value) keeps its load at most 1/2
// and doubles when it would pass it. A set built for a known number of
// hosts (BuildKnownTable) is filled to at most FrozenLoad and never grows:
// its table is the one the crawl shares between its processes.
//
// A KnownSet is not safe for concurrent writes; any number of goroutines may
// call Has and Len while no one calls Add. The zero value is an empty set
// ready to use, and a nil *KnownSet is an empty set for reading.
type KnownSet struct {
	slots []uint64 // 0 marks an empty slot
	n     int
	// fixed: the table is not ours to replace (BuildKnownTable,
	// KnownSetOf); Add fails once it is full.
	fixed bool
}

// FrozenLoad is the load of a table built for a known number of hosts.
// Linear probing at 0.7 costs about 2 probes for a host in the set and 6
// for one that is not, mostly in the same cache line (docs/security.md,
// "The known set", gives the measurements); it makes a 10-million-host
// table 114 MiB instead of the 256 MiB of the next power of two at 1/2.
const FrozenLoad = 0.7

// NewKnownSet returns a set with room for n hosts before it grows.
func NewKnownSet(n int) *KnownSet {
	s := &KnownSet{}
	s.resize(tableSize(n))
	return s
}

// tableSize keeps the load factor of a growing set at most 1/2, which keeps
// linear probing short.
func tableSize(n int) int {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	return size
}

// KnownTableSlots is the size, in 64-bit slots, of the table
// BuildKnownTable fills for n hosts: n at most FrozenLoad of it, rounded
// up to a whole cache line.
func KnownTableSlots(n int) int {
	size := int(float64(n)/FrozenLoad) + 1
	return max(16, (size+7)&^7)
}

// BuildKnownTable returns a set that stores its hosts in slots, which must
// be zeroed and have KnownTableSlots(n) entries for the n hosts it is to
// take; Add reports an error past that. The caller owns the memory (a
// shared mapping, say) and must keep it for as long as the set is used.
func BuildKnownTable(slots []uint64) (*KnownSet, error) {
	if len(slots) < 16 {
		return nil, fmt.Errorf("known table of %d slots, want at least 16", len(slots))
	}
	return &KnownSet{slots: slots, fixed: true}, nil
}

// KnownSetOf reads a table that BuildKnownTable filled with n hosts, as it
// is: the memory stays the caller's (a read-only shared mapping), and the
// set must not be added to.
func KnownSetOf(slots []uint64, n int) (*KnownSet, error) {
	switch {
	case len(slots) < 16:
		return nil, fmt.Errorf("known table of %d slots, want at least 16", len(slots))
	case n < 0 || n >= len(slots):
		return nil, fmt.Errorf("known table of %d slots cannot hold %d hosts", len(slots), n)
	}
	return &KnownSet{slots: slots, n: n, fixed: true}, nil
}

// Table returns the set's slots and host count, for KnownSetOf.
func (s *KnownSet) Table() ([]uint64, int) { return s.slots, s.n }

// errTableFull is Add's error on a fixed table with one slot left: a
// table with no empty slot would make a miss probe forever.
var errTableFull = errors.New("known table full")

// nonZero maps a hash of 0 to 1: 0 marks an empty slot.
func nonZero(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}

// home is the slot where h's probe starts: h scaled to the table's size
// (multiply and shift, so the size need not be a power of two).
func home(h uint64, size int) int {
	hi, _ := bits.Mul64(h, uint64(size))
	return int(hi)
}

// Len returns the number of hosts added.
func (s *KnownSet) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// Add inserts host and reports whether it was not in the set before. A set
// from BuildKnownTable never grows; there Add panics when the table is
// full, which KnownTableSlots rules out for as many hosts as it was sized
// for (TryAdd reports it instead).
func (s *KnownSet) Add(host observer.Host) bool {
	added, err := s.TryAdd(host)
	if err != nil {
		panic(err)
	}
	return added
}

// TryAdd is Add that reports a full fixed table as an error.
func (s *KnownSet) TryAdd(host observer.Host) (bool, error) {
	if !s.fixed && 2*(s.n+1) > len(s.slots) {
		s.resize(tableSize(s.n + 1))
	}
	h := nonZero(xxh3.HashString(string(host)))
	size := len(s.slots)
	for i := home(h, size); ; i++ {
		if i == size {
			i = 0
		}
		switch s.slots[i] {
		case h:
			return false, nil
		case 0:
			if s.fixed && s.n+2 > size {
				return false, errTableFull
			}
			s.slots[i] = h
			s.n++
			return true, nil
		}
	}
}

// Has reports whether host is in the set.
func (s *KnownSet) Has(host observer.Host) bool {
	if s == nil || s.n == 0 {
		return false
	}
	return s.has(nonZero(xxh3.HashString(string(host))))
}

// HasBytes is Has for a byte slice, without converting it to a string.
func (s *KnownSet) HasBytes(host []byte) bool {
	if s == nil || s.n == 0 {
		return false
	}
	return s.has(nonZero(xxh3.Hash(host)))
}

// hasBatch looks up many hashes at once (hashes from hashKey); found[i]
// reports hashes[i]. The first probes are issued as independent loads, so
// the processor overlaps their cache misses instead of waiting for each in
// turn: a large set does not fit in cache, and this is most of the cost of
// ingesting a peers list.
func (s *KnownSet) hasBatch(hashes []uint64, found []bool) {
	if s == nil || s.n == 0 {
		clear(found[:len(hashes)])
		return
	}
	var first [peerBatch]uint64
	slots := s.slots
	for i, h := range hashes {
		first[i] = slots[home(h, len(slots))]
	}
	for i, h := range hashes {
		switch first[i] {
		case h:
			found[i] = true
		case 0:
			found[i] = false
		default:
			found[i] = s.has(h)
		}
	}
}

func hashKey(b []byte) uint64 { return nonZero(xxh3.Hash(b)) }

func (s *KnownSet) has(h uint64) bool {
	size := len(s.slots)
	for i := home(h, size); ; i++ {
		if i == size {
			i = 0
		}
		switch s.slots[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

func (s *KnownSet) resize(size int) {
	old := s.slots
	s.slots = make([]uint64, size)
	for _, h := range old {
		if h == 0 {
			continue
		}
		i := home(h, size)
		for s.slots[i] != 0 {
			if i++; i == size {
				i = 0
			}
		}
		s.slots[i] = h
	}
}
