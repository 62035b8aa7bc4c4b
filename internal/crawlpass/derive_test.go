package crawlpass_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/fediverse-observer/observer/internal/crawlpass"
)

// A derivation whose context a signal cancelled is an interrupted pass
// (exit 3, as documented), not a failure (exit 1, which systemd and the
// workflow report as one). The context is cancelled before the child
// starts, which takes the same path as a child stopped mid-way: waiting
// for a running child to reach a given point would need a hook in it.
func TestCancelledDerivationIsAPassCutShort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var log bytes.Buffer
	err := crawlpass.DeriveInChild([]string{"__derive"}, &log)(ctx)
	var cut *crawlpass.CutShortError
	if !errors.As(err, &cut) {
		t.Fatalf("DeriveInChild after a signal: %v, want a pass cut short", err)
	}
}
