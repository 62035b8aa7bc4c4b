package duck_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/duck"
)

// observer add records the hosts not yet known, each once, as manual
// discoveries at the time given, and says which were known.
func TestAddManualRecordsTheUnknownOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	if _, err := s.AddManual(ctx, []observer.Host{"old.social"}, day0, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.AddManual(ctx, []observer.Host{"new.social", "old.social", "new.social", "other.social"}, day0.Add(24*time.Hour), []string{"*.spam.social"})
	if err != nil {
		t.Fatal(err)
	}
	want := []duck.ManualHost{{Host: "new.social"}, {Host: "old.social", Known: true}, {Host: "other.social"}}
	if !slices.Equal(got, want) {
		t.Fatalf("AddManual = %v, want %v", got, want)
	}
	if err := s.Reader.CreateSnapshotViews(ctx); err != nil {
		t.Fatal(err)
	}
	rows := query[string](t, s, "SELECT host || ' ' || via || ' ' || strftime(discovered_at, '%Y-%m-%d') FROM discoveries ORDER BY 1")
	wantRows := []string{"new.social manual 2026-03-02", "old.social manual 2026-03-01", "other.social manual 2026-03-02"}
	if !slices.Equal(rows, wantRows) {
		t.Fatalf("discoveries %v, want %v", rows, wantRows)
	}
}

// A host on the blocklist refuses the whole add: the error names each such
// host once, in the order given, with its entry, and nothing is recorded.
func TestAddManualRefusesBlocklistedHosts(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	_, err := s.AddManual(ctx, []observer.Host{"good.social", "x.spam.social", "bad.social", "x.spam.social"}, day0,
		[]string{"*.spam.social", "bad.social"})
	refused, ok := errors.AsType[*duck.BlockedError](err)
	if !ok {
		t.Fatalf("AddManual = %v, want a *BlockedError", err)
	}
	if want := `x.spam.social (entry "*.spam.social"), bad.social (entry "bad.social")`; refused.Error() != want {
		t.Errorf("refused %q, want %q", refused, want)
	}
	if err := s.Reader.CreateSnapshotViews(ctx); err != nil {
		t.Fatal(err)
	}
	if known, err := s.Reader.KnowsAnyHost(ctx); err != nil || known {
		t.Errorf("a refused add recorded hosts (%v)", err)
	}
}
