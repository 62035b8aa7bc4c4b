package crawl

import (
	"io"

	"github.com/fediverse-observer/observer/crawl/internal/parse"
	"github.com/fediverse-observer/observer/hostname"
)

// PeerList ingests the entries of one host's peers list: each is validated
// and those already known are dropped. Entries that are already in canonical
// form and known (the vast majority, once the observer has history) cost a
// byte scan, a hash and a table probe; only the rest go through
// hostname.Normalize.
type PeerList struct {
	known  *KnownSet // read-only: hosts known before the check
	seen   KnownSet  // new hosts of this list, to count each once
	max    int
	lower  []byte
	New    []string // new valid hosts, in order of first appearance (at most max)
	Valid  int64    // valid entries, duplicates included
	Unseen int64    // distinct valid hosts not in known (may exceed len(New))
	Junk   int64    // entries dropped as invalid
}

// NewPeerList returns an empty list that treats known's hosts as known and
// keeps at most maxNew new hosts (0: no limit).
func NewPeerList(known *KnownSet, maxNew int) *PeerList {
	return &PeerList{known: known, max: maxNew}
}

// Add ingests one raw entry (nil for an entry that was not a string).
func (p *PeerList) Add(entry []byte) {
	if len(entry) == 0 {
		p.Junk++
		return
	}
	// Classify in one pass: canonical (a-z0-9.-), canonical but for upper
	// case ASCII letters, or anything else.
	canonical, upper := true, false
	for _, c := range entry {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.':
		case c >= 'A' && c <= 'Z':
			upper = true
		default:
			canonical = false
		}
		if !canonical {
			break
		}
	}
	if canonical {
		key := entry
		if upper {
			p.lower = p.lower[:0]
			for _, c := range entry {
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				p.lower = append(p.lower, c)
			}
			key = p.lower
		}
		// Known hosts were validated when they were recorded.
		if p.known.HasBytes(key) {
			p.Valid++
			return
		}
	}
	h, err := hostname.Normalize(string(entry))
	if err != nil {
		p.Junk++
		return
	}
	p.Valid++
	if p.known.Has(h) || !p.seen.Add(h) {
		return
	}
	p.Unseen++
	if p.max == 0 || len(p.New) < p.max {
		p.New = append(p.New, h)
	}
}

// ReadMastodon ingests a Mastodon-compatible peers list (GET
// /api/v1/instance/peers): a JSON array of strings, read as a stream. Any
// other shape is rejected with an error; entries added before the error
// stay added, and callers discard the list.
func (p *PeerList) ReadMastodon(r io.Reader) error {
	return parse.StringArray(r, p.Add)
}

// ReadMisskeyPage ingests one page of Misskey's POST
// /api/federation/instances and returns its number of entries.
func (p *PeerList) ReadMisskeyPage(r io.Reader) (int, error) {
	return parse.MisskeyPage(r, p.Add)
}

// ReadLemmy ingests Lemmy's GET /api/v3/federated_instances (linked and
// allowed instances, never blocked ones).
func (p *PeerList) ReadLemmy(r io.Reader) error {
	return parse.Lemmy(r, p.Add)
}

// ReadPeerTubePage ingests one page of PeerTube's /api/v1/server/followers
// (side "follower") or /api/v1/server/following (side "following") and
// returns the page's entry count and the announced total.
func (p *PeerList) ReadPeerTubePage(r io.Reader, side string) (int, int64, error) {
	return parse.PeerTubePage(r, side, p.Add)
}
