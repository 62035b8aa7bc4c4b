package crawl_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/crawl"

	"github.com/fediverse-observer/observer"
)

// peersBody builds a Mastodon peers list of n entries of which about 95%
// are in the returned known set, 4% are new valid hosts and 1% junk, in the
// shape real lists have (lower-case names under common suffixes).
func peersBody(n int) ([]byte, *crawl.KnownSet) {
	rng := rand.New(rand.NewPCG(1, 2))
	suffixes := []string{"social", "com", "net", "org", "de", "co.uk", "xyz", "online", "fr", "jp", "town", "cafe"}
	words := []string{"mastodon", "social", "fedi", "pleroma", "misskey", "tech", "art", "home", "club", "place", "space", "network", "toot", "m", "mstdn", "lemmy"}
	name := func() string {
		var b strings.Builder
		if rng.IntN(3) == 0 {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte('.')
		}
		b.WriteString(words[rng.IntN(len(words))])
		fmt.Fprintf(&b, "%d", rng.IntN(1_000_000))
		b.WriteByte('.')
		b.WriteString(suffixes[rng.IntN(len(suffixes))])
		return b.String()
	}
	junk := []string{"127.0.0.1", "localhost", "foo.invalidtld", "a..b.social", "*.x.social", "host.social:8080", "user@x.social", "https://x.social/", "😀😀.invalid"}
	known := crawl.NewKnownSet(n)
	var body bytes.Buffer
	body.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			body.WriteByte(',')
		}
		var h string
		switch r := rng.IntN(100); {
		case r < 95:
			h = name()
			known.Add(observer.Host(h))
		case r < 99:
			h = name()
		default:
			h = junk[rng.IntN(len(junk))]
		}
		body.WriteByte('"')
		body.WriteString(h)
		body.WriteByte('"')
	}
	body.WriteByte(']')
	return body.Bytes(), known
}

// BenchmarkPeersIngest measures peers ingestion on one goroutine: stream
// parse, drop known, normalise the rest, drop and count junk.
func BenchmarkPeersIngest(b *testing.B) {
	const entries = 200_000
	body, known := peersBody(entries)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		pl := crawl.NewPeerList(known, 0)
		if err := pl.ReadMastodon(bytes.NewReader(body)); err != nil {
			b.Fatal(err)
		}
		if pl.Valid+pl.Junk != entries {
			b.Fatalf("%d valid + %d junk != %d entries", pl.Valid, pl.Junk, entries)
		}
	}
	b.ReportMetric(float64(entries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(len(body))/1e6, "MB/body")
}

func TestPeersBodyShape(t *testing.T) {
	body, known := peersBody(20_000)
	pl := crawl.NewPeerList(known, 0)
	if err := pl.ReadMastodon(bytes.NewReader(body)); err != nil {
		t.Fatal(err)
	}
	knownShare := float64(pl.Valid-int64(len(pl.New))) / 20_000
	if knownShare < 0.93 || knownShare > 0.97 || pl.Junk < 100 || pl.Junk > 400 {
		t.Errorf("known share %.3f, junk %d, new %d", knownShare, pl.Junk, len(pl.New))
	}
}
