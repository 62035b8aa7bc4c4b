package duck_test

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/internal/testsupport"
)

// nextChecks returns next_check_at per host, as offsets from the given time.
func nextChecks(t *testing.T, s *duck.Store, from time.Time) map[string]time.Duration {
	t.Helper()
	out := map[string]time.Duration{}
	for _, v := range testsupport.Rows(t, s.Reader, "SELECT host, next_check_at FROM state ORDER BY host") {
		out[v[0].(string)] = v[1].(time.Time).Sub(from)
	}
	return out
}

func due(t *testing.T, s *duck.Store, now time.Time) []duck.DueHost {
	t.Helper()
	var out []duck.DueHost
	if err := s.Reader.DueHosts(context.Background(), now, duck.PeersSchedule{Interval: 7 * day, MinInterval: 7 * day}, func(d duck.DueHost) { out = append(out, d) }); err != nil {
		t.Fatal(err)
	}
	return out
}

// assertJitter checks offsets lie in [lo, hi] and are spread, not one value.
func assertJitter(t *testing.T, what string, got map[string]time.Duration, hosts []string, lo, hi time.Duration) {
	t.Helper()
	seen := map[time.Duration]bool{}
	for _, h := range hosts {
		d, ok := got[h]
		if !ok {
			t.Fatalf("%s: %s has no next check", what, h)
		}
		if d < lo || d > hi {
			t.Errorf("%s: %s next check at +%s, want within [%s, %s]", what, h, d, lo, hi)
		}
		seen[d] = true
	}
	if len(seen) < len(hosts)/2 {
		t.Errorf("%s: only %d distinct times for %d hosts: no jitter", what, len(seen), len(hosts))
	}
}

func TestSchedule(t *testing.T) {
	st := config.Default().State
	const n = 40
	hosts := func(prefix string) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%s%02d.example", prefix, i))
		}
		return out
	}
	s := openStore(t, t.TempDir())
	var evs []ev
	for _, h := range hosts("young") {
		evs = append(evs, discover(h, 3*day)) // within the first week of history
	}
	for _, h := range hosts("later") {
		evs = append(evs, discover(h, 10*day))
	}
	for _, h := range hosts("manual") {
		evs = append(evs, addManually(h, 10*day))
	}
	checkAt := 20 * day
	for _, h := range hosts("live") {
		evs = append(evs, discover(h, 0), alive(h, checkAt))
	}
	for _, h := range hosts("dead") {
		evs = append(evs, discover(h, 0))
		evs = append(evs, series(fail, h, checkAt-8*day, day, 9)...)
	}
	// Opted out and moved are inactive too (docs/data.md, the schedule).
	for _, h := range hosts("optout") {
		evs = append(evs, discover(h, 0), alive(h, checkAt-day), optedOut(h, checkAt))
	}
	for _, h := range hosts("moved") {
		evs = append(evs, discover(h, 0), alive(h, checkAt-day), moved(h, checkAt, "elsewhere.example"))
	}
	write(t, s, "p0", evs)
	derive(t, s, st, false)
	views(t, s, t0.Add(30*day))
	if got := stateOf(t, s, "dead00.example"); got != "dead since d19" {
		t.Fatalf("dead host: %s", got)
	}
	next := nextChecks(t, s, t0)

	t.Run("young_observer_discoveries_due_at_once", func(t *testing.T) {
		for _, h := range hosts("young") {
			if next[h] != 3*day {
				t.Errorf("%s due at +%s, want at its discovery +72h", h, next[h])
			}
		}
	})
	t.Run("hosts_added_by_hand_due_at_once", func(t *testing.T) {
		for _, h := range hosts("manual") {
			if next[h] != 10*day {
				t.Errorf("%s due at +%s, want at its addition +240h", h, next[h])
			}
		}
	})
	t.Run("later_discoveries_within_discovery_delay", func(t *testing.T) {
		assertJitter(t, "later", next, hosts("later"), 10*day, 10*day+st.DiscoveryDelay.D()-time.Microsecond)
	})
	t.Run("active_interval_with_jitter", func(t *testing.T) {
		lo := checkAt + st.ActiveInterval.D() - st.ActiveJitter.D()
		assertJitter(t, "live", next, hosts("live"), lo, lo+2*st.ActiveJitter.D())
	})
	t.Run("inactive_interval_with_jitter", func(t *testing.T) {
		lo := checkAt + st.InactiveInterval.D() - st.InactiveJitter.D()
		for _, kind := range []string{"optout", "moved"} {
			assertJitter(t, kind, next, hosts(kind), lo, lo+2*st.InactiveJitter.D())
		}
	})
	t.Run("never_alive_backed_off_to_the_ceiling", func(t *testing.T) {
		// Nine failed checks of hosts never alive: 29h doubled eight
		// times is past backoff_max, so backoff_max it is.
		lo := checkAt + st.BackoffMax.D() - st.ActiveJitter.D()
		assertJitter(t, "dead", next, hosts("dead"), lo, lo+2*st.ActiveJitter.D())
	})
	t.Run("jitter_is_md5_of_host_and_checks", func(t *testing.T) {
		// docs/data.md: the jitter is the low 64 bits of md5("host:checks")
		// modulo the jitter's range, the same on any DuckDB version.
		for _, h := range hosts("live") {
			sum := md5.Sum([]byte(h + ":1"))
			span := uint64(2*st.ActiveJitter.D().Microseconds() + 1)
			jitter := time.Duration(binary.LittleEndian.Uint64(sum[8:])%span)*time.Microsecond - st.ActiveJitter.D()
			if want := checkAt + st.ActiveInterval.D() + jitter; next[h] != want {
				t.Errorf("%s due at +%s, want +%s", h, next[h], want)
			}
		}
		// A host never checked waits md5("host:0") modulo discovery_delay.
		for _, h := range hosts("later") {
			sum := md5.Sum([]byte(h + ":0"))
			delay := time.Duration(binary.LittleEndian.Uint64(sum[8:])%uint64(st.DiscoveryDelay.D().Microseconds())) * time.Microsecond
			if want := 10*day + delay; next[h] != want {
				t.Errorf("%s due at +%s, want +%s", h, next[h], want)
			}
		}
	})
	t.Run("jitter_is_deterministic", func(t *testing.T) {
		again := openStore(t, t.TempDir())
		write(t, again, "other-pass", evs)
		derive(t, again, st, true)
		views(t, again, t0)
		if got := nextChecks(t, again, t0); !maps.Equal(got, next) {
			t.Fatal("the same history scheduled differently")
		}
	})
	t.Run("due_list_is_ordered_and_says_new_and_peers", func(t *testing.T) {
		now := t0.Add(checkAt + st.ActiveInterval.D() + st.ActiveJitter.D())
		list := due(t, s, now)
		var got []string
		for _, d := range list {
			got = append(got, string(d.Host))
			neverChecked := slices.Contains(hosts("young"), string(d.Host)) || slices.Contains(hosts("later"), string(d.Host)) ||
				slices.Contains(hosts("manual"), string(d.Host))
			if d.New != neverChecked {
				t.Errorf("%s: New = %v", d.Host, d.New)
			}
			// Live hosts fetched peers 31 hours ago; nobody else ever did.
			if wantPeers := !slices.Contains(hosts("live"), string(d.Host)); d.FetchPeers != wantPeers {
				t.Errorf("%s: FetchPeers = %v", d.Host, d.FetchPeers)
			}
		}
		want := slices.Concat(hosts("young"), hosts("later"), hosts("manual"), hosts("live"))
		if len(got) != len(want) {
			t.Fatalf("due = %v, want the young, later, manual and live hosts", got)
		}
		// Hosts checked before first, though the new ones are more
		// overdue: a flood of new names must not push them out of a pass.
		if first := slices.Sorted(slices.Values(got[:n])); !slices.Equal(first, hosts("live")) {
			t.Fatalf("due list starts %v, want the hosts checked before first", got[:n])
		}
		// Then soonest first, ties by host (the crawler's order,
		// docs/data.md's cookbook): the young hosts are all due at one
		// instant.
		for i := 1; i < len(list); i++ {
			a, b := list[i-1].Host, list[i].Host
			if list[i-1].New == list[i].New && (next[string(a)] > next[string(b)] || next[string(a)] == next[string(b)] && a > b) {
				t.Fatalf("due list not ordered by next check, then host: %s before %s", a, b)
			}
		}
		if ds := due(t, s, t0.Add(3*day-time.Second)); len(ds) != 0 {
			t.Fatalf("due before anything is: %v", ds)
		}
	})
	t.Run("peers_due_again_after_peers_interval", func(t *testing.T) {
		now := t0.Add(checkAt + 7*day)
		for _, d := range due(t, s, now) {
			if !d.FetchPeers {
				t.Errorf("%s: peers fetched 7 days ago are due again", d.Host)
			}
		}
	})
	t.Run("settings_apply_without_a_derivation", func(t *testing.T) {
		// The state view computes the schedule when read, from the settings
		// it was created with: a changed interval needs no new derivation.
		changed := st
		changed.ActiveInterval = config.Duration(st.ActiveInterval.D() + 5*time.Hour)
		changed.InactiveInterval = config.Duration(st.InactiveInterval.D() - 10*time.Hour)
		if err := s.Reader.CreateViews(context.Background(), duck.ViewParams{Now: t0.Add(30 * day), Rules: rules(changed)}); err != nil {
			t.Fatal(err)
		}
		defer views(t, s, t0.Add(30*day))
		got := nextChecks(t, s, t0)
		for host, was := range next {
			want := was
			switch {
			case slices.Contains(hosts("live"), host):
				want += 5 * time.Hour
			case slices.Contains(hosts("optout"), host), slices.Contains(hosts("moved"), host):
				want -= 10 * time.Hour
			}
			if got[host] != want {
				t.Errorf("%s due at +%s with the changed settings, want +%s", host, got[host], want)
			}
		}
	})
}
