package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/fedisim"
)

// A flood, end to end, in both isolation modes: alive hosts whose peers
// lists each name 200,000 valid new names under distinct registrable
// domains, new ones every day, read in every pass. Over several passes
// every pass completes, the known set grows no faster than the caps allow,
// every host found alive in a pass is checked again in the next (its
// schedule is a day, the passes 32 hours apart), and the crawl's process
// tree stays far within the memory figures (docs/benchmarks.md): before the
// caps, eight such hosts took the crawl past 7 GiB in a simulated day.
func TestFloodOfNewNamesIsCapped(t *testing.T) {
	const (
		flooders = 4
		perList  = 300
		perPass  = 1000
		passes   = 4
		// The whole crawl's goal with a million known hosts; this crawl
		// knows a few thousand.
		memoryGoal = 1536 << 20
	)
	for _, iso := range []string{"process", "none"} {
		t.Run(iso, func(t *testing.T) {
			s := newSimSite(t, fedisim.Config{Instances: 300, Flooders: flooders})
			seeds := strings.Join(append(s.sim.Seeds(3), s.sim.Flooders()...), "\n") + "\n"
			if err := os.WriteFile(filepath.Join(s.dir, "seeds.txt"), []byte(seeds), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := fmt.Sprintf("[crawl]\nseeds = \"seeds.txt\"\nconcurrency = 8\npeers_interval = \"1h\"\npeers_min_interval = \"1h\"\nmax_new_per_list = %d\nmax_new_per_pass = %d\n", perList, perPass)
			if err := os.WriteFile(s.config, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			var passIDs []string
			for k := range passes {
				now := start.Add(time.Duration(k) * 32 * time.Hour)
				s.sim.SetNow(now)
				args := append([]string{"crawl", "--quiet", "--isolation", iso, "--config", s.config, "--data", filepath.Join(s.dir, "data"),
					"--now", now.Format(time.RFC3339)}, s.net...)
				cmd := observerProcess(t, args...)
				var out strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				var m memoryFigures
				stop := make(chan struct{})
				var wg sync.WaitGroup
				wg.Go(func() { sampleTree(cmd.Process.Pid, stop, &m) })
				err := cmd.Wait()
				close(stop)
				wg.Wait()
				// The flood's names all answer at one address, the
				// simulator's catch-all (as names pointed at one victim
				// would): they wait for it in turn, and its request budget
				// leaves the rest for later passes, which is no reason to
				// cut a pass short (exit 3).
				if err != nil {
					t.Fatalf("pass %d: %v\n%s", k, err, tail(out.String(), 4000))
				}
				t.Logf("pass %d: peak summed PSS %d MiB, %d processes at most", k, m.pssPeak>>20, m.procsPeak)
				if m.pssPeak > memoryGoal {
					t.Errorf("pass %d: the crawl's processes peaked at %d MiB summed PSS, over %d MiB", k, m.pssPeak>>20, memoryGoal>>20)
				}
				ids := s.query(t, "SELECT pass_id FROM passes ORDER BY started_at DESC LIMIT 1")
				passIDs = append(passIDs, ids[0])
			}
			// Every pass finished its due list, recorded no more new
			// hosts than its cap, and dropped the rest of the flood,
			// counted; the catch-all's budget left flood names over.
			rows := s.query(t, "SELECT discovered, over_list_cap, over_pass_cap, replace(coalesce(cut_short, '-'), ' ', '_'), not_started, skipped_address_budget FROM passes ORDER BY started_at")
			if len(rows) != passes {
				t.Fatalf("passes: %q", rows)
			}
			for k, row := range rows {
				f := strings.Fields(row)
				discovered, _ := strconv.Atoi(f[0])
				overList, _ := strconv.Atoi(f[1])
				if len(f) != 6 || discovered > perPass || overList < flooders*(200_000-perList) || f[3] != "-" || f[4] != "0" {
					t.Errorf("pass %d: discovered, over list cap, over pass cap, cut short, not started, skipped for the address budget = %q; want at most %d discovered, the flood's rest dropped, not cut short", k, row, perPass)
				}
			}
			if got := s.query(t, "SELECT max(new_peers_count) FROM checks")[0]; got != strconv.Itoa(perList) {
				t.Errorf("most new peers kept from one list: %s, want the cap %d", got, perList)
			}
			known, _ := strconv.Atoi(s.query(t, "SELECT count(DISTINCT host) FROM discoveries")[0])
			if max := len(strings.Fields(seeds)) + passes*perPass; known > max {
				t.Errorf("%d hosts known after %d passes, over the caps' %d", known, passes, max)
			}
			// The hosts found alive are checked in the next pass, flood
			// or not.
			for k := 1; k < passes; k++ {
				q := fmt.Sprintf(`SELECT count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM checks b WHERE b.pass_id = '%s' AND b.host = a.host)), count(*)
					FROM checks a WHERE a.pass_id = '%s' AND a.outcome = 'alive'`, passIDs[k], passIDs[k-1])
				f := strings.Fields(s.query(t, q)[0])
				if f[0] != "0" || f[1] == "0" {
					t.Errorf("pass %d: %s of the %s hosts alive in pass %d were not checked", k, f[0], f[1], k-1)
				}
			}
		})
	}
}
