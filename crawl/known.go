package crawl

import "github.com/zeebo/xxh3"

// KnownSet is a set of host names stored as 64-bit XXH3 hashes in an
// open-addressing table, so a million hosts cost 16 MiB and a lookup is one
// hash and, usually, one memory access.
//
// Because only hashes are kept, Has can report a host that was never added
// when two names collide: with n hosts stored, the chance that a given new
// host is mistaken for a known one is about n/2^64 (5e-14 for a million
// hosts), i.e. the observer might, over its lifetime, fail to record a
// handful of discoveries' first sighting. Nothing else depends on exactness.
//
// A KnownSet is not safe for concurrent writes; any number of goroutines may
// call Has and Len while no one calls Add. The zero value is an empty set
// ready to use, and a nil *KnownSet is an empty set for reading.
type KnownSet struct {
	slots []uint64 // 0 marks an empty slot
	n     int
}

// NewKnownSet returns a set with room for n hosts before it grows.
func NewKnownSet(n int) *KnownSet {
	s := &KnownSet{}
	s.resize(tableSize(n))
	return s
}

// tableSize keeps the load factor at most 1/2, which keeps linear probing
// short.
func tableSize(n int) int {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	return size
}

// nonZero maps a hash of 0 to 1: 0 marks an empty slot.
func nonZero(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}

// Len returns the number of hosts added.
func (s *KnownSet) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// Add inserts host and reports whether it was not in the set before.
func (s *KnownSet) Add(host string) bool {
	if 2*(s.n+1) > len(s.slots) {
		s.resize(tableSize(s.n + 1))
	}
	h := nonZero(xxh3.HashString(host))
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case h:
			return false
		case 0:
			s.slots[i] = h
			s.n++
			return true
		}
	}
}

// Has reports whether host is in the set.
func (s *KnownSet) Has(host string) bool {
	if s == nil || s.n == 0 {
		return false
	}
	return s.has(nonZero(xxh3.HashString(host)))
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
	mask := uint64(len(s.slots) - 1)
	slots := s.slots
	for i, h := range hashes {
		first[i] = slots[h&mask]
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
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
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
	mask := uint64(size - 1)
	for _, h := range old {
		if h == 0 {
			continue
		}
		i := h & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = h
	}
}
