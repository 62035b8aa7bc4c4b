package crawl_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/hostname"

	"github.com/fediverse-observer/observer"
)

// reference ingests entries the slow, obvious way.
func reference(entries []string, known *crawl.KnownSet) (valid, junk int64, fresh []observer.Host) {
	seen := map[observer.Host]bool{}
	for _, e := range entries {
		h, err := hostname.Normalize(e)
		if err != nil {
			junk++
			continue
		}
		valid++
		if known.Has(h) || seen[h] {
			continue
		}
		seen[h] = true
		fresh = append(fresh, h)
	}
	return
}

func TestPeerListMatchesReference(t *testing.T) {
	var entries []string
	for i := 0; i < 1000; i++ {
		switch i % 7 {
		case 0:
			entries = append(entries, fmt.Sprintf("Known%d.Social", i%50))
		case 1:
			entries = append(entries, fmt.Sprintf("new%d.social.", i%30))
		case 2:
			entries = append(entries, fmt.Sprintf("bücher%d.de", i%20))
		case 3:
			entries = append(entries, fmt.Sprintf("10.0.0.%d", i%200))
		default:
			entries = append(entries, fmt.Sprintf("known%d.social", i%50))
		}
	}
	k := crawl.NewKnownSet(0)
	for i := 0; i < 50; i++ {
		k.Add(observer.Host(fmt.Sprintf("known%d.social", i)))
	}
	body, _ := json.Marshal(entries)
	pl := crawl.NewPeerList(k, 0)
	if err := pl.ReadMastodon(bytes.NewReader(body)); err != nil {
		t.Fatal(err)
	}
	valid, junk, fresh := reference(entries, k)
	if pl.Valid != valid || pl.Junk != junk || !slices.Equal(pl.New, fresh) {
		t.Errorf("got %d valid %d junk %v; want %d %d %v", pl.Valid, pl.Junk, pl.New, valid, junk, fresh)
	}
	// Beyond the cap, new hosts are counted but not remembered, so their
	// repeats are counted too.
	capped := crawl.NewPeerList(k, 3)
	capped.ReadMastodon(bytes.NewReader(body))
	unseen := int64(3)
	for _, e := range entries {
		if h, err := hostname.Normalize(e); err == nil && !k.Has(h) && !slices.Contains(fresh[:3], h) {
			unseen++
		}
	}
	if !slices.Equal(capped.New, fresh[:3]) || capped.Unseen != unseen {
		t.Errorf("capped: kept %v, %d unseen; want %v and %d", capped.New, capped.Unseen, fresh[:3], unseen)
	}
}

func FuzzPeerList(f *testing.F) {
	f.Add([]byte(`["a.social","A.Social","b.social.","known.social","KNOWN.social","x..y","bücher.de"]`))
	f.Add([]byte(`["\u004bnown.social","known.social\u0000"]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var entries []string
		if !utf8.Valid(data) || json.Unmarshal(data, &entries) != nil || entries == nil {
			return
		}
		for _, e := range entries {
			if len(e) > 170 {
				return // the scanner drops over-long entries without decoding them
			}
		}
		k := crawl.NewKnownSet(1)
		k.Add("known.social")
		pl := crawl.NewPeerList(k, 0)
		if err := pl.ReadMastodon(bytes.NewReader(data)); err != nil {
			t.Fatalf("valid list rejected: %v", err)
		}
		valid, junk, fresh := reference(entries, k)
		if pl.Valid != valid || pl.Junk != junk || !slices.Equal(pl.New, fresh) {
			t.Fatalf("got %d valid %d junk %q; want %d %d %q", pl.Valid, pl.Junk, pl.New, valid, junk, fresh)
		}
	})
}
