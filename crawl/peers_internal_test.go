package crawl

import (
	"fmt"
	"strings"
	"testing"
)

// A peers list of many distinct new hosts keeps at most the cap of them,
// in New and in the set that deduplicates them, so its memory does not grow
// with the list.
func TestPeerListStateBoundedByCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 10000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"h%d.social","h%d.social"`, i%5, i)
	}
	b.WriteString("]")
	pl := NewPeerList(nil, 10)
	if err := pl.ReadMastodon(strings.NewReader(b.String())); err != nil {
		t.Fatal(err)
	}
	if len(pl.New) != 10 || pl.seen.Len() > 10 {
		t.Errorf("kept %d new hosts, %d in the seen set; want at most 10", len(pl.New), pl.seen.Len())
	}
	if pl.Valid != 20000 || pl.Unseen <= int64(len(pl.New)) {
		t.Errorf("valid %d, unseen %d", pl.Valid, pl.Unseen)
	}
}
