package duck_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
)

// The known hosts are read from the derived state in parts of about a
// batch each, by a hash of the name: every host discovered comes once,
// however often it was discovered, whatever the number of parts.
func TestKnownHostsInBatchesReadsEveryHost(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	w, err := s.Snapshots.NewWriter("pass1", duck.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for i := range 1000 {
		h := fmt.Sprintf("h%d.social", i)
		want[h] = 1 + i%3/2 // a third of them discovered twice
		for range want[h] {
			if err := w.Discover(ctx, observer.Discovery{Host: observer.Host(h), DiscoveredAt: day0, Via: observer.ViaSeed}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	derive(t, s, config.Default().State, false)
	views(t, s, day0)
	for _, batch := range []int{1 << 20, 300, 7} {
		got := map[string]int{}
		if err := duck.KnownHostsInBatches(ctx, s, batch, func(h observer.Host) { got[string(h)]++ }); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("batch %d: %d hosts, want %d", batch, len(got), len(want))
		}
		for h := range want {
			if got[h] != 1 {
				t.Errorf("batch %d: %s came %d times, want once", batch, h, got[h])
			}
		}
	}
}
