package duck_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/hostname"
)

// recordChecks writes the given checks as one pass's snapshot.
func recordChecks(t *testing.T, s *duck.Store, pass string, checks ...observer.Check) {
	t.Helper()
	ctx := context.Background()
	w, err := s.Snapshots.NewWriter(pass, duck.WriterOptions{FlushChecks: 1 << 30, FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		c.PassID = pass
		if err := w.Record(ctx, observer.Result{Check: c}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func dueByHost(t *testing.T, s *duck.Store, now time.Time) map[string]duck.DueHost {
	t.Helper()
	out := map[string]duck.DueHost{}
	for _, d := range due(t, s, now) {
		out[string(d.Host)] = d
	}
	return out
}

// TestPeersValidatorsFollowTheLatestListCheck: the due list hands the
// crawler the validators of the latest check that read the peers list or
// was told it had not changed, across incremental derivations, and none for
// a list that came without them.
func TestPeersValidatorsFollowTheLatestListCheck(t *testing.T) {
	s := openStore(t, t.TempDir())
	aliveAt := func(host string, at time.Duration) observer.Check {
		return observer.Check{Host: observer.Host(host), CheckedAt: t0.Add(at), Outcome: observer.OutcomeAlive, Software: "mastodon"}
	}
	fetched := func(c observer.Check, etag, lastModified string) observer.Check {
		c.PeersFetched, c.PeersETag, c.PeersLastModified = true, etag, lastModified
		return c
	}
	notModified := func(c observer.Check, etag, lastModified string) observer.Check {
		c.PeersNotModified, c.PeersETag, c.PeersLastModified = true, etag, lastModified
		return c
	}
	recordChecks(t, s, "p1",
		fetched(aliveAt("etag.example", 0), `"v1"`, "Mon, 05 Jan 2026 12:00:00 GMT"),
		fetched(aliveAt("paged.example", 0), `"old"`, ""),
		fetched(aliveAt("kept.example", 0), `"k1"`, ""),
	)
	derive(t, s, config.Default().State, false)
	views(t, s, t0)

	// Eight days on: every list is due again, asked with its validators.
	later := t0.Add(8 * day)
	got := dueByHost(t, s, later)
	if d := got["etag.example"]; !d.FetchPeers || d.PeersETag != `"v1"` || d.PeersLastModified != "Mon, 05 Jan 2026 12:00:00 GMT" {
		t.Fatalf("etag.example after its first fetch: %+v", d)
	}

	recordChecks(t, s, "p2",
		notModified(aliveAt("etag.example", 8*day), `"v1"`, "Mon, 05 Jan 2026 12:00:00 GMT"),
		fetched(aliveAt("paged.example", 8*day), "", ""), // a list without validators replaces the old ones
		aliveAt("kept.example", 8*day),                   // the list was not asked for: validators stay
	)
	if rep := derive(t, s, config.Default().State, false); rep.Full {
		t.Fatalf("second derivation was full: %s", rep.FullReason)
	}
	views(t, s, later)
	got = dueByHost(t, s, t0.Add(8*day+30*time.Hour))
	want := map[string]duck.DueHost{
		// A 304 counts as a fetch for the peers interval and keeps the validators.
		"etag.example":  {Host: "etag.example", PeersValidators: observer.PeersValidators{PeersETag: `"v1"`, PeersLastModified: "Mon, 05 Jan 2026 12:00:00 GMT"}},
		"paged.example": {Host: "paged.example"},
		// Not fetched for 8 days: due, with the validators of the last fetch.
		"kept.example": {Host: "kept.example", FetchPeers: true, PeersValidators: observer.PeersValidators{PeersETag: `"k1"`}},
	}
	for h, w := range want {
		if got[h] != w {
			t.Errorf("%s: due %+v, want %+v", h, got[h], w)
		}
	}
}

// TestBlocklistLeavesThePublishedLists: a blocklisted host (exact, or below
// a "*.domain" entry, or the domain itself) is in neither live nor new, nor
// in the counts made from them; the state keeps it.
func TestBlocklistLeavesThePublishedLists(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	write(t, s, "p0", concat(
		[]ev{discover("first.example", 0)},
		[]ev{discover("kept.example", 20*day), alive("kept.example", 30*day)},
		[]ev{discover("spam.example", 20*day), alive("spam.example", 30*day)},
		[]ev{discover("a.farm.example", 20*day), alive("a.farm.example", 30*day)},
		[]ev{discover("farm.example", 20*day), alive("farm.example", 30*day)},
		[]ev{discover("notfarm.example", 20*day), alive("notfarm.example", 30*day)},
	))
	derive(t, s, config.Default().State, false)
	now := t0.Add(31 * day)
	if err := s.Reader.CreateViews(ctx, duck.ViewParams{Now: now, Rules: defaultRules, Blocklist: []string{"spam.example", "*.farm.example"}}); err != nil {
		t.Fatal(err)
	}
	want := []string{"kept.example", "notfarm.example"}
	if got := hostsOf(collect(t, s.Reader.LiveInstances(ctx))); !slices.Equal(got, want) {
		t.Errorf("live = %v, want %v", got, want)
	}
	newList := hostsOf(collect(t, s.Reader.NewInstances(ctx)))
	slices.Sort(newList)
	if !slices.Equal(newList, want) {
		t.Errorf("new = %v, want %v", newList, want)
	}
	if got := texts(t, s, "SELECT value::VARCHAR FROM stats WHERE day IS NULL AND software IS NULL ORDER BY metric"); !slices.Equal(got, []string{"2", "2"}) {
		t.Errorf("live and new counts = %v, want 2 and 2", got)
	}
	if got := texts(t, s, "SELECT count(*)::VARCHAR FROM state"); !slices.Equal(got, []string{"6"}) {
		t.Errorf("state holds %v hosts, want all 6", got)
	}
	if got := texts(t, s, "SELECT kind || ' ' || entry FROM blocked ORDER BY ALL"); !slices.Equal(got, []string{"domain farm.example", "host spam.example"}) {
		t.Errorf("blocked view = %v", got)
	}
	// The due list marks the same hosts blocked, for the crawl to leave
	// out.
	var blocked []string
	for _, d := range due(t, s, t0.Add(400*day)) {
		if d.Blocked {
			blocked = append(blocked, string(d.Host))
		}
	}
	slices.Sort(blocked)
	if want := []string{"a.farm.example", "farm.example", "spam.example"}; !slices.Equal(blocked, want) {
		t.Errorf("due hosts marked blocked = %v, want %v", blocked, want)
	}
}

// TestBlocklistMatching holds the blocklist's one rule (the macro blocking):
// an exact entry blocks that host alone, a "*.domain" entry the domain and
// every host below it, the domain a public suffix or not; is_blocked and
// BlockedAmong, which the crawl and observer add ask, say the same of
// every host, and BlockedAmong names the entry in the file's form, an
// exact one first, then the nearest domain's.
func TestBlocklistMatching(t *testing.T) {
	ctx := context.Background()
	list, errs := hostname.ReadBlocklist(strings.NewReader(`# an admin asked to be removed
Asked.Example.Social.
*.spam-farm.online   # every host below it
*.duckdns.org
*.GitHub.io.
*.tk
*.co.uk
xn--bcher-kva.social
a.x.farm.social
*.x.farm.social
*.farm.social
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	s := openStore(t, t.TempDir())
	if err := s.Reader.CreateBlocklistViews(ctx, list.Entries()); err != nil {
		t.Fatal(err)
	}
	want := map[observer.Host]string{
		"asked.example.social": "asked.example.social", "other.example.social": "", "example.social": "", "a.asked.example.social": "",
		"spam-farm.online": "*.spam-farm.online", "node1.spam-farm.online": "*.spam-farm.online", "a.b.spam-farm.online": "*.spam-farm.online",
		"notspam-farm.online": "", "spam-farm.online.evil.de": "",
		"spam1.duckdns.org": "*.duckdns.org", "a.b.github.io": "*.github.io", "free-spam.tk": "*.tk",
		"duckdns.org.example.com": "", "github.com": "", "shop.co.uk": "*.co.uk", "co.uk.org": "",
		"xn--bcher-kva.social": "xn--bcher-kva.social", "b.xn--bcher-kva.social": "", "social": "",
		"a.x.farm.social": "a.x.farm.social", "y.x.farm.social": "*.x.farm.social", "x.farm.social": "*.x.farm.social",
		"farm.social": "*.farm.social", "z.farm.social": "*.farm.social", "notfarm.social": "", "farm.social.org": "",
	}
	hosts := slices.Sorted(maps.Keys(want))
	got, err := s.Reader.BlockedAmong(ctx, hosts)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		if got[h] != want[h] {
			t.Errorf("BlockedAmong: %s is blocked by %q, want %q", h, got[h], want[h])
		}
		if is := texts(t, s, "SELECT is_blocked('"+string(h)+"')::VARCHAR"); len(is) != 1 || is[0] != fmt.Sprint(want[h] != "") {
			t.Errorf("is_blocked(%s) = %v, want %v", h, is, want[h] != "")
		}
	}
	// An empty blocklist blocks nothing.
	if err := s.Reader.CreateBlocklistViews(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Reader.BlockedAmong(ctx, hosts); err != nil || len(got) != 0 {
		t.Errorf("an empty blocklist blocks %v (%v)", got, err)
	}
}
