package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/fedisim"
	"github.com/fediverse-observer/observer/internal/testsupport"
)

// TestPassesOverSimulatedWeeksFollowTheSchedule runs a crawl pass a day for
// four simulated weeks, each with the simulator's clock and --now at the
// same moment, and checks that the schedule decides who is checked and that
// the derived states follow the simulator's ground truth: hosts born,
// dying, dead, reviving and moved. Thresholds are shortened (as the demo
// does) so that a few weeks show every state.
func TestPassesOverSimulatedWeeksFollowTheSchedule(t *testing.T) {
	s := newSimSite(t, fedisim.Config{Instances: 300, Horizon: 20, Dies: 0.08, Revives: 0.08, Moves: 0.05})
	os.WriteFile(s.config, []byte(`[crawl]
seeds = "seeds.txt"
concurrency = 16
check_timeout = "5s"
# One check a day at most, as this test counts: no discoveries checked in
# their pass, no peers list read before its host is due (a list earns no
# rate faster than peers_interval when peers_min_interval equals it).
discovered_checks = 0
peers_interval = "7d"
peers_min_interval = "7d"

[state]
failures_to_dead = 2
dead_after = "2d"
revive_after = "3d"
active_interval = "22h"
active_jitter = "1h"
inactive_interval = "22h"
inactive_jitter = "1h"
`), 0o644)
	day0 := time.Date(2026, 1, 1, 6, 0, 0, 0, time.UTC)
	const days = 28
	for d := range days {
		now := day0.Add(time.Duration(d) * 24 * time.Hour)
		s.sim.SetNow(now)
		code, out, errs := s.crawl(t, now.Format(time.RFC3339), "--isolation", "none")
		if code != exitOK {
			t.Fatalf("pass on day %d: exit %d\n%s\n%s", d, code, out, errs)
		}
	}

	// A pass an hour after the last one finds nothing due: everyone was
	// just checked and nobody is due again for 21 hours.
	last := day0.Add((days-1)*24*time.Hour + time.Hour)
	if code, out, _ := s.crawl(t, last.Format(time.RFC3339), "--isolation", "none"); code != exitOK || !strings.Contains(out, "0 checks") {
		t.Fatalf("a pass an hour later: exit %d\n%s", code, out)
	}
	// No host was checked twice in a day: the schedule spaces checks.
	if got := s.query(t, "SELECT count(*) FROM (SELECT host, date FROM checks GROUP BY ALL HAVING count(*) > 1)"); got[0] != "0" {
		t.Errorf("%s hosts were checked twice on one day", got[0])
	}

	ctx := context.Background()
	store, err := duck.Open(ctx, filepath.Join(s.dir, "data"), duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg, err := config.Load(s.config, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Deriver.Derive(ctx, duck.DeriveOptions{Rules: cfg.Rules(), MemoryLimit: cfg.State.MemoryLimit}); err != nil {
		t.Fatal(err)
	}
	if err := store.Reader.CreateViews(ctx, duck.ViewParams{Now: last, Rules: cfg.Rules()}); err != nil {
		t.Fatal(err)
	}
	q := func(query string) []string {
		t.Helper()
		var out []string
		for _, v := range testsupport.Rows(t, store.Reader, query) {
			out = append(out, fmt.Sprint(v...))
		}
		return out
	}

	// Every state the rules know was reached by some host.
	reached := map[string]bool{}
	for _, s := range q("SELECT DISTINCT to_state FROM transitions") {
		reached[s] = true
	}
	for _, want := range []string{"live", "dying", "dead", "reviving", "moved", "opted_out"} {
		if !reached[want] {
			t.Errorf("no host became %s in %d days; transitions reached %v", want, days, reached)
		}
	}

	// The derived states agree with the simulator's ground truth.
	lastDay := s.sim.DayOf(last)
	checked := 0
	for _, row := range q("SELECT host || ' ' || state FROM state WHERE checks > 0 ORDER BY host") {
		host, state, _ := strings.Cut(row, " ")
		info, ok := s.sim.Instance(host)
		if !ok || info.MoveTargetOf != "" {
			continue
		}
		checked++
		switch {
		case info.MovesDay != fedisim.NoDay && info.MovesDay <= lastDay-1:
			if state != "moved" {
				t.Errorf("%s moved on day %d; state %s", host, info.MovesDay, state)
			}
		case info.DiesDay != fedisim.NoDay && info.DiesDay <= lastDay-4 && (info.RevivesDay == fedisim.NoDay || info.RevivesDay > lastDay):
			if state != "dead" {
				t.Errorf("%s down since day %d; state %s", host, info.DiesDay, state)
			}
		case info.RevivesDay != fedisim.NoDay && info.RevivesDay <= lastDay-4 && info.RevivesDay >= info.DiesDay+4:
			if state != "reviving" && state != "live" {
				t.Errorf("%s back since day %d after dying on day %d; state %s", host, info.RevivesDay, info.DiesDay, state)
			}
		case info.OptOutDay != fedisim.NoDay && info.OptOutDay <= lastDay-1:
			if state != "opted_out" {
				t.Errorf("%s opted out on day %d; state %s", host, info.OptOutDay, state)
			}
		}
	}
	t.Logf("states reached: %v; %d simulated instances compared with the ground truth", reached, checked)
	if checked < 100 {
		t.Fatalf("only %d simulated instances were checked", checked)
	}

	// Born: instances the simulator starts after the warmup week are in the
	// new list, with their first alive check on or after their birth day.
	births := q(`SELECT host || ' ' || CAST(first_alive_at AS DATE) FROM new`)
	t.Logf("%d hosts in the new list", len(births))
	if len(births) == 0 {
		t.Fatal("the new list is empty after four weeks of births")
	}
	for _, row := range births {
		host, first, _ := strings.Cut(row, " ")
		info, ok := s.sim.Instance(host)
		if !ok {
			continue
		}
		born := day0.AddDate(0, 0, info.BornDay).Format(time.DateOnly)
		if info.MoveTargetOf == "" && first < born {
			t.Errorf("%s listed new, first alive %s, but born %s", host, first, born)
		}
	}
}
