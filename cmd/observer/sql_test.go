package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/fediverse-observer/observer/fedisim"
	"github.com/fediverse-observer/observer/lockfile"
)

// The moments of the test crawls and of the queries over them.
const (
	crawl1 = "2026-01-01T12:00:00Z"
	crawl2 = "2026-01-01T13:00:00Z"
	asOf   = "2026-01-02T00:00:00Z"
)

// crawledSite is a simulated fediverse crawled twice: the seeds, then the
// hosts their peers lists named.
func crawledSite(t *testing.T) *simSite {
	t.Helper()
	s := newSimSite(t, fedisim.Config{})
	for _, now := range []string{crawl1, crawl2} {
		if code, out, errs := s.crawl(t, now, "--isolation", "none"); code != exitOK {
			t.Fatalf("crawl at %s: exit %d\n%s\n%s", now, code, out, errs)
		}
	}
	return s
}

func (s *simSite) data() string { return filepath.Join(s.dir, "data") }

// sql runs `observer sql` over the site's data at asOf.
func (s *simSite) sql(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runObserver(t, append([]string{"sql", "--config", s.config, "--data", s.data(), "--now", asOf}, args...)...)
}

// runObserverStdin is runObserver with a standard input.
func runObserverStdin(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func TestSQLFormatsAndDerivesFirst(t *testing.T) {
	s := crawledSite(t)
	const q = "SELECT host, software, users FROM live ORDER BY host LIMIT 5"

	code, out, errs := s.sql(t, "--format", "csv", q)
	if code != exitOK {
		t.Fatalf("csv: exit %d: %s", code, errs)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 6 || !slices.Equal(recs[0], []string{"host", "software", "users"}) {
		t.Fatalf("csv: want a header and 5 rows, got %q (%v)", out, err)
	}
	for _, r := range recs[1:] {
		info, ok := s.sim.Instance(r[0])
		if !ok || info.Software != r[1] {
			t.Errorf("csv row %q: the simulator runs %+v", r, info)
		}
	}

	code, out, errs = s.sql(t, "--format", "json", q)
	if code != exitOK {
		t.Fatalf("json: exit %d: %s", code, errs)
	}
	var objs []map[string]any
	if err := json.Unmarshal([]byte(out), &objs); err != nil || len(objs) != 5 {
		t.Fatalf("json: want 5 objects, got %q (%v)", out, err)
	}
	for i, o := range objs {
		if o["host"] != recs[i+1][0] || o["software"] != recs[i+1][1] {
			t.Errorf("json row %d = %v, csv row %q", i, o, recs[i+1])
		}
		if _, isNumber := o["users"].(float64); recs[i+1][2] != "" && !isNumber {
			t.Errorf("json row %d: users %v is not a number", i, o["users"])
		}
	}

	code, out, _ = s.sql(t, "--format", "markdown", q)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != exitOK || len(lines) != 7 || lines[0] != "| host | software | users |" || lines[1] != "| --- | --- | --- |" ||
		!strings.HasPrefix(lines[2], "| "+recs[1][0]+" | ") {
		t.Fatalf("markdown: exit %d:\n%s", code, out)
	}

	code, out, _ = s.sql(t, q) // table is the default
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != exitOK || len(lines) != 7 || strings.Join(strings.Fields(lines[0]), " ") != "host software users" ||
		strings.Trim(lines[1], "- ") != "" || !strings.HasPrefix(lines[2], recs[1][0]+" ") {
		t.Fatalf("table: exit %d:\n%s", code, out)
	}

	// The crawl derives before its checks, so only sql's own derivation
	// can have folded the second pass: every checked host has its checks
	// in the state.
	code, out, errs = s.sql(t, "--format", "csv",
		"SELECT (SELECT count(DISTINCT host) FROM checks) - (SELECT count(*) FROM state WHERE last_checked_at IS NOT NULL) AS missing, "+
			"(SELECT count(*) FROM checks WHERE pass_id = (SELECT max(pass_id) FROM checks)) AS last_pass")
	if code != exitOK || !strings.HasPrefix(out, "missing,last_pass\n0,") || strings.HasSuffix(out, ",0\n") {
		t.Fatalf("state does not fold every check: exit %d, %q %s", code, out, errs)
	}
}

func TestSQLQueryFromStdin(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runObserverStdin(t, "SELECT 6 * 7 AS answer\n", "sql", "--data", dir, "--format", "csv")
	if code != exitOK || out != "answer\n42\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = runObserverStdin(t, "  \n", "sql", "--data", dir)
	if code != exitUsage || !strings.Contains(errs, "no query") {
		t.Fatalf("empty stdin: exit %d, stderr %q", code, errs)
	}
	// Only comments, or a lone semicolon, is no query either.
	for _, q := range []string{"-- just a comment", "/* c */", ";"} {
		code, out, errs := runObserver(t, "sql", "--data", dir, q)
		if code != exitUsage || out != "" || !strings.Contains(errs, "no query") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", q, code, out, errs)
		}
	}
}

func TestSQLOnAnEmptyDataDirGivesEmptyResults(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ format, want string }{
		{"csv", "host,state\n"},
		{"json", "[]\n"},
		{"markdown", "| host | state |\n| --- | --- |\n"},
		{"table", "host  state\n----  -----\n"},
	} {
		code, out, errs := runObserver(t, "sql", "--data", dir, "--format", tc.format, "SELECT host, state FROM live")
		if code != exitOK || out != tc.want || errs != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", tc.format, code, out, errs, tc.want)
		}
	}
	for _, v := range []string{"checks", "discoveries", "passes", "state", "transitions", "live", "new", "stats", "stats_software", "stats_daily", "blocked"} {
		q := "SELECT count(*) AS n FROM " + v
		if v == "stats" { // two rows say the lists' current sizes: zero
			q += " WHERE value <> 0"
		}
		code, out, errs := runObserver(t, "sql", "--data", dir, "--format", "csv", q)
		if code != exitOK || out != "n\n0\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", v, code, out, errs)
		}
	}
	// A data directory that does not exist is a mistake, not an empty one.
	missing := filepath.Join(dir, "nope")
	if code, _, errs := runObserver(t, "sql", "--data", missing, "SELECT 1"); code != exitFailure || !strings.Contains(errs, missing) {
		t.Fatalf("missing data dir: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("sql created the missing data directory")
	}
}

// fileStamp is what must not change about a file.
type fileStamp struct {
	size int64
	mod  time.Time
}

func stampTree(t *testing.T, root string) map[string]fileStamp {
	t.Helper()
	out := map[string]fileStamp{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// A directory's own times change with what is made and
			// removed in it; only whether it is there matters.
			out[p] = fileStamp{}
			return nil
		}
		if d.Name() == ".lock" {
			// A lock file holds its holder's pid while held: it is
			// written by every run, and records nothing.
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fileStamp{info.Size(), info.ModTime()}
		return nil
	})
	return out
}

func TestSQLRefusesWritesAndLeavesTheSnapshotsAlone(t *testing.T) {
	s := crawledSite(t)
	if code, _, errs := s.sql(t, "SELECT 1"); code != exitOK { // the derivation, once
		t.Fatalf("exit %d: %s", code, errs)
	}
	before := stampTree(t, s.data())
	evil := filepath.Join(s.data(), "checks", "date=2026-01-01", "evil.parquet")
	for _, q := range []string{
		"COPY (SELECT * FROM checks) TO '" + evil + "' (FORMAT parquet)",
		"COPY (SELECT * FROM checks) TO '" + evil + "' (FORMAT parquet); SELECT 1",
		"SELECT 1; COPY (SELECT * FROM checks) TO '" + evil + "' (FORMAT parquet)",
		"EXPLAIN ANALYZE COPY (SELECT * FROM checks) TO '" + evil + "' (FORMAT parquet)",
		"DELETE FROM checks",
		"CREATE TABLE x AS SELECT 1",
		"ATTACH '" + filepath.Join(s.data(), "evil.db") + "'",
		"SET enable_external_access = true",
		"SELECT * FROM read_csv('/etc/passwd')",
		// Planning it made the directory before its type was seen.
		"EXPORT DATABASE '" + filepath.Join(s.data(), "checks", "date=2099-01-01") + "'",
	} {
		code, out, errs := s.sql(t, q)
		if code != exitFailure || out != "" || errs == "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want a refusal", q, code, out, errs)
		}
	}
	after := stampTree(t, s.data())
	for p, st := range after {
		if was, ok := before[p]; !ok || was != st {
			t.Errorf("%s appeared or changed", p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s disappeared", p)
		}
	}
}

func TestSQLBadQueryPrintsDuckDBsMessage(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runObserver(t, "sql", "--data", dir, "SELECT no_such_column FROM live")
	if code != exitFailure || out != "" || !strings.HasPrefix(errs, "observer sql: ") ||
		!strings.Contains(errs, "Binder Error") || !strings.Contains(errs, "no_such_column") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = runObserver(t, "sql", "--data", dir, "SELEC 1")
	if code != exitFailure || !strings.Contains(errs, "Parser Error") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

func TestSQLBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "xml", "SELECT 1"}, "xml"},
		{[]string{"SELECT", "1"}, "quote the query"},
		{[]string{"--views", "SELECT 1"}, "-views"},
		{[]string{"--now", "soon", "SELECT 1"}, "soon"},
	} {
		code, _, errs := runObserver(t, append([]string{"sql", "--data", dir}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errs)
		}
	}
}

func TestSQLViewsLoadIntoAFreshDuckDB(t *testing.T) {
	s := crawledSite(t)
	blocked := s.sim.Seeds(1)[0]
	os.WriteFile(filepath.Join(s.dir, "blocklist.txt"), []byte("# test\n"+blocked+"\n"), 0o644)
	os.WriteFile(s.config, []byte("[crawl]\nseeds = \"seeds.txt\"\nblocklist = \"blocklist.txt\"\n"), 0o644)

	if code, out, _ := s.sql(t, "--format", "csv", "SELECT count(*) AS n FROM state WHERE host = '"+blocked+"' AND last_alive_at IS NOT NULL"); out != "n\n1\n" {
		t.Fatalf("the seed %s was never alive (exit %d, %q): the blocklist test would prove nothing", blocked, code, out)
	}
	code, script, errs := s.sql(t, "--views")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	names := []string{"checks", "discoveries", "passes", "state", "transitions", "blocked", "live", "new", "stats_software", "stats_daily", "stats"}
	for _, v := range names {
		if !strings.Contains(script, "CREATE OR REPLACE VIEW "+v+" AS") {
			t.Errorf("no view %s in:\n%s", v, script)
		}
	}
	db := loadViewsScript(t, script)
	for _, v := range names {
		var n int64
		if err := db.QueryRow("SELECT count(*) FROM " + v).Scan(&n); err != nil {
			t.Errorf("%s: %v", v, err)
			continue
		}
		code, out, _ := s.sql(t, "--format", "csv", "SELECT count(*) AS n FROM "+v)
		if want := "n\n" + strconv.FormatInt(n, 10) + "\n"; code != exitOK || out != want {
			t.Errorf("%s: the script's view counts %d rows, observer sql says %q", v, n, out)
		}
	}
	var listed int
	db.QueryRow("SELECT count(*) FROM live WHERE host = ?", blocked).Scan(&listed)
	if listed != 0 {
		t.Errorf("the blocklisted %s is listed as live", blocked)
	}
	if code, out, _ := s.sql(t, "--format", "csv", "SELECT entry FROM blocked"); code != exitOK || out != "entry\n"+blocked+"\n" {
		t.Errorf("blocked view: %q", out)
	}
}

// A crawl holds data/.lock for its whole pass; sql derives all the same:
// derivations take their own lock, and fold only complete files.
func TestSQLWorksWhileACrawlHoldsTheDataLock(t *testing.T) {
	s := crawledSite(t)
	l, err := lockfile.Acquire(filepath.Join(s.data(), ".lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	code, out, errs := s.sql(t, "--format", "csv", "SELECT count(*) > 0 AS ok FROM state WHERE last_checked_at IS NOT NULL")
	if code != exitOK || out != "ok\ntrue\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// A data directory sql cannot write (another user's, a read-only mount) is
// queried as of its last derivation, with a warning.
func TestSQLOnAReadOnlyDataDirAnswersFromTheLastDerivation(t *testing.T) {
	s := newSimSite(t, fedisim.Config{})
	data := s.data()
	os.MkdirAll(data, 0o755)
	mountTmpfs(t, data, "16m")
	// The seeds added by hand: a first pass from the seed list, which
	// would record them, does not derive.
	if code, out, errs := runObserver(t, append([]string{"add", "--quiet", "--config", s.config, "--data", data, "--now", crawl1}, s.sim.Seeds(3)...)...); code != exitOK {
		t.Fatalf("add: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := s.crawl(t, crawl1, "--isolation", "none"); code != exitOK {
		t.Fatalf("crawl: exit %d\n%s\n%s", code, out, errs)
	}
	// The crawl derived before its checks: the state knows the seeds only
	// as discovered.
	if out, err := exec.Command("mount", "-o", "remount,ro", data).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v: %s", err, out)
	}
	code, out, errs := s.sql(t, "--format", "csv", "SELECT count(*) AS hosts FROM state")
	if code != exitOK || out != "hosts\n3\n" || !strings.Contains(errs, "last derivation") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// With nothing derived yet, a read-only data directory has no answer to
// give: an empty state would read as "no hosts", which is wrong.
func TestSQLOnAReadOnlyDataDirNeverDerivedIsAnError(t *testing.T) {
	s := newSimSite(t, fedisim.Config{})
	data := s.data()
	os.MkdirAll(data, 0o755)
	mountTmpfs(t, data, "16m")
	if code, out, errs := s.crawl(t, crawl1, "--isolation", "none"); code != exitOK {
		t.Fatalf("crawl: exit %d\n%s\n%s", code, out, errs)
	}
	if err := os.RemoveAll(filepath.Join(data, "derived")); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", data).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v: %s", err, out)
	}
	code, out, errs := s.sql(t, "--format", "csv", "SELECT count(*) AS hosts FROM state")
	if code != exitFailure || out != "" || !strings.Contains(errs, "no earlier derivation") || !strings.Contains(errs, data) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want a failure saying nothing was derived", code, out, errs)
	}
}

// TestSQLFullRederivesFromScratch: --full writes a new derivation over every
// snapshot, with the same answer; without it, nothing new means nothing is
// derived again.
func TestSQLFullRederivesFromScratch(t *testing.T) {
	s := crawledSite(t)
	generation := func() int {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(s.data(), "derived", "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Generation int `json:"generation"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m.Generation
	}
	const q = "SELECT state, count(*) FROM state GROUP BY ALL ORDER BY ALL"
	code, before, errs := s.sql(t, "--format", "csv", q)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	g := generation()
	if code, _, errs := s.sql(t, "--format", "csv", q); code != exitOK || generation() != g {
		t.Fatalf("nothing new, yet generation %d became %d (exit %d: %s)", g, generation(), code, errs)
	}
	code, after, errs := s.sql(t, "--full", "--format", "csv", q)
	if code != exitOK || generation() != g+1 {
		t.Fatalf("--full: exit %d, generation %d after %d: %s", code, generation(), g, errs)
	}
	if after != before {
		t.Fatalf("full and incremental derivations differ:\n%s\n%s", before, after)
	}
}

// On a data directory with no snapshots yet, the views script still loads
// into a fresh DuckDB: every view is there, empty, with its columns.
func TestSQLViewsOfAnEmptyDataDirLoadIntoAFreshDuckDB(t *testing.T) {
	data := t.TempDir()
	code, script, errs := runObserver(t, "sql", "--data", data, "--views")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	db := loadViewsScript(t, script)
	for _, q := range []string{
		"SELECT count(*) FROM checks WHERE outcome = 'alive' AND peers_not_modified",
		"SELECT count(*) FROM discoveries WHERE via = 'seed'",
		"SELECT count(*) FROM passes WHERE checked > 0",
		"SELECT count(*) FROM live", "SELECT count(*) FROM new", "SELECT count(*) FROM stats WHERE value > 0",
	} {
		var n int64
		if err := db.QueryRow(q).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows, %v", q, n, err)
		}
	}
}

// loadViewsScript runs an `observer sql --views` script in a fresh
// in-memory DuckDB, as a user of the DuckDB CLI would.
func loadViewsScript(t *testing.T, script string) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // one connection: its time zone is the script's
	t.Cleanup(func() { db.Close() })
	// A client elsewhere than UTC: the script makes its times UTC, as the
	// data's and observer sql's are.
	if _, err := db.Exec("SET TimeZone = 'America/New_York'"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(script); err != nil {
		t.Fatalf("the script does not load: %v\n%s", err, script)
	}
	var tz string
	if err := db.QueryRow("SELECT current_setting('TimeZone')").Scan(&tz); err != nil || tz != "UTC" {
		t.Fatalf("time zone after the script: %q, %v", tz, err)
	}
	return db
}

// state.memory_limit bounds DuckDB while it derives and answers, and the
// derivation's own setting (no insertion order) does not leak into the
// query.
func TestSQLRunsUnderTheConfiguredMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "observer.toml")
	if err := os.WriteFile(cfg, []byte("[state]\nmemory_limit = \"300MB\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	q := "SELECT current_setting('memory_limit') AS m, current_setting('preserve_insertion_order') AS p"
	code, out, errs := runObserver(t, "sql", "--config", cfg, "--data", dir, "--format", "csv", q)
	if code != exitOK || out != "m,p\n286.1 MiB,true\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "derived", "manifest.json")); err != nil {
		t.Fatalf("sql did not derive: %v", err)
	}
	// Without one, the limit is the default, not DuckDB's 80% of the
	// machine's memory.
	if err := os.WriteFile(cfg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runObserver(t, "sql", "--config", cfg, "--data", dir, "--format", "csv", q)
	if code != exitOK || out != "m,p\n1.3 GiB,true\n" {
		t.Fatalf("the default limit: exit %d, stdout %q, stderr %q; want 1.5GB (1.3 GiB)", code, out, errs)
	}

	if err := os.WriteFile(cfg, []byte("[state]\nmemory_limit = \"lots\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runObserver(t, "sql", "--config", cfg, "--data", dir, q)
	if code == exitOK || !strings.Contains(errs, "state.memory_limit") || !strings.Contains(errs, cfg) {
		t.Fatalf("a bad limit: exit %d, stderr %q", code, errs)
	}
}
