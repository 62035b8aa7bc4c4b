package duck_test

import (
	"context"
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
	if _, err := s.AddManual(ctx, []observer.Host{"old.social"}, day0); err != nil {
		t.Fatal(err)
	}
	got, err := s.AddManual(ctx, []observer.Host{"new.social", "old.social", "new.social", "other.social"}, day0.Add(24*time.Hour))
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
