package crawlpass

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/hostname"
	"github.com/fediverse-observer/observer/sandbox"
)

// TestFirstPassDueListIsTheDerivedOne holds dueAndKnownHosts's shortcut to
// the rules it stands in for. A data directory's first pass takes its seeds
// as the due list and the known hosts without deriving; the derivation
// (views/state.sql's schedule) and the due query (queries/due.sql) must give
// the same list, in the same order, with the same hosts left out and the
// same peers lists due, and the derived state the same known hosts, or the
// shortcut has drifted from them.
func TestFirstPassDueListIsTheDerivedOne(t *testing.T) {
	ctx := context.Background()
	var seeds []observer.Host
	for _, s := range []string{
		"zeta.social", "alpha.social", "blocked.social", "a.spam.social",
		"one.shared.social", "two.shared.social", "three.shared.social", "four.shared.social",
		"xn--bcher-kva.social", "mid.social",
	} {
		h, err := hostname.Normalize(s)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, h)
	}
	blocklist, errs := hostname.ReadBlocklist(strings.NewReader("blocked.social\n*.spam.social\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	rules := testRules
	r, err := open(ctx, Options{
		Data:         t.TempDir(),
		Now:          time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		NowGiven:     true,
		Seeds:        seeds,
		Blocklist:    blocklist,
		Views:        duck.ViewParams{Rules: rules},
		Peers:        duck.PeersSchedule{Interval: 14 * day, MinInterval: time.Hour},
		DomainBudget: 2,
	}, "test-pass")
	if err != nil {
		t.Fatal(err)
	}
	defer r.close(ctx)
	seeded, err := r.recordSeeds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !seeded.fresh || len(seeded.added) != len(seeds) {
		t.Fatalf("a fresh data directory: fresh %v, %d of %d seeds recorded", seeded.fresh, len(seeded.added), len(seeds))
	}
	r.Derive = func(context.Context) error {
		t.Error("the first pass derived")
		return nil
	}
	known, err := sandbox.NewPendingKnown()
	if err != nil {
		t.Fatal(err)
	}
	defer known.Close()
	shortcut, err := r.dueAndKnownHosts(ctx, seeded, known)
	if err != nil {
		t.Fatal(err)
	}

	if err := r.writer.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.Deriver.Derive(ctx, duck.DeriveOptions{Rules: rules}); err != nil {
		t.Fatal(err)
	}
	derived, err := r.readDueHosts(ctx)
	if err != nil {
		t.Fatal(err)
	}

	if len(derived.Hosts) == 0 {
		t.Fatal("the derived due list is empty: the test's world has gone wrong")
	}
	if !slices.Equal(shortcut.Hosts, derived.Hosts) {
		t.Errorf("due hosts:\nshortcut %v\nderived  %v", shortcut.Hosts, derived.Hosts)
	}
	if shortcut.Blocklisted != derived.Blocklisted || shortcut.OverDomainBudget != derived.OverDomainBudget {
		t.Errorf("left out: shortcut %d blocklisted, %d over the domain budget; derived %d, %d",
			shortcut.Blocklisted, shortcut.OverDomainBudget, derived.Blocklisted, derived.OverDomainBudget)
	}
	for _, h := range derived.Hosts {
		if s, d := shortcut.Peers(h), derived.Peers(h); s != d {
			t.Errorf("%s: peers %+v by the shortcut, %+v derived", h, s, d)
		}
	}

	var derivedKnown []observer.Host
	if err := r.store.Reader.KnownHosts(ctx, func(h observer.Host) { derivedKnown = append(derivedKnown, h) }); err != nil {
		t.Fatal(err)
	}
	if len(derivedKnown) != known.Len() {
		t.Errorf("known hosts: %d by the shortcut, %d derived", known.Len(), len(derivedKnown))
	}
	for _, h := range derivedKnown {
		if !known.Set().Has(h) {
			t.Errorf("known hosts: %s derived, not known by the shortcut", h)
		}
	}
}
