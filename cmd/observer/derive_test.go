package main

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// A crawl stopped by SIGINT or SIGTERM while its derivation runs is an
// interrupted pass (exit 3, as documented), not a failure (exit 1, which
// systemd and the workflow report as one).
func TestDerivationInterruptedIsAPassCutShort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stderr bytes.Buffer
	err := deriveInChild(ctx, env{stderr: &stderr}, common{data: t.TempDir(), logFormat: "text"})
	var cut cutShortError
	if !errors.As(err, &cut) {
		t.Fatalf("deriveInChild after a signal: %v, want a pass cut short", err)
	}
}
