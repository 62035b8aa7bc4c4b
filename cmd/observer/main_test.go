package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/fedisim"
	"github.com/fediverse-observer/observer/lockfile"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// simSite is a small simulated fediverse and a site directory set up to crawl it.
type simSite struct {
	sim    *fedisim.Sim
	dir    string // site directory: observer.toml, seeds.txt, ca.pem, data/
	config string
	net    []string // the crawler flags that reach the simulator
}

func newSimSite(t *testing.T, cfg fedisim.Config) *simSite {
	t.Helper()
	if cfg.Seed == 0 {
		cfg.Seed = 7
	}
	if cfg.Instances == 0 {
		cfg.Instances = 300
	}
	sim := testsupport.StartSim(t, cfg)
	dir := t.TempDir()
	ca := testsupport.SimCA(t, sim, dir)
	seeds := strings.Join(sim.Seeds(3), "\n") + "\n"
	os.WriteFile(filepath.Join(dir, "seeds.txt"), []byte(seeds), 0o644)
	config := filepath.Join(dir, "observer.toml")
	// Discoveries wait for the next pass and every peers list for
	// peers_interval. The tests on this site are about other things
	// (snapshots, clocks, faults, connect-to rules, politeness) and count
	// on a first pass that checks the seeds alone and a second that checks
	// what they named: with the defaults a first pass checks them all
	// (TestCrawlWritesSnapshotsThatDuckDBReads, TestCrawlWithManyConnectToRules
	// and TestWallClockChecksAreNotDatedBeforeTheirDerivation fail so). The
	// defaults are what firstpass_test.go, spread_test.go and the latency
	// benchmark run, and the earned rate has tests in crawl and duck.
	os.WriteFile(config, []byte("[crawl]\nseeds = \"seeds.txt\"\nconcurrency = 8\ndiscovered_checks = 0\npeers_min_interval = \"7d\"\n"), 0o644)
	return &simSite{sim: sim, dir: dir, config: config, net: simFlags(sim, ca)}
}

// simFlags are the crawler flags that reach sim, each host at its own
// address among the simulator's (fedisim.Sim.ConnectToEach), so that
// per-address politeness meets a world of shared addresses, not one
// address for every host.
func simFlags(sim *fedisim.Sim, ca string) []string {
	var flags []string
	for _, rule := range sim.ConnectToEach() {
		flags = append(flags, "--connect-to", rule)
	}
	return append(flags, "--allow-addr", "127.0.0.0/8", "--ca-cert", ca)
}

// runObserver runs one command in-process and returns its exit code and output.
func runObserver(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func (s *simSite) crawl(t *testing.T, now string, extra ...string) (int, string, string) {
	args := append([]string{"crawl", "--quiet", "--config", s.config, "--data", filepath.Join(s.dir, "data"), "--now", now}, s.net...)
	return runObserver(t, append(args, extra...)...)
}

func (s *simSite) query(t testing.TB, q string) []string {
	t.Helper()
	ctx := context.Background()
	store, err := duck.Open(ctx, filepath.Join(s.dir, "data"), duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Reader.CreateViews(ctx, duck.ViewParams{Now: time.Now(), Rules: config.Default().Rules()}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, vals := range testsupport.Rows(t, store.Reader, q) {
		var parts []string
		for _, v := range vals {
			parts = append(parts, strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(jsonText(v), "\"", ""), "\n", " ")))
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestCrawlWritesSnapshotsThatDuckDBReads(t *testing.T) {
	s := newSimSite(t, fedisim.Config{})
	code, out, errs := s.crawl(t, "2026-01-01T12:00:00Z")
	if code != exitOK {
		t.Fatalf("first pass exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if !strings.Contains(out, "3 checks") {
		t.Fatalf("first pass should check the 3 seeds only, got:\n%s", out)
	}
	// The seeds' peers lists named other hosts: the second pass checks them.
	code, out, errs = s.crawl(t, "2026-01-01T13:00:00Z")
	if code != exitOK {
		t.Fatalf("second pass exit %d\n%s\n%s", code, out, errs)
	}
	got := s.query(t, "SELECT count(*), count(DISTINCT host), count(DISTINCT pass_id) FROM checks")
	fields := strings.Fields(got[0])
	checks, _ := strconv.Atoi(fields[0])
	if checks < 50 || fields[0] != fields[1] || fields[2] != "2" {
		t.Fatalf("checks, hosts, passes = %v; want many hosts each checked once over 2 passes", fields)
	}
	// Every checked host was discovered first, and the seeds came from the list.
	if got := s.query(t, "SELECT count(*) FROM checks WHERE host NOT IN (SELECT host FROM discoveries)"); got[0] != "0" {
		t.Fatalf("%s checked hosts were never recorded as discoveries", got[0])
	}
	if got := s.query(t, "SELECT count(*) FROM discoveries WHERE via = 'seed'"); got[0] != "3" {
		t.Fatalf("seed discoveries = %s, want 3", got[0])
	}
	// What the crawler recorded matches the simulator's ground truth.
	for _, row := range s.query(t, "SELECT host, software FROM checks WHERE outcome = 'alive' LIMIT 20") {
		host, software, _ := strings.Cut(row, " ")
		info, ok := s.sim.Instance(host)
		if !ok || info.Software != software {
			t.Errorf("%s: recorded software %q, simulator runs %+v", host, software, info.Software)
		}
	}
	if got := s.query(t, "SELECT count(*) FROM passes WHERE checked > 0 AND cut_short IS NULL"); got[0] != "2" {
		t.Fatalf("passes rows = %s, want 2", got[0])
	}
	files, _ := filepath.Glob(filepath.Join(s.dir, "data", "checks", "date=2026-01-01", "*.parquet"))
	if len(files) != 2 {
		t.Fatalf("want one checks file per pass in the date partition, got %v", files)
	}
	if tmp, _ := os.ReadDir(filepath.Join(s.dir, "data", "tmp")); len(tmp) != 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
}

func TestCrawlBudgetCutsShortWithItsOwnExitCode(t *testing.T) {
	s := newSimSite(t, fedisim.Config{})
	s.crawl(t, "2026-01-01T12:00:00Z")
	code, out, errs := s.crawl(t, "2026-01-01T13:00:00Z", "--max-checks", "5")
	if code != exitCutShort {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitCutShort, out, errs)
	}
	if !strings.Contains(errs, "left for a later pass (max_checks reached)") {
		t.Fatalf("stderr does not say why: %q", errs)
	}
	if got := s.query(t, "SELECT checked || ' ' || cut_short FROM passes WHERE cut_short IS NOT NULL"); len(got) != 1 || !strings.HasPrefix(got[0], "5 ") {
		t.Fatalf("cut-short pass row = %v", got)
	}
	// The hosts left over are due in the next pass.
	code, out, _ = s.crawl(t, "2026-01-01T14:00:00Z")
	if code != exitOK || strings.Contains(out, " 0 checks") {
		t.Fatalf("next pass exit %d:\n%s", code, out)
	}
}

// siteWithDayBlocked is a simulated site after a first pass on 2026-01-01,
// with a file where 2026-01-02's checks directory goes, so that no snapshot
// of a pass that day can be written; blocker is that file.
func siteWithDayBlocked(t *testing.T) (s *simSite, blocker string) {
	t.Helper()
	s = newSimSite(t, fedisim.Config{})
	if code, _, errs := s.crawl(t, "2026-01-01T12:00:00Z"); code != exitOK {
		t.Fatalf("first pass: exit %d: %s", code, errs)
	}
	blocker = filepath.Join(s.dir, "data", "checks", "date=2026-01-02")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return s, blocker
}

// A pass whose snapshots cannot be written (here a file stands where the
// day's directory goes) fails, and its passes row counts only the checks in
// files: the others, recorded but never written, are abandoned, and the
// row says why. It used to count every check recorded, none of which was
// on disk.
func TestFailedSnapshotWriteIsRecordedAsSuch(t *testing.T) {
	s, blocker := siteWithDayBlocked(t)
	code, out, errs := s.crawl(t, "2026-01-02T00:00:00Z", "--flush-checks", "20", "--isolation", "none")
	if code != exitFailure || !strings.Contains(errs, "write snapshots") && !strings.Contains(errs, "record check") {
		t.Fatalf("exit %d, want %d naming the write\n%s\n%s", code, exitFailure, out, errs)
	}
	os.Remove(blocker)
	got := s.query(t, `SELECT p.checked = (SELECT count(*) FROM checks c WHERE c.pass_id = p.pass_id),
			p.due = p.checked + p.not_started + p.abandoned + p.skipped_address_budget,
			p.abandoned > 0, p.cut_short LIKE 'writing the snapshots failed%'
		FROM passes p WHERE p.started_at >= TIMESTAMP '2026-01-02'`)
	if len(got) != 1 || got[0] != "true true true true" {
		t.Fatalf("the failed pass's row: %v (written count, due adding up, abandoned, cut_short)\n%s", got, out)
	}
}

func TestSecondCrawlOnLockedDataFailsNamingThePID(t *testing.T) {
	s := newSimSite(t, fedisim.Config{})
	os.MkdirAll(filepath.Join(s.dir, "data"), 0o755)
	l, err := lockfile.Acquire(filepath.Join(s.dir, "data", ".lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	code, _, errs := s.crawl(t, "2026-01-01T12:00:00Z")
	if code != exitFailure || !strings.Contains(errs, "locked by process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if files, _ := filepath.Glob(filepath.Join(s.dir, "data", "*", "*", "*.parquet")); len(files) != 0 {
		t.Fatalf("a refused crawl wrote %v", files)
	}
}

func TestCheckExplainsAHost(t *testing.T) {
	s := newSimSite(t, fedisim.Config{})
	host := s.sim.Seeds(1)[0]
	info, _ := s.sim.Instance(host)

	code, out, errs := runObserver(t, append([]string{"check", "--json", host}, s.net...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var report crawl.Report
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if report.Result.Check.Outcome != observer.OutcomeAlive || report.Result.Check.Software != info.Software {
		t.Fatalf("check = %+v, simulator runs %s", report.Result.Check, info.Software)
	}
	if len(report.Steps) < 3 {
		t.Fatalf("want robots, well-known and nodeinfo steps, got %+v", report.Steps)
	}

	code, out, _ = runObserver(t, append([]string{"check", host}, s.net...)...)
	if code != exitOK || !strings.Contains(out, "/.well-known/nodeinfo") || !strings.Contains(out, "alive") {
		t.Fatalf("text report lacks what was fetched and decided:\n%s", out)
	}
}

func TestBadInputGetsOneClearLineAndNoWrites(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	badConfig := filepath.Join(dir, "bad.toml")
	os.WriteFile(badConfig, []byte("[crawl]\nconcurency = 3\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"add", "--data", data, "good.social", "not a host"}, exitUsage, `"not a host"`},
		{[]string{"add", "--data", data, "10.0.0.1"}, exitUsage, `"10.0.0.1"`},
		{[]string{"check", "localhost"}, exitUsage, `"localhost"`},
		{[]string{"crawl", "--data", data, "--now", "yesterday"}, exitUsage, "yesterday"},
		{[]string{"crawl", "--data", data, "--connect-to", "nonsense"}, exitUsage, "nonsense"},
		{[]string{"crawl", "--data", data, "--allow-addr", "300.1.1.1/8"}, exitUsage, "300.1.1.1/8"},
		{[]string{"crawl", "--data", data, "--config", badConfig}, exitFailure, "crawl.concurency"},
		{[]string{"crawl", "--data", data, "--config", filepath.Join(dir, "missing.toml")}, exitFailure, "missing.toml"},
		{[]string{"frobnicate"}, exitUsage, "frobnicate"},
	} {
		code, _, errs := runObserver(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d naming %s", tc.args, code, errs, tc.code, tc.want)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(data, "*", "*", "*.parquet")); len(files) != 0 {
		t.Fatalf("bad input wrote %v", files)
	}
}

func TestAddRecordsManualDiscoveriesOnce(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	os.MkdirAll(data, 0o755) // add never creates it
	// Example.Social. and example.social are one host, added and named once.
	code, out, errs := runObserver(t, "add", "--data", data, "--now", "2026-01-01T00:00:00Z", "Example.Social.", "bücher.de", "example.social")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if out != "example.social: added\nxn--bcher-kva.de: added\n" {
		t.Fatalf("output: %q", out)
	}
	code, out, _ = runObserver(t, "add", "--data", data, "example.social")
	if code != exitOK || !strings.Contains(out, "already known") {
		t.Fatalf("second add: exit %d, %s", code, out)
	}
	s := &simSite{dir: filepath.Dir(data)}
	if got := s.query(t, "SELECT count(*) || ' ' || min(via) FROM discoveries"); got[0] != "2 manual" {
		t.Fatalf("discoveries = %v", got)
	}
}

func TestNewSiteWritesASkeletonAndNeverOverwrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mysite")
	code, out, errs := runObserver(t, "new", "site", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, f := range []string{"observer.toml", "content/_index.md", "content/about.md", "data/seeds.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		want, _ := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil || string(b) != string(want) {
			t.Errorf("%s: not the project's own file (err %v)", f, err)
		}
	}
	for _, d := range []string{"layouts", "static", "themes"} {
		if info, err := os.Stat(filepath.Join(dir, d)); err != nil || !info.IsDir() {
			t.Errorf("override folder %s missing", d)
		}
	}
	if !strings.Contains(out, "observer build") {
		t.Errorf("no next steps printed: %s", out)
	}
	// The new site's config is valid as written.
	if _, err := config.Load(filepath.Join(dir, "observer.toml"), true); err != nil {
		t.Fatalf("the new site's config does not load: %v", err)
	}
	// A second time it refuses, and leaves the site as it was.
	os.WriteFile(filepath.Join(dir, "content", "about.md"), []byte("mine"), 0o644)
	code, _, errs = runObserver(t, "new", "site", dir)
	if code != exitFailure || !strings.Contains(errs, "not empty") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "content", "about.md")); string(b) != "mine" {
		t.Fatal("an existing site was overwritten")
	}
	// An empty DIR (an unset variable in a script) is not the current
	// directory, whose site it would overwrite.
	t.Chdir(dir)
	code, out, errs = runObserver(t, "new", "site", "")
	if code != exitUsage || out != "" || !strings.Contains(errs, "invalid DIR: empty") {
		t.Fatalf("new site \"\": exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "content", "about.md")); string(b) != "mine" {
		t.Fatal("new site \"\" overwrote the site in the current directory")
	}
}
