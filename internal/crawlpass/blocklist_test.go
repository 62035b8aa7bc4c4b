package crawlpass

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/hostname"
)

// TestPassesNeverCheckABlocklistedHost runs two passes over a made-up
// network whose peers lists name blocklisted hosts. The first, from the
// seeds, checks what its seeds lead to but none of the blocklisted hosts
// they name, exact or below a "*.domain" entry (matched when discovered);
// the second finds them due, as recorded discoveries, and leaves them out
// of its due list (matched by the due query), counting them.
const day = 24 * time.Hour

// testRules are the state rules of the package's tests, with a warmup,
// during which a data directory's first pass takes its seeds as its due
// list and new hosts are due at once.
var testRules = duck.Rules{
	FailuresToDead: 3, DeadAfter: 7 * day, ReviveAfter: 7 * day,
	LiveWindow: 7 * day, NewWindow: 7 * day, Warmup: 14 * day,
	ActiveInterval: 29 * time.Hour, ActiveJitter: 2 * time.Hour,
	InactiveInterval: 167 * time.Hour, InactiveJitter: 12 * time.Hour,
	BackoffMax: 90 * day, DiscoveryDelay: 4 * time.Hour,
}

func TestPassesNeverCheckABlocklistedHost(t *testing.T) {
	ctx := context.Background()
	peers := map[observer.Host][]observer.Host{
		"seed.social": {"hub.social", "blocked.social", "x.spam.social"},
		"hub.social":  {"deep.social", "a.b.spam.social", "spam.social"},
	}
	var mu sync.Mutex
	var checked []observer.Host
	checker := crawl.CheckFunc(func(_ context.Context, host observer.Host, opts crawl.CheckOptions) (observer.Result, crawl.Trace) {
		mu.Lock()
		checked = append(checked, host)
		mu.Unlock()
		r := observer.Result{Check: observer.Check{Host: host, CheckedAt: opts.CheckedAt, PassID: opts.PassID, Outcome: observer.OutcomeAlive}}
		for _, p := range peers[host] {
			r.Discoveries = append(r.Discoveries, observer.Discovery{Host: p, DiscoveredAt: opts.CheckedAt, Via: string(host)})
		}
		return r, crawl.Trace{}
	})
	blocklist, errs := hostname.ReadBlocklist(strings.NewReader("blocked.social\n*.spam.social\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	rules := testRules
	data := t.TempDir()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	run := func(now time.Time) {
		t.Helper()
		err := Run(ctx, Options{
			Data: data, Now: now, NowGiven: true, Seeds: []observer.Host{"seed.social"}, SeedList: "seeds.txt",
			Blocklist: blocklist, Views: duck.ViewParams{Rules: rules},
			Peers:        duck.PeersSchedule{Interval: 14 * day, MinInterval: time.Hour},
			DomainBudget: 10, DiscoveredChecks: 100,
			Pass: crawl.Pass{Concurrency: 2}, Checker: checker,
			Derive: func(ctx context.Context) error {
				s, err := duck.Open(ctx, data, duck.Options{})
				if err != nil {
					return err
				}
				defer s.Close()
				_, err = s.Deriver.Derive(ctx, duck.DeriveOptions{Rules: rules})
				return err
			},
			Progress: io.Discard, Quiet: true, Summary: io.Discard,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	run(start)
	slices.Sort(checked)
	if want := []observer.Host{"deep.social", "hub.social", "seed.social"}; !slices.Equal(checked, want) {
		t.Fatalf("first pass checked %v, want %v", checked, want)
	}
	checked = nil
	run(start.Add(day))
	if len(checked) != 0 {
		t.Errorf("second pass checked %v, want none (every host due is blocklisted)", checked)
	}

	row := snapshotRow(t, data, "SELECT (SELECT list(blocklisted ORDER BY started_at) FROM passes)::VARCHAR AS blocklisted, "+
		"(SELECT count(DISTINCT host) FROM discoveries) AS known")
	// The blocklisted hosts are recorded, all the same: a blocklist edit
	// takes effect without crawling again.
	if got := fmt.Sprint(row["blocklisted"], " ", row["known"]); got != "[0, 4] 7" {
		t.Errorf("blocklisted per pass, known hosts = %s, want [0, 4] 7", got)
	}
}
