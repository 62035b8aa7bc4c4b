package crawl

import (
	"io"

	"github.com/fediverse-observer/observer/crawl/internal/parse"
	"github.com/fediverse-observer/observer/hostname"

	"github.com/fediverse-observer/observer"
)

// PeerList ingests the entries of one host's peers list: each is validated
// and those already known are dropped. Entries that are already in canonical
// form and known (the vast majority, once the observer has history) cost a
// byte scan, a hash and a table probe; only the rest go through
// hostname.Normalize. Entries are processed in small batches so that the
// known-set probes of a batch overlap; the counts and New are complete when
// a Read method returns.
type PeerList struct {
	known *KnownSet // read-only: hosts known before the check
	// seen holds the hosts in New (and the checked host), to keep each
	// once. Hosts beyond the cap are not remembered, so a hostile list of
	// millions of distinct hosts costs no more memory than max of them.
	seen KnownSet
	max  int
	New  []observer.Host // new valid hosts, in order of first appearance (at most max)
	// Valid counts valid entries, duplicates included.
	Valid int64
	// Unseen counts valid entries not in known: distinct hosts up to the
	// cap, and beyond it every entry not kept, repeats included (it
	// exceeds len(New) exactly when new hosts were left out).
	Unseen int64
	Junk   int64 // entries dropped as invalid

	// The pending batch: entry i is buf[start[i]:start[i+1]]; hash[i] is
	// its hash if it is in canonical form, else 0 (no lookup).
	n     int
	buf   []byte
	start [peerBatch + 1]int
	hash  [peerBatch]uint64
	found [peerBatch]bool
}

const peerBatch = 32

// NewPeerList returns an empty list that treats known's hosts as known and
// keeps at most maxNew new hosts (0: no limit).
func NewPeerList(known *KnownSet, maxNew int) *PeerList {
	return &PeerList{known: known, max: maxNew}
}

// add queues one raw entry (nil for an entry that was not a string).
func (p *PeerList) add(entry []byte) {
	p.addClass(entry, parse.Class(entry))
}

// addClass queues an entry whose class (parse.ClassUpper, ClassOther) is
// known. Entries in canonical form are looked up in the known set, with
// upper-case ASCII letters lowered in the batch buffer; others go to
// Normalize as they came.
func (p *PeerList) addClass(entry []byte, class uint8) {
	start := len(p.buf)
	p.start[p.n] = start
	p.buf = append(p.buf, entry...)
	var h uint64
	switch {
	case len(entry) == 0 || class&parse.ClassOther != 0:
	case class == 0:
		h = hashKey(p.buf[start:])
	default:
		e := p.buf[start:]
		for i, c := range e {
			if c >= 'A' && c <= 'Z' {
				e[i] = c + ('a' - 'A')
			}
		}
		h = hashKey(e)
	}
	p.hash[p.n] = h
	p.n++
	if p.n == peerBatch {
		p.flush()
	}
}

// flush resolves the pending batch, in order.
func (p *PeerList) flush() {
	if p.n == 0 {
		return
	}
	p.start[p.n] = len(p.buf)
	p.known.hasBatch(p.hash[:p.n], p.found[:p.n])
	for i := 0; i < p.n; i++ {
		if p.hash[i] != 0 && p.found[i] {
			// Known hosts were validated when they were recorded.
			p.Valid++
			continue
		}
		p.slow(p.buf[p.start[i]:p.start[i+1]])
	}
	p.n = 0
	p.buf = p.buf[:0]
}

func (p *PeerList) slow(entry []byte) {
	if len(entry) == 0 {
		p.Junk++
		return
	}
	h, err := hostname.Normalize(string(entry))
	if err != nil {
		p.Junk++
		return
	}
	p.Valid++
	if p.known.Has(h) || p.seen.Has(h) {
		return
	}
	p.Unseen++
	if p.max == 0 || len(p.New) < p.max {
		p.seen.Add(h)
		p.New = append(p.New, h)
	}
}

func (p *PeerList) read(err error) error {
	p.flush()
	return err
}

// ReadMastodon ingests a Mastodon-compatible peers list (GET
// /api/v1/instance/peers): a JSON array of strings, read as a stream. Any
// other shape is rejected with an error; entries added before the error
// stay added, and callers discard the list.
func (p *PeerList) ReadMastodon(r io.Reader) error {
	return p.read(parse.StringArray(r, p.addClass))
}

// ReadMisskeyPage ingests one page of Misskey's POST
// /api/federation/instances and returns its number of entries.
func (p *PeerList) ReadMisskeyPage(r io.Reader) (int, error) {
	n, err := parse.MisskeyPage(r, p.add)
	return n, p.read(err)
}

// ReadLemmy ingests Lemmy's GET /api/v3/federated_instances (linked and
// allowed instances, never blocked ones).
func (p *PeerList) ReadLemmy(r io.Reader) error {
	return p.read(parse.Lemmy(r, p.add))
}

// ReadLemmyPage ingests one page of Lemmy 1.0's GET
// /api/v4/federated_instances and returns its number of entries and the
// next page's cursor ("" after the last).
func (p *PeerList) ReadLemmyPage(r io.Reader) (int, string, error) {
	n, next, err := parse.LemmyPage(r, p.add)
	return n, next, p.read(err)
}

// ReadMbin ingests Mbin's GET /api/federated (the instances it federates
// with; its blocklist, /api/defederated, is never read).
func (p *PeerList) ReadMbin(r io.Reader) error {
	return p.read(parse.Mbin(r, p.add))
}

// ReadPeerTubePage ingests one page of PeerTube's /api/v1/server/followers
// (side "follower") or /api/v1/server/following (side "following") and
// returns the page's entry count and the announced total.
func (p *PeerList) ReadPeerTubePage(r io.Reader, side string) (int, int64, error) {
	n, total, err := parse.PeerTubePage(r, side, p.add)
	return n, total, p.read(err)
}
