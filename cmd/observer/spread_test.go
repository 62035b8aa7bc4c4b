package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/fedisim"
)

// listedNew reports whether host is in the new list as derived at now.
func listedNew(t *testing.T, s *simSite, now time.Time, host string) bool {
	t.Helper()
	ctx := context.Background()
	cfg, err := config.Load(s.config, true)
	if err != nil {
		t.Fatal(err)
	}
	store, err := duck.Open(ctx, filepath.Join(s.dir, "data"), duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Deriver.Derive(ctx, duck.DeriveOptions{Rules: cfg.Rules(), MemoryLimit: cfg.State.MemoryLimit}); err != nil {
		t.Fatal(err)
	}
	if err := store.Reader.CreateViews(ctx, duck.ViewParams{Now: now, Rules: cfg.Rules()}); err != nil {
		t.Fatal(err)
	}
	rows, err := store.Reader.Query(ctx, "SELECT host FROM new WHERE host = '"+host+"'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	return rows.Next()
}

// On a small timeline of fedisim's spread model, with the default
// schedule and a pass every 4 hours (twice deploy/systemd's timer): the first
// pass from the hubs checks the hosts their lists name, not the seeds
// alone, and an instance born after the observer started, which federates
// with a hub within hours, is in the new list within a day of its birth.
func TestNewInstanceNamedByAHubIsListedWithinADay(t *testing.T) {
	s := newSimSite(t, fedisim.Config{Instances: 300, Spread: &fedisim.Spread{Days: 30}})
	seeds := s.sim.Seeds(5)
	os.WriteFile(filepath.Join(s.dir, "seeds.txt"), []byte(strings.Join(seeds, "\n")+"\n"), 0o644)
	// The default schedule; a warmup of an hour, so that an instance
	// discovered on the observer's first day can be new.
	os.WriteFile(s.config, []byte("[crawl]\nseeds = \"seeds.txt\"\nconcurrency = 16\n[state]\nwarmup = \"1h\"\n"), 0o644)

	day0 := s.sim.Config().Day0
	// The first instance born between 8 and 20 hours in that stays alive
	// for two days.
	var target fedisim.Truth
	for i := range 300 {
		tr, _ := s.sim.Truth(i)
		if !tr.Ghost && tr.Born.After(day0.Add(8*time.Hour)) && tr.Born.Before(day0.Add(20*time.Hour)) && tr.AliveAt(tr.Born.Add(48*time.Hour)) {
			target = tr
			break
		}
	}
	if target.Host == "" {
		t.Fatal("no instance born on the first day in the simulated world")
	}

	listed := time.Time{}
	for at := day0; !at.After(target.Born.Add(24 * time.Hour)); at = at.Add(4 * time.Hour) {
		s.sim.SetNow(at)
		code, out, errs := s.crawl(t, at.Format(time.RFC3339), "--isolation", "none")
		if code != exitOK {
			t.Fatalf("pass at %s: exit %d\n%s\n%s", at, code, out, errs)
		}
		if at == day0 {
			got := s.query(t, "SELECT count(DISTINCT host) FROM checks")
			if got[0] == "5" || got[0] == "0" {
				t.Fatalf("the first pass checked %s hosts: the seeds alone\n%s\n%s", got[0], out, errs)
			}
		}
		if at.After(target.Born) && listedNew(t, s, at, target.Host) {
			listed = at
			break
		}
	}
	if listed.IsZero() {
		t.Fatalf("%s, born %s, first federating %s, not in the new list a day later", target.Host, target.Born, target.FirstFederation)
	}
	t.Logf("%s born %s, listed at %s (%s later)", target.Host, target.Born.Format(time.RFC3339), listed.Format(time.RFC3339), listed.Sub(target.Born))
}
