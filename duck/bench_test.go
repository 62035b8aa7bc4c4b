package duck_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/fediverse-observer/observer/duck"
)

const (
	benchHosts = 1_000_000
	benchDays  = 30
	// benchMemoryLimit is DuckDB's memory_limit in the benchmarks: the
	// process's peak must stay under 1.5 GiB, and DuckDB is most of it.
	benchMemoryLimit = "1GB"
)

// benchCheckSQL generates one day of synthetic checks: 1,000,000 hosts, of
// which 85% always alive, 8% always failing, 5% flapping, 1% alive then
// moving then moved, 1% alive then opted out; the last 100,000 are born
// through the month (first checked on their birth day). Each check is at a
// pseudo-random time of its day, so that the host-sorted files hold times in
// no order, as a crawl pass's do.
const benchCheckSQL = `
SELECT
    'h' || lpad(i::VARCHAR, 7, '0') || '.example' AS host,
    (TIMESTAMP '2026-01-01' + INTERVAL (%[1]d) DAY + to_microseconds((hash(i, %[1]d) %% 86400000000)::BIGINT))::TIMESTAMP AS checked_at,
    (CASE WHEN i %% 100 < 85 THEN 'alive'
         WHEN i %% 100 < 93 THEN 'unreachable'
         WHEN i %% 100 < 98 THEN CASE WHEN (i * 31 + %[1]d * 17) %% 3 = 0 THEN 'http_error' ELSE 'alive' END
         WHEN i %% 100 = 98 THEN CASE WHEN %[1]d < 10 THEN 'alive' WHEN %[1]d < 20 THEN 'moving' ELSE 'moved' END
         ELSE CASE WHEN %[1]d < 15 THEN 'alive' ELSE 'opted_out' END END)::VARCHAR AS outcome,
    NULL::VARCHAR AS error,
    200::INTEGER AS http_status,
    (['mastodon', 'pleroma', 'misskey', 'lemmy', 'peertube'])[i %% 5 + 1]::VARCHAR AS software,
    ('4.' || (i %% 7)::VARCHAR || '.' || (%[1]d %% 3)::VARCHAR)::VARCHAR AS version,
    '2.1'::VARCHAR AS nodeinfo_version,
    (i %% 5000)::BIGINT AS users,
    (i %% 300)::BIGINT AS active_month,
    (i %% 900)::BIGINT AS active_halfyear,
    (i * 7 %% 100000)::BIGINT AS local_posts,
    (i %% 2 = 0)::BOOLEAN AS open_registrations,
    ('Instance number ' || i::VARCHAR)::VARCHAR AS name,
    ('A synthetic instance for the derivation benchmark, number ' || i::VARCHAR)::VARCHAR AS description,
    (CASE WHEN i %% 100 = 98 AND %[1]d >= 10 THEN 'new-h' || lpad(i::VARCHAR, 7, '0') || '.example' END)::VARCHAR AS moved_to,
    ((i + %[1]d) %% 7 = 0)::BOOLEAN AS peers_fetched,
    0::BIGINT AS peers_count,
    0::BIGINT AS new_peers_count,
    (i %% 1000)::BIGINT AS duration_ms,
    'bench-' || lpad('%[1]d', 2, '0') AS pass_id,
    (CASE WHEN (i + %[1]d) %% 7 = 0 AND i %% 5 IN (0, 1) THEN 'W/"' || i::VARCHAR || '-' || %[1]d::VARCHAR || '"' END)::VARCHAR AS peers_etag,
    NULL::VARCHAR AS peers_last_modified,
    false AS peers_not_modified
FROM range(%[2]d) t(i)
WHERE i < 900000 OR (i - 900000) %% 30 <= %[1]d
ORDER BY host`

const benchDiscoverySQL = `
SELECT
    'h' || lpad(i::VARCHAR, 7, '0') || '.example' AS host,
    (TIMESTAMP '2026-01-01' + INTERVAL (CASE WHEN i < 900000 THEN 0 ELSE (i - 900000) %% 30 END) DAY)::TIMESTAMP AS discovered_at,
    'seed'::VARCHAR AS via
FROM range(%d) t(i)
ORDER BY host`

// benchData returns a directory of synthetic snapshot files, generated once
// and kept under the system's temporary directory so later runs skip it.
func benchData(b *testing.B) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("observer-bench-%d-%d-v3", benchHosts, benchDays))
	done := filepath.Join(dir, "complete")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	b.Logf("generating %d hosts × %d days into %s (once)", benchHosts, benchDays, dir)
	os.RemoveAll(dir)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	copyTo := func(query, path string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Exec(fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet, %s)", query, path, duck.SnapshotWriterOptions)); err != nil {
			b.Fatal(err)
		}
	}
	for d := range benchDays {
		copyTo(fmt.Sprintf(benchCheckSQL, d, benchHosts), benchDayFile(dir, duck.ChecksDir, d))
	}
	copyTo(fmt.Sprintf(benchDiscoverySQL, benchHosts), benchDayFile(dir, duck.DiscoveriesDir, 0))
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

func benchDayFile(root, kind string, d int) string {
	return filepath.Join(root, kind, fmt.Sprintf("date=2026-01-%02d", d+1), "bench.parquet")
}

// benchDir makes a fresh data directory whose snapshot files are symbolic
// links to the first days of the generated data.
func benchDir(b *testing.B, src string, days int) string {
	b.Helper()
	dir := b.TempDir()
	link(b, benchDayFile(src, duck.DiscoveriesDir, 0), benchDayFile(dir, duck.DiscoveriesDir, 0))
	for d := range days {
		link(b, benchDayFile(src, duck.ChecksDir, d), benchDayFile(dir, duck.ChecksDir, d))
	}
	return dir
}

func link(b *testing.B, from, to string) {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink(from, to); err != nil {
		b.Fatal(err)
	}
}

// resetPeakRSS makes the kernel's peak resident set size start again from
// the current size, so setup does not count.
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSSBytes is the process's peak resident set size (VmHWM).
func peakRSSBytes(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb * 1024
		}
	}
	b.Fatal("no VmHWM")
	return 0
}

// benchStoreOptions logs each derivation step when OBSERVER_BENCH_LOG is
// set, to see where the time goes.
// cpuSeconds is the process's user and system CPU time so far: on a shared
// machine it varies less than the wall clock.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func benchStoreOptions() duck.Options {
	if os.Getenv("OBSERVER_BENCH_LOG") == "" {
		return duck.Options{}
	}
	return duck.Options{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

func benchOptions(full bool) duck.DeriveOptions {
	limit := benchMemoryLimit
	if v := os.Getenv("OBSERVER_BENCH_MEMORY_LIMIT"); v != "" {
		limit = v // for exploring the trade-off
	}
	o := duck.DeriveOptions{Rules: defaultRules, MemoryLimit: limit, Full: full}
	if os.Getenv("OBSERVER_BENCH_WINDOW_ONLY") != "" {
		o = duck.WindowOnly(o) // to measure what the windowless folds save
	}
	return o
}

// BenchmarkDeriveFull derives 1,000,000 hosts × 30 days from scratch.
func BenchmarkDeriveFull(b *testing.B) {
	src := benchData(b)
	ctx := context.Background()
	dir := benchDir(b, src, benchDays)
	s, err := duck.Open(ctx, dir, benchStoreOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var rep duck.DeriveReport
	resetPeakRSS()
	cpu := cpuSeconds()
	b.ResetTimer()
	for b.Loop() {
		if rep, err = s.Deriver.Derive(ctx, benchOptions(true)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
	b.ReportMetric(peakRSSBytes(b)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(rep.Hosts), "hosts")
	b.ReportMetric(float64(rep.Transitions), "transitions")
}

// BenchmarkDeriveIncrementalDay folds day 30 onto the state of days 1-29.
// The starting state is built as production builds it, one day's files at a
// time, so this measures the incremental step even when a full derivation
// of 29 days would not fit the memory limit.
func BenchmarkDeriveIncrementalDay(b *testing.B) {
	src := benchData(b)
	ctx := context.Background()
	dir, saved := benchDays29(b, ctx, src)
	link(b, benchDayFile(src, duck.ChecksDir, benchDays-1), benchDayFile(dir, duck.ChecksDir, benchDays-1))
	var rep duck.DeriveReport
	resetPeakRSS()
	var cpu float64 // of the timed steps only, not of restoring the state
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		restoreDerived(b, dir, saved)
		b.StartTimer()
		before := cpuSeconds()
		// A fresh Store, as in production: a crawl derives in a new
		// __derive process, and a build opens its own Store.
		s, err := duck.Open(ctx, dir, benchStoreOptions())
		if err != nil {
			b.Fatal(err)
		}
		rep, err = s.Deriver.Derive(ctx, benchOptions(false))
		s.Close()
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuSeconds() - before
		if rep.Full || rep.Files != 1 {
			b.Fatalf("not one incremental day: %+v", rep)
		}
	}
	b.StopTimer()
	b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
	b.ReportMetric(peakRSSBytes(b)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(rep.Transitions), "transitions")
}

// benchPasses and benchPassMod shape the million-instance model's passes
// (cmd/observer's latency model): a pass every two hours, each checking one
// host in benchPassMod (6.25 %) of a million, a different sixteenth each
// time, so that every pass changes hosts the ones before it did not.
const (
	benchPasses  = 12
	benchPassMod = 16
)

// benchPassCheckSQL is pass %[1]d of day 30: the checks of day 30
// (benchCheckSQL, so the same mix of outcomes) of one host in benchPassMod,
// at pseudo-random times of the pass's two hours.
const benchPassCheckSQL = `
SELECT * REPLACE (
    (TIMESTAMP '2026-01-30' + to_microseconds((%[1]d * 7200000000 + hash(host, %[1]d) %% 7200000000)::BIGINT))::TIMESTAMP AS checked_at,
    'pass-' || lpad('%[1]d', 2, '0') AS pass_id)
FROM (%[2]s)
WHERE hash(host) %% %[3]d = %[1]d
ORDER BY host`

// benchPassDiscoverySQL is what pass %[1]d discovers: 2,000 hosts never
// seen, named by hosts it checked.
const benchPassDiscoverySQL = `
SELECT 'p' || lpad('%[1]d', 2, '0') || '-' || lpad(i::VARCHAR, 5, '0') || '.example' AS host,
    (TIMESTAMP '2026-01-30' + to_microseconds((%[1]d * 7200000000 + i * 3600000)::BIGINT))::TIMESTAMP AS discovered_at,
    'h' || lpad((i * 499)::VARCHAR, 7, '0') || '.example' AS via
FROM range(2000) t(i)
ORDER BY host`

// benchPassFile is pass p's file of a snapshot kind under root.
func benchPassFile(root, kind string, p int) string {
	return filepath.Join(root, kind, "date=2026-01-30", fmt.Sprintf("pass-%02d.parquet", p))
}

// benchPassData writes the passes' snapshot files beside benchData's, once.
func benchPassData(b *testing.B, src string) {
	b.Helper()
	done := filepath.Join(src, "passes-complete")
	if _, err := os.Stat(done); err == nil {
		return
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for p := range benchPasses {
		for _, f := range []struct{ query, path string }{
			{fmt.Sprintf(benchPassCheckSQL, p, fmt.Sprintf(benchCheckSQL, benchDays-1, benchHosts), benchPassMod), benchPassFile(src, duck.ChecksDir, p)},
			{fmt.Sprintf(benchPassDiscoverySQL, p), benchPassFile(src, duck.DiscoveriesDir, p)},
		} {
			if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
				b.Fatal(err)
			}
			if _, err := db.Exec(fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet, %s)", f.query, f.path, duck.SnapshotWriterOptions)); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkDerivePasses folds a day of the million-instance model's passes
// (benchPasses of them, each checking 6.25 % of the hosts and discovering
// 2,000 new ones) onto the state of days 1-29, one pass at a time, and after
// each reads the next pass's due list, as the model does: its figures are
// per pass (derive-s/pass and cpu-s/pass for the derivation, due-s/pass
// and due-cpu-s/pass for the due list). It shares
// BenchmarkDeriveIncrementalDay's starting state (benchDays29).
func BenchmarkDerivePasses(b *testing.B) {
	src := benchData(b)
	benchPassData(b, src)
	ctx := context.Background()
	dir, saved := benchDays29(b, ctx, src)
	var passes, wall, cpu, due, dueCPU float64
	var rep duck.DeriveReport
	resetPeakRSS()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		for p := range benchPasses {
			for _, kind := range []string{duck.ChecksDir, duck.DiscoveriesDir} {
				os.Remove(benchPassFile(dir, kind, p))
			}
		}
		restoreDerived(b, dir, saved)
		b.StartTimer()
		for p := range benchPasses {
			for _, kind := range []string{duck.ChecksDir, duck.DiscoveriesDir} {
				link(b, benchPassFile(src, kind, p), benchPassFile(dir, kind, p))
			}
			start, before := time.Now(), cpuSeconds()
			// A fresh Store for each pass, as the crawl's __derive child.
			s, err := duck.Open(ctx, dir, benchStoreOptions())
			if err != nil {
				b.Fatal(err)
			}
			rep, err = s.Deriver.Derive(ctx, duck.WithRetiredGrace(benchOptions(false), 0))
			if err != nil {
				s.Close()
				b.Fatal(err)
			}
			if rep.Full || rep.Files != 2 {
				s.Close()
				b.Fatalf("pass %d: not one incremental pass: %+v", p, rep)
			}
			wall, cpu = wall+time.Since(start).Seconds(), cpu+cpuSeconds()-before
			// The next pass's due list, two hours on.
			start, before = time.Now(), cpuSeconds()
			now := time.Date(2026, 1, 30, 2*(p+1), 0, 0, 0, time.UTC)
			var n int
			err = s.Reader.CreateViews(ctx, duck.ViewParams{Now: now, Rules: defaultRules})
			if err == nil {
				err = s.Reader.DueHosts(ctx, now, duck.PeersSchedule{Interval: 7 * 24 * time.Hour, MinInterval: 24 * time.Hour}, func(duck.DueHost) { n++ })
			}
			s.Close()
			if err != nil {
				b.Fatal(err)
			}
			due, dueCPU = due+time.Since(start).Seconds(), dueCPU+cpuSeconds()-before
			passes++
		}
	}
	b.StopTimer()
	b.ReportMetric(wall/passes, "derive-s/pass")
	b.ReportMetric(cpu/passes, "cpu-s/pass")
	b.ReportMetric(due/passes, "due-s/pass")
	b.ReportMetric(dueCPU/passes, "due-cpu-s/pass")
	b.ReportMetric(peakRSSBytes(b)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(rep.Hosts), "hosts")
}

// benchDays29 makes a data directory of days 1-29 and returns it with the
// directory that keeps its derivation, derived then if it is not there.
// OBSERVER_BENCH_STATE names one that outlives the run, for alternating two
// builds of a step without building it (three minutes) each time.
func benchDays29(b *testing.B, ctx context.Context, src string) (dir, saved string) {
	dir = benchDir(b, src, 0)
	saved = os.Getenv("OBSERVER_BENCH_STATE")
	if saved == "" {
		saved = filepath.Join(b.TempDir(), "derived")
	}
	if _, err := os.Stat(saved); err == nil {
		for d := range benchDays - 1 {
			link(b, benchDayFile(src, duck.ChecksDir, d), benchDayFile(dir, duck.ChecksDir, d))
		}
	} else {
		buildDays(b, ctx, src, dir, saved)
	}
	return dir, saved
}

// restoreDerived puts the derivation kept in saved back as dir's.
func restoreDerived(b *testing.B, dir, saved string) {
	derived := filepath.Join(dir, duck.DerivedDir)
	if err := os.RemoveAll(derived); err != nil {
		b.Fatal(err)
	}
	if err := os.CopyFS(derived, os.DirFS(saved)); err != nil {
		b.Fatal(err)
	}
	// The copy's writeback is the setup's, not the step's.
	syscall.Sync()
}

// buildDays derives days 1-29 into dir one day at a time, as production
// does, and keeps the derivation in saved.
func buildDays(b *testing.B, ctx context.Context, src, dir, saved string) {
	s, err := duck.Open(ctx, dir, benchStoreOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for d := range benchDays - 1 {
		link(b, benchDayFile(src, duck.ChecksDir, d), benchDayFile(dir, duck.ChecksDir, d))
		// A crawl derives once or twice a day, so the files a step retires
		// are gone long before the next step's; here the steps follow each
		// other at once, and keeping every retired state (an hour's worth)
		// would put a gigabyte of files, copied back before every timed
		// step, in its way.
		rep, err := s.Deriver.Derive(ctx, duck.WithRetiredGrace(benchOptions(false), 0))
		if err != nil {
			b.Fatalf("day %d: %v", d+1, err)
		}
		b.Logf("setup: day %d folded in %v", d+1, rep.Duration)
		// The first step folds the discoveries too, with nothing to carry.
		if d > 0 && (rep.Full || rep.Files != 1) {
			b.Fatalf("day %d: not one incremental day: %+v", d+1, rep)
		}
	}
	if err := os.CopyFS(saved, os.DirFS(filepath.Join(dir, duck.DerivedDir))); err != nil {
		b.Fatal(err)
	}
}

// benchBlocklistHosts are 1,000,000 host names of two to four labels under
// 100,000 domains.
const benchBlocklistHosts = `SELECT CASE i % 4
    WHEN 0 THEN 'd' || (i % 100000)::VARCHAR || '.example'
    WHEN 1 THEN 'h' || i::VARCHAR || '.d' || (i % 100000)::VARCHAR || '.example'
    WHEN 2 THEN 'a.h' || i::VARCHAR || '.d' || (i % 100000)::VARCHAR || '.social'
    ELSE 'h' || i::VARCHAR || '.example.co.uk' END AS host
FROM range(1000000) t(i)`

// BenchmarkBlocklist matches 1,000,000 hosts (is_blocked, as the due list
// and the published lists do) against blocklists of 20 and 1,000 entries,
// half "*.domain" entries, each naming a domain that 10 of the hosts are,
// half exact hosts.
func BenchmarkBlocklist(b *testing.B) {
	for _, n := range []int{20, 1000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) { benchBlocklist(b, n) })
	}
}

func benchBlocklist(b *testing.B, entries int) {
	ctx := context.Background()
	s, err := duck.Open(ctx, b.TempDir(), duck.Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var list []string
	for j := range entries / 2 {
		// d0.example, d200.example, …: the hosts i with i % 100000 = j*200
		// (i % 4 = 0, so each is the domain itself).
		list = append(list, fmt.Sprintf("*.d%d.example", j*200))
		// One host with i % 4 = 1 each.
		k := 4*j + 1
		list = append(list, fmt.Sprintf("h%d.d%d.example", k, k%100000))
	}
	if err := s.Reader.CreateBlocklistViews(ctx, list); err != nil {
		b.Fatal(err)
	}
	cpu := cpuSeconds()
	var blocked int64
	for b.Loop() {
		rows, err := s.Reader.Query(ctx, "SELECT count(*) FROM ("+benchBlocklistHosts+") WHERE is_blocked(host)")
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
			v, err := rows.Values()
			if err != nil {
				b.Fatal(err)
			}
			blocked = v[0].(int64)
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
		rows.Close()
	}
	b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
	if want := int64(entries/2*10 + entries/2); blocked != want {
		b.Fatalf("%d hosts blocked, want %d", blocked, want)
	}
}
