package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/fedisim"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// The discovery-latency benchmark: the observer as deployed (a crawl pass
// every OBSERVER_LATENCY_PASS, observer build after each) over the spread
// model of fedisim for OBSERVER_LATENCY_DAYS simulated days, measured
// against the model's ground truth:
//
//   - latency from each instance's birth to the first build whose new.atom
//     lists it (p50, p95, max), for instances born after the warmup and at
//     least two days before the end that stayed alive two days; those never
//     listed are counted;
//   - peers-list bytes served per day (the simulator counts them);
//   - checks per day by the host's true state when checked: alive, dead
//     for up to a month, dead for longer, never a server (named for up to
//     a month, or longer), over the last third of the run (the steady
//     state); the share of dead for longer than a month or never a server
//     named for longer is the goal's;
//   - entries of new.atom that changed id.
//
// Settings (environment):
//
//	OBSERVER_LATENCY_INSTANCES  instances of the model (default 2000, as the recorded figures; 10000 the larger world)
//	OBSERVER_LATENCY_DAYS       simulated days (default 60)
//	OBSERVER_LATENCY_PASS       time between passes (default 2h, as deploy/systemd's timer)
//	OBSERVER_LATENCY_BIN        the observer binary to run (default: this test binary as observer),
//	                            e.g. one built from an older commit to measure it on the same world
//	OBSERVER_LATENCY_CONFIG     extra lines for observer.toml's [crawl] table, e.g. peers_min_interval = "8h"
//
// make bench-latency runs it (LATENCY_INSTANCES, LATENCY_DAYS).
func BenchmarkDiscoveryLatency(b *testing.B) {
	n := benchEnvInt("OBSERVER_LATENCY_INSTANCES", 2000)
	days := benchEnvInt("OBSERVER_LATENCY_DAYS", 60)
	every := latencyEvery(b)
	for i := 0; i < b.N; i++ {
		runLatencyWorld(b, n, days, every).report(b)
	}
}

// latencyConfig is observer.toml for a latency run, with
// OBSERVER_LATENCY_CONFIG's lines added to its [crawl] table.
func latencyConfig() string {
	return "[site]\nbase_url = \"https://observer.example/\"\n[crawl]\nseeds = \"data/seeds.txt\"\nconcurrency = 32\nduration = \"1h\"\naddress_budget = 0\n" +
		os.Getenv("OBSERVER_LATENCY_CONFIG") + "\n"
}

// latencyEvery is OBSERVER_LATENCY_PASS, the time between passes (default
// 2h, as deploy/systemd's timer).
func latencyEvery(b *testing.B) time.Duration {
	v := os.Getenv("OBSERVER_LATENCY_PASS")
	if v == "" {
		return 2 * time.Hour
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("OBSERVER_LATENCY_PASS: %q is not a positive duration", v)
	}
	return d
}

// report prints the figures and reports them as the benchmark's metrics.
func (f latencyFigures) report(b *testing.B) {
	// On stderr too: a benchmark's log is cut to its first lines.
	fmt.Fprint(os.Stderr, f.String())
	b.Log("\n" + f.String())
	b.ReportMetric(f.p50.Hours(), "p50-hours")
	b.ReportMetric(f.p95.Hours(), "p95-hours")
	b.ReportMetric(f.max.Hours(), "max-hours")
	b.ReportMetric(float64(f.neverListed), "never-listed")
	b.ReportMetric(f.peersPerDay/1024, "peers-KiB/day")
	b.ReportMetric(f.checksPerDay, "checks/day")
	b.ReportMetric(100*f.deadLongShare, "%checks-dead>1mo")
}

// latencyFigures is what one run over the spread model measured.
type latencyFigures struct {
	instances, days int
	every           time.Duration
	passes          int
	wall            time.Duration
	// segments counts the processes a resumed run took (the model's
	// OBSERVER_MODEL_DIR); wall is their sum. earlier is what the
	// simulators of the segments before this process's counted.
	segments int
	earlier  simCounts
	// warm is when the births measured start, after Day0 (0: 8 days, past
	// the observer's warmup of 7).
	warm time.Duration

	measured, listed, neverListed int
	p50, p95, max                 time.Duration
	idChanges                     int
	// stages splits the latency of the instances listed: birth to the
	// first peers list any crawler could read the name in (the world's
	// share), to the observer's discovery of it, to its first alive
	// check, to the build that listed it; tail is the same for the
	// slowest.
	stages [4]struct{ p50, p95 time.Duration }
	tail   []string
	// why breaks the observer's share down for the instances at or past
	// the p95 (see tailBreakdown).
	why string

	peersPerDay       float64 // bytes
	listsPerDay       float64 // peers lists read in full
	entriesPerDay     float64 // their entries
	notModifiedPerDay float64
	checksPerDay      float64 // steady state
	byState           map[string]float64
	deadLongShare     float64
}

func (f latencyFigures) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d instances, %d days, a pass every %s: %d passes in %s", f.instances, f.days, f.every, f.passes, f.wall.Round(time.Second))
	if f.segments > 1 {
		fmt.Fprintf(&b, " (resumed: %d segments, the time their sum)", f.segments)
	}
	fmt.Fprintf(&b, "\n")
	fmt.Fprintf(&b, "birth to new.atom: p50 %.1f h, p95 %.1f h, max %.1f h over %d instances; %d never listed; %d entries changed id\n",
		f.p50.Hours(), f.p95.Hours(), f.max.Hours(), f.listed, f.neverListed, f.idChanges)
	fmt.Fprintf(&b, "stages (p50/p95):")
	for k, name := range []string{"birth→named", "named→discovered", "discovered→alive check", "alive check→listed"} {
		fmt.Fprintf(&b, " %s %.1f/%.1f h;", name, f.stages[k].p50.Hours(), f.stages[k].p95.Hours())
	}
	fmt.Fprintf(&b, "\n%s", f.why)
	fmt.Fprintf(&b, "slowest (birth→named, →discovered, →alive check, →listed, hours):\n")
	for _, t := range f.tail {
		fmt.Fprintf(&b, "  %s\n", t)
	}
	fmt.Fprintf(&b, "peers lists: %.0f KiB/day; %.0f lists/day read in full, %.0f entries/day; %.0f answered 304/day\n",
		f.peersPerDay/1024, f.listsPerDay, f.entriesPerDay, f.notModifiedPerDay)
	fmt.Fprintf(&b, "checks/day at steady state: %.0f (", f.checksPerDay)
	for _, k := range []string{"alive", "dead<=1mo", "dead>1mo", "never<=1mo", "never"} {
		fmt.Fprintf(&b, " %s %.0f", k, f.byState[k])
	}
	fmt.Fprintf(&b, " ); dead>1 month or never alive: %.1f%% of checks\n", 100*f.deadLongShare)
	return b.String()
}

// simCounts are a simulator's counters that the figures read.
type simCounts struct{ peersBytes, notModified int64 }

var newEntryID = regexp.MustCompile(`<id>(tag:[^<]*:new/([^<]+))</id>`)

func runLatencyWorld(b *testing.B, n, days int, every time.Duration) latencyFigures {
	sim := testsupport.StartSim(b, fedisim.Config{Seed: 26, Instances: n, Spread: &fedisim.Spread{}})
	dir := b.TempDir()
	site := filepath.Join(dir, "site")
	ca := testsupport.SimCA(b, sim, dir)
	bin, env := os.Args[0], []string{"OBSERVER_TEST_MAIN=1"}
	if v := os.Getenv("OBSERVER_LATENCY_BIN"); v != "" {
		bin, env = v, nil
	}
	observer := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), env...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		// 3: a pass cut short by its budget, which the deployment counts as done.
		if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 3) {
			b.Fatalf("observer %s: %v\n%s\n%s", strings.Join(args, " "), err, out.String(), tail(errb.String(), 4000))
		}
		return out.String()
	}
	observer("new", "site", site)
	seeds := strings.Join(sim.Seeds(5), "\n") + "\n"
	if err := os.WriteFile(filepath.Join(site, "data", "seeds.txt"), []byte(seeds), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(site, "observer.toml"), []byte(latencyConfig()), 0o644); err != nil {
		b.Fatal(err)
	}
	net := simFlags(sim, ca)
	conf := filepath.Join(site, "observer.toml")
	data := filepath.Join(site, "data")

	day0 := sim.Config().Day0
	end := day0.Add(time.Duration(days) * 24 * time.Hour)
	listedAt := map[string]time.Time{}
	ids := map[string]string{}
	f := latencyFigures{instances: n, days: days, every: every, byState: map[string]float64{}}
	start := time.Now()
	for t := day0; t.Before(end); t = t.Add(every) {
		sim.SetNow(t)
		now := t.Format(time.RFC3339)
		crawlStart := time.Now()
		observer(append([]string{"crawl", "--quiet", "--config", conf, "--data", data, "--now", now, "--isolation", "none"}, net...)...)
		// The build follows the pass, as OnSuccess= runs it: at the pass's
		// start it would not yet see the checks the pass dated after its
		// start, and list each new instance one pass late.
		built := t.Add(time.Since(crawlStart).Truncate(time.Second) + time.Second)
		out := filepath.Join(site, "public")
		observer("build", "--quiet", "--config", conf, "--data", data, "--now", built.Format(time.RFC3339), "--out", out)
		feed, err := os.ReadFile(filepath.Join(out, "new.atom"))
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range newEntryID.FindAllSubmatch(feed, -1) {
			host, id := string(m[2]), string(m[1])
			if _, ok := listedAt[host]; !ok {
				listedAt[host] = built
			}
			if was, ok := ids[host]; ok && was != id {
				f.idChanges++
			}
			ids[host] = id
		}
		f.passes++
		if next := t.Add(every); next.Sub(day0)/(24*time.Hour) != t.Sub(day0)/(24*time.Hour) {
			// A benchmark's log shows only at its end: a run of hours says
			// how far it is, and what a simulated day costs, as it goes.
			day := int(next.Sub(day0) / (24 * time.Hour))
			fmt.Fprintf(os.Stderr, "bench-latency: day %d of %d done, %s since the start\n", day, days, time.Since(start).Round(time.Second))
			// The figures so far every ten days: a run cut short by its
			// deadline still tells what it measured.
			if day%10 == 0 && day < days {
				g := f
				g.days, g.wall, g.byState = day, time.Since(start), map[string]float64{}
				g.fromTruth(b, sim, data, listedAt, day0, next)
				fmt.Fprintf(os.Stderr, "bench-latency: the figures after %d days:\n%s", day, g.String())
			}
		}
	}
	f.wall = time.Since(start)

	f.fromTruth(b, sim, data, listedAt, day0, end)
	return f
}

// fromTruth measures a run that listed each host in new.atom first at
// listedAt against the model's ground truth: latency from birth to listing
// and its stages, peers traffic, and checks by state over the run's last
// third.
func (f *latencyFigures) fromTruth(b testing.TB, sim *fedisim.Sim, data string, listedAt map[string]time.Time, day0, end time.Time) {
	warm := day0.Add(8 * 24 * time.Hour)
	if f.warm > 0 {
		warm = day0.Add(f.warm)
	}
	var lat []time.Duration
	var listedIdx []int
	for i := range f.instances {
		tr, _ := sim.Truth(i)
		if tr.Ghost || tr.Born.Before(warm) || tr.Born.After(end.Add(-48*time.Hour)) || !tr.AliveAt(tr.Born.Add(48*time.Hour)) {
			continue
		}
		f.measured++
		at, ok := listedAt[tr.Host]
		if !ok {
			f.neverListed++
			continue
		}
		lat = append(lat, at.Sub(tr.Born))
		listedIdx = append(listedIdx, i)
	}
	f.listed = len(lat)
	f.stagesOf(b, sim, data, listedIdx, listedAt, end)
	if len(lat) > 0 {
		slices.Sort(lat)
		f.p50, f.p95, f.max = lat[len(lat)/2], lat[len(lat)*95/100], lat[len(lat)-1]
	}
	st := sim.Stats()
	f.peersPerDay = float64(f.earlier.peersBytes+st.PeersBytes) / float64(f.days)
	f.notModifiedPerDay = float64(f.earlier.notModified+st.NotModified) / float64(f.days)
	f.checksByState(b, sim, data, end.Add(-time.Duration(f.days)*24*time.Hour/3), end)
}

// openSnapshotViews opens the benchmark's data directory with the
// snapshots' views defined, for reading its checks directly.
func openSnapshotViews(b testing.TB, data string) *duck.Store {
	ctx := context.Background()
	store, err := duck.Open(ctx, data, duck.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := store.Reader.CreateSnapshotViews(ctx); err != nil {
		store.Close()
		b.Fatal(err)
	}
	return store
}

// checksByState counts the checks made from `from` to `to` by the checked
// host's true state then, per day.
func (f *latencyFigures) checksByState(b testing.TB, sim *fedisim.Sim, data string, from, to time.Time) {
	ctx := context.Background()
	store := openSnapshotViews(b, data)
	defer store.Close()
	rows, err := store.Reader.Query(ctx, fmt.Sprintf("SELECT host, checked_at FROM checks WHERE checked_at >= TIMESTAMP '%s' AND checked_at < TIMESTAMP '%s'",
		from.UTC().Format("2006-01-02 15:04:05"), to.UTC().Format("2006-01-02 15:04:05")))
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	lists, err := store.Reader.QueryMaps(ctx, "SELECT count(*)::DOUBLE AS n, coalesce(sum(peers_count), 0)::DOUBLE AS entries FROM checks WHERE peers_fetched AND NOT coalesce(peers_not_modified, false)")
	if err != nil {
		b.Fatal(err)
	}
	f.listsPerDay, f.entriesPerDay = lists[0]["n"].(float64)/float64(f.days), lists[0]["entries"].(float64)/float64(f.days)
	var total float64
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			b.Fatal(err)
		}
		host, at := v[0].(string), v[1].(time.Time)
		state := "never"
		if inf, ok := sim.Instance(host); ok {
			tr, _ := sim.Truth(inf.Index)
			switch {
			case tr.Ghost && at.Sub(tr.FirstFederation) <= 30*24*time.Hour:
				state = "never<=1mo"
			case tr.Ghost:
			case tr.AliveAt(at):
				state = "alive"
			case !tr.Died.IsZero() && at.Sub(tr.Died) > 30*24*time.Hour:
				state = "dead>1mo"
			case at.Before(tr.Born) || !tr.Died.IsZero():
				state = "dead<=1mo"
			}
		}
		f.byState[state]++
		total++
	}
	span := to.Sub(from).Hours() / 24
	for k := range f.byState {
		f.byState[k] /= span
	}
	f.checksPerDay = total / span
	if total > 0 {
		f.deadLongShare = (f.byState["dead>1mo"] + f.byState["never"]) * span / total
	}
}

// stagesOf splits the latency of the listed instances into its stages,
// from the ground truth and the observer's own records.
func (f *latencyFigures) stagesOf(b testing.TB, sim *fedisim.Sim, data string, idx []int, listedAt map[string]time.Time, end time.Time) {
	if len(idx) == 0 {
		return
	}
	ctx := context.Background()
	store := openSnapshotViews(b, data)
	defer store.Close()
	firstAt := func(query string) map[string]time.Time {
		rows, err := store.Reader.Query(ctx, query)
		if err != nil {
			b.Fatal(err)
		}
		defer rows.Close()
		m := map[string]time.Time{}
		for rows.Next() {
			v, err := rows.Values()
			if err != nil {
				b.Fatal(err)
			}
			m[v[0].(string)] = v[1].(time.Time)
		}
		return m
	}
	discovered := firstAt("SELECT host, min(discovered_at) FROM discoveries GROUP BY host")
	alive := firstAt("SELECT host, min(checked_at) FROM checks WHERE outcome = 'alive' GROUP BY host")
	type row struct {
		host  string
		stage [4]time.Duration
		total time.Duration
	}
	var rs []row
	var by [4][]time.Duration
	for _, i := range idx {
		tr, _ := sim.Truth(i)
		named, ok := sim.FirstNamed(i, end)
		if !ok {
			named = tr.Born
		}
		marks := []time.Time{tr.Born, named, discovered[tr.Host], alive[tr.Host], listedAt[tr.Host]}
		r := row{host: tr.Host, total: marks[4].Sub(marks[0])}
		for k := range 4 {
			r.stage[k] = marks[k+1].Sub(marks[k])
			by[k] = append(by[k], r.stage[k])
		}
		rs = append(rs, r)
	}
	for k := range by {
		slices.Sort(by[k])
		f.stages[k].p50, f.stages[k].p95 = by[k][len(by[k])/2], by[k][len(by[k])*95/100]
	}
	slices.SortFunc(rs, func(a, b row) int { return int(b.total - a.total) })
	var slow []int
	for _, r := range rs[:len(rs)-len(rs)*95/100] {
		inf, _ := sim.Instance(r.host)
		slow = append(slow, inf.Index)
	}
	f.why = tailBreakdown(b, sim, store, slow, discovered, end)
	for _, r := range rs[:min(len(rs), 12)] {
		f.tail = append(f.tail, fmt.Sprintf("%s %.1f: %.1f %.1f %.1f %.1f", r.host, r.total.Hours(),
			r.stage[0].Hours(), r.stage[1].Hours(), r.stage[2].Hours(), r.stage[3].Hours()))
	}
}

// tailBreakdown says where the observer's share of the slowest instances'
// latency goes: which list first served each name (a hub, another list
// its server caches for a day with validators, Mastodon's; or one served
// fresh, without validators, by family), how long the hubs took to name
// it after that first list, and how soon after a hub named it the
// observer discovered it (the hubs' lists are read every pass); and, for
// the other lists that named it before the hubs, how soon the observer
// read them.
func tailBreakdown(b testing.TB, sim *fedisim.Sim, store *duck.Store, idx []int, discovered map[string]time.Time, end time.Time) string {
	ctx := context.Background()
	rows, err := store.Reader.Query(ctx, "SELECT host, list(checked_at ORDER BY checked_at) FROM checks WHERE peers_fetched OR coalesce(peers_not_modified, false) GROUP BY host")
	if err != nil {
		b.Fatal(err)
	}
	reads := map[string][]time.Time{}
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range v[1].([]any) {
			reads[v[0].(string)] = append(reads[v[0].(string)], t.(time.Time))
		}
	}
	rows.Close()
	// readAfter is the observer's first reading of host's list at or after t.
	readAfter := func(host string, t time.Time) (time.Time, bool) {
		r := reads[host]
		k, _ := slices.BinarySearchFunc(r, t, func(a, t time.Time) int { return a.Compare(t) })
		if k == len(r) {
			return time.Time{}, false
		}
		return r[k], true
	}
	kind := func(l int) string {
		tr, _ := sim.Truth(l)
		inf, _ := sim.Instance(tr.Host)
		switch {
		case tr.Hub:
			return "hub"
		case inf.Software == "mastodon":
			return "cached"
		}
		return inf.Family
	}
	first := map[string]int{}
	var hubLag, afterHub, earlyRead []time.Duration
	earlyLists, earlyUnread := 0, 0
	for _, i := range idx {
		tr, _ := sim.Truth(i)
		disc := discovered[tr.Host]
		var named, hub time.Time
		firstKind := ""
		type naming struct {
			l    int
			from time.Time
		}
		var ns []naming
		sim.NamedBy(i, end, func(l int, from time.Time) {
			ns = append(ns, naming{l, from})
			if named.IsZero() || from.Before(named) {
				named, firstKind = from, kind(l)
			}
			if k, _ := sim.Truth(l); k.Hub && (hub.IsZero() || from.Before(hub)) {
				hub = from
			}
		})
		first[firstKind]++
		if hub.IsZero() {
			continue
		}
		hubLag = append(hubLag, hub.Sub(named))
		afterHub = append(afterHub, disc.Sub(hub))
		for _, n := range ns {
			if k, _ := sim.Truth(n.l); k.Hub || !n.from.Before(hub) {
				continue
			}
			earlyLists++
			if at, ok := readAfter(sim.Host(n.l), n.from); ok && at.Before(disc.Add(time.Second)) {
				earlyRead = append(earlyRead, at.Sub(n.from))
			} else {
				earlyUnread++
			}
		}
	}
	q := func(d []time.Duration) string {
		if len(d) == 0 {
			return "-"
		}
		slices.Sort(d)
		return fmt.Sprintf("%.1f/%.1f", d[len(d)/2].Hours(), d[len(d)*95/100].Hours())
	}
	var kinds []string
	for k := range first {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var firsts []string
	for _, k := range kinds {
		firsts = append(firsts, fmt.Sprintf("%s %d", k, first[k]))
	}
	return fmt.Sprintf("the %d slowest (p95 and past): first named by %s; named → first hub naming p50/p95 %s h, that → discovered %s h; "+
		"%d other lists named them before a hub: %d read before the discovery (after naming: %s h), %d not\n",
		len(idx), strings.Join(firsts, ", "), q(hubLag), q(afterHub), earlyLists, len(earlyRead), q(earlyRead), earlyUnread)
}
