package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/fedisim"
)

// Without --now, the pass clock starts when the checks do, not when the run
// was set up: checked_at is when a check started, and the derivation before
// the pass (seconds for a million hosts) came between.
func TestWallClockChecksAreNotDatedBeforeTheirDerivation(t *testing.T) {
	s := newSimSite(t, fedisim.Config{})
	data := filepath.Join(s.dir, "data")
	args := append([]string{"crawl", "--quiet", "--config", s.config, "--data", data}, s.net...)
	for pass := 1; pass <= 2; pass++ {
		if code, out, errs := runObserver(t, args...); code != exitOK {
			t.Fatalf("pass %d: %d\n%s\n%s", pass, code, out, errs)
		}
	}
	raw, err := os.ReadFile(filepath.Join(data, "derived", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		DerivedAt time.Time `json:"derived_at"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.DerivedAt.IsZero() {
		t.Fatalf("manifest derived_at: %v (%s)", err, raw)
	}
	const format = "'%Y-%m-%dT%H:%M:%S.%fZ'"
	last := "(SELECT arg_max(pass_id, started_at) FROM passes)"
	got := append(s.query(t, "SELECT strftime(started_at, "+format+") FROM passes WHERE pass_id = "+last),
		s.query(t, "SELECT strftime(min(checked_at), "+format+") FROM checks WHERE pass_id = "+last)...)
	if len(got) != 2 {
		t.Fatalf("query: %v", got)
	}
	for i, what := range []string{"started_at", "first checked_at"} {
		at, err := time.Parse(time.RFC3339Nano, got[i])
		if err != nil {
			t.Fatal(err)
		}
		if at.Before(m.DerivedAt) {
			t.Errorf("pass 2's %s %s is before the derivation that preceded its checks ended (%s)",
				what, got[i], m.DerivedAt.Format(time.RFC3339Nano))
		}
	}
}
