package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/internal/cliflag"
)

// The command line's contract: every command reads its config, a bad flag
// or argument is one clear message (then the usage) and exit 2, and nothing
// the caller typed is silently ignored.

func TestCLIAddReadsTheConfigAndRefusesWhatItCannotUse(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o755)
	badConfig := filepath.Join(dir, "bad.toml")
	os.WriteFile(badConfig, []byte("[crawl]\nconcurency = 3\n"), 0o644)
	missingData := filepath.Join(dir, "nonexistent", "x")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"add", "--data", data, "--config", filepath.Join(dir, "missing.toml"), "h.example.org"}, exitFailure, "missing.toml"},
		{[]string{"add", "--data", data, "--config", badConfig, "h.example.org"}, exitFailure, "crawl.concurency"},
		{[]string{"add", "--data", data, "--log-format", "yaml", "h.example.org"}, exitUsage, "yaml"},
		{[]string{"add", "--data", missingData, "h.example.org"}, exitFailure, "data directory " + missingData},
	} {
		code, out, errs := runObserver(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) || strings.Contains(out, "added") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d naming %s", tc.args, code, out, errs, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nonexistent")); err == nil {
		t.Error("add created a missing data directory")
	}
	if files, _ := filepath.Glob(filepath.Join(data, "*", "*", "*.parquet")); len(files) != 0 {
		t.Fatalf("a refused add wrote %v", files)
	}
}

func TestCLIAddRefusesBlocklistedHosts(t *testing.T) {
	site := t.TempDir()
	config := filepath.Join(site, "observer.toml")
	os.WriteFile(config, []byte("[crawl]\nblocklist = \"blocked.txt\"\n"), 0o644)
	os.WriteFile(filepath.Join(site, "blocked.txt"), []byte("# spam\n*.spam.social\nbad.social\n"), 0o644)
	data := filepath.Join(t.TempDir(), "data") // the blocklist is found beside the config, not the data
	os.MkdirAll(data, 0o755)

	for _, tc := range []struct{ host, entry string }{
		{"x.spam.social", `"*.spam.social"`},
		{"spam.social", `"*.spam.social"`},
		{"Bad.Social.", `"bad.social"`},
	} {
		code, out, errs := runObserver(t, "add", "--config", config, "--data", data, "good.social", tc.host)
		if code == exitOK || strings.Contains(out, "added") ||
			!strings.Contains(errs, strings.ToLower(strings.TrimSuffix(tc.host, "."))) || !strings.Contains(errs, tc.entry) ||
			!strings.Contains(errs, filepath.Join(site, "blocked.txt")) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want a refusal naming the host and %s", tc.host, code, out, errs, tc.entry)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(data, "*", "*", "*.parquet")); len(files) != 0 {
		t.Fatalf("a refused add wrote %v", files)
	}
	// A host the list does not name is added.
	code, out, errs := runObserver(t, "add", "--config", config, "--data", data, "notspam.social", "example.org")
	if code != exitOK || !strings.Contains(out, "notspam.social: added") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestCLIFlagErrorsArePrintedOnce(t *testing.T) {
	data := t.TempDir()
	for _, tc := range []struct {
		cmd   string
		args  []string
		value string // what was wrong, named once
		says  string // and what is wanted
	}{
		{"crawl", []string{"--now", "yesterday"}, `"yesterday"`, "RFC 3339"},
		{"crawl", []string{"--duration", "1x"}, `"1x"`, "7d"},
		{"crawl", []string{"--max-checks", "1.5"}, `"1.5"`, "whole number"},
		{"crawl", []string{"--bogus"}, "-bogus", "not defined"},
		{"crawl", []string{"--concurrency"}, "needs an argument: -concurrency", ""},
		{"build", []string{"--now", "2026-13-01T00:00:00Z"}, `"2026-13-01T00:00:00Z"`, "RFC 3339"},
		{"crawl", []string{"--now", "0001-01-01T00:00:00Z"}, `"0001-01-01T00:00:00Z"`, "a time after"},
		{"crawl", []string{"--now", "9999-12-31T23:59:59.9999Z"}, `"9999-12-31T23:59:59.9999Z"`, "a time before"},
		{"sql", []string{"--now", "9999-01-01T04:00:00-05:00"}, `"9999-01-01T04:00:00-05:00"`, "a time before"},
		{"serve", []string{"--port", "abc"}, `"abc"`, "whole number"},
		{"sql", []string{"--format"}, "needs an argument: -format", ""},
		{"add", []string{"--now", "soon", "h.example.org"}, `"soon"`, "RFC 3339"},
		{"check", []string{"--json=maybe", "h.example.org"}, `"maybe"`, "true or false"},
		{"new", []string{"--bogus", "site", "x"}, "-bogus", "not defined"},
		{"version", []string{"--bogus"}, "-bogus", "not defined"},
	} {
		args := append([]string{tc.cmd, "--data", data}, tc.args...)
		if tc.cmd == "check" || tc.cmd == "new" || tc.cmd == "version" {
			args = append([]string{tc.cmd}, tc.args...)
		}
		code, out, errs := runObserver(t, args...)
		first, _, _ := strings.Cut(errs, "\n")
		if code != exitUsage || out != "" ||
			!strings.HasPrefix(first, "observer "+tc.cmd+": ") || !strings.Contains(first, tc.value) || !strings.Contains(first, tc.says) ||
			strings.Count(errs, tc.value) != 1 || strings.Count(errs, "usage: observer "+tc.cmd) != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant exit 2, one line naming %s (%s), then the usage once", args, code, out, errs, tc.value, tc.says)
		}
	}
	// Values checked after parsing: one line, the value named once.
	for _, tc := range [][]string{
		{"--connect-to", "bogus", "HOST:PORT:ADDR:PORT"},
		{"--allow-addr", "10.0.0.0/99", "CIDR"},
	} {
		code, out, errs := runObserver(t, "crawl", "--data", data, tc[0], tc[1])
		if code != exitUsage || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 ||
			strings.Count(errs, tc[1]) != 1 || strings.Count(errs, strings.TrimLeft(tc[0], "-")) != 1 || !strings.Contains(errs, tc[2]) {
			t.Errorf("crawl %s %s: exit %d, stdout %q, stderr %q; want exit 2 and one line naming the flag and the value once", tc[0], tc[1], code, out, errs)
		}
	}
	// -h is not an error: the usage, exit 0.
	code, _, errs := runObserver(t, "crawl", "-h")
	if code != exitOK || !strings.HasPrefix(errs, "usage: observer crawl") || strings.Count(errs, "usage:") != 1 {
		t.Fatalf("crawl -h: exit %d, stderr:\n%s", code, errs)
	}
}

func TestCLISQLQueriesThatStartWithAComment(t *testing.T) {
	data := t.TempDir()
	for _, args := range [][]string{
		{"--format", "csv", "-- a comment\nSELECT 1 AS one"},
		{"-- a comment\nSELECT 1 AS one", "--format", "csv"},
		{"--format=csv", "--\tanother\nSELECT 1 AS one"},
		{"--format", "csv", "--", "SELECT 1 AS one"},
		{"--format", "csv", "--\nSELECT 1 AS one"},
	} {
		code, out, errs := runObserver(t, append([]string{"sql", "--data", data}, args...)...)
		if code != exitOK || out != "one\n1\n" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	// docs/operations.md's queries work pasted as the argument.
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	n := 0
	for _, b := range blocks {
		for _, q := range strings.Split(b[1], "\n\n") {
			if !strings.HasPrefix(q, "--") {
				continue
			}
			n++
			code, _, errs := runObserver(t, "sql", "--data", data, "--format", "csv", q)
			if code != exitOK {
				t.Errorf("docs/operations.md query\n%s\nexit %d, stderr %q", q, code, errs)
			}
		}
	}
	if n == 0 {
		t.Fatal("no commented query found in docs/operations.md")
	}
}

func TestCLIDurationFlagsTakeTheConfigSyntax(t *testing.T) {
	for s, want := range map[string]time.Duration{"1d": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "90m": 90 * time.Minute, "0": 0, "2h30m": 150 * time.Minute} {
		d := cliflag.Duration{Parse: config.ParseDuration}
		if err := d.Set(s); err != nil || d.Value != want || !d.Given {
			t.Errorf("%q: %v, %v; want %v", s, d.Value, err, want)
		}
	}
	for s, want := range map[string]string{"1x": "7d", "d": "7d", "1.5d": "7d", "": "7d", "-1h": "negative", "-2d": "negative"} {
		d := cliflag.Duration{Parse: config.ParseDuration}
		if err := d.Set(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: accepted as %v or error %v does not say %s", s, d.Value, err, want)
		}
	}
	// End to end: --duration 1d is no usage error (the pass then finds
	// nothing to check), and a bad one says what is wanted.
	dir := t.TempDir()
	config := filepath.Join(dir, "observer.toml")
	os.WriteFile(config, []byte("[crawl]\nseeds = \"none.txt\"\n"), 0o644)
	crawl := []string{"crawl", "--quiet", "--isolation", "none", "--config", config, "--data", filepath.Join(dir, "data")}
	code, _, errs := runObserver(t, append(crawl, "--duration", "1d")...)
	if code != exitFailure || !strings.Contains(errs, "no hosts known") {
		t.Fatalf("--duration 1d: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runObserver(t, append(crawl, "--duration", "1x")...)
	if code != exitUsage || !strings.Contains(errs, "7d") {
		t.Fatalf("--duration 1x: exit %d, stderr %q; want the format", code, errs)
	}
}

func TestCLICrawlRefusesBadBudgets(t *testing.T) {
	data := t.TempDir()
	for _, tc := range []struct{ args []string }{
		{[]string{"--max-checks", "-5"}},
		{[]string{"--max-checks=-1"}},
		{[]string{"--concurrency", "-3"}},
		{[]string{"--concurrency", "0"}},
		{[]string{"--concurrency", "2000000000"}},
		{[]string{"--duration", "-1h"}},
		{[]string{"--duration", "0s"}},
		{[]string{"--flush-checks", "0"}},
	} {
		args := append([]string{"crawl", "--data", data}, tc.args...)
		code, _, errs := runObserver(t, args...)
		name := strings.TrimLeft(strings.SplitN(tc.args[0], "=", 2)[0], "-")
		if code != exitUsage || !strings.Contains(errs, "-"+name) {
			t.Errorf("%v: exit %d, stderr %q; want a usage error naming -%s", args, code, errs, name)
		}
	}
	// The help says one thing about each budget's default.
	_, _, help := runObserver(t, "crawl", "-h")
	for _, name := range []string{"max-checks", "duration", "concurrency"} {
		i := strings.Index(help, "  -"+name+" ")
		if i < 0 {
			t.Fatalf("no -%s in the help:\n%s", name, help)
		}
		entry := help[i:]
		if j := strings.Index(entry[1:], "\n  -"); j >= 0 {
			entry = entry[:j+1]
		}
		if strings.Count(entry, "default") != 1 {
			t.Errorf("-%s's help contradicts itself: %q", name, entry)
		}
	}
}

func TestCLIExtraArgumentsAreUsageErrors(t *testing.T) {
	data := t.TempDir()
	for _, args := range [][]string{
		{"version", "extra"},
		{"version", "--bogus"},
		{"new", "site", "a", "b"},
		{"check", "a.example", "b.example"},
		{"crawl", "--data", data, "extra"},
		{"sql", "--data", data, "SELECT 1", "extra"},
		{"help", "frobnicate"},
		{"__derive", "--data", data, "extra"},
		{"__checker", "extra"},
	} {
		code, out, errs := runObserver(t, args...)
		if code != exitUsage || out != "" || errs == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want a usage error", args, code, out, errs)
		}
	}
	code, out, _ := runObserver(t, "version")
	if code != exitOK || !strings.HasPrefix(out, "observer ") {
		t.Fatalf("version: exit %d, %q", code, out)
	}
	// help COMMAND is COMMAND -h.
	code, _, errs := runObserver(t, "help", "crawl")
	if code != exitOK || !strings.HasPrefix(errs, "usage: observer crawl") {
		t.Fatalf("help crawl: exit %d, stderr %q", code, errs)
	}
}

// runObserverCancelled is runObserver under a context already cancelled,
// as after a SIGINT that arrived before the command got anywhere.
func runObserverCancelled(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code = run(ctx, env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

// A signal before the pass's first check is an interrupted pass (exit 3),
// as one during the checks is, and other commands say they were
// interrupted rather than only "context canceled".
func TestCLIInterruptedBeforeAnyCheck(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	os.MkdirAll(data, 0o755)
	if code, _, errs := runObserver(t, "add", "--data", data, "a.social"); code != exitOK {
		t.Fatalf("add: exit %d: %s", code, errs)
	}
	code, _, errs := runObserverCancelled(t, "crawl", "--data", data, "--isolation", "none", "--config", filepath.Join(t.TempDir(), "none.toml"))
	if code != exitCutShort || !strings.Contains(errs, "interrupted") {
		t.Fatalf("crawl: exit %d, stderr %q; want exit %d, interrupted", code, errs, exitCutShort)
	}
	code, _, errs = runObserverCancelled(t, "sql", "--data", data, "SELECT 1")
	if code != exitFailure || !strings.Contains(errs, "interrupted") {
		t.Fatalf("sql: exit %d, stderr %q; want exit %d, interrupted", code, errs, exitFailure)
	}
}

// An empty --data or --config is refused, not read as the current
// directory or as observer.toml.
func TestCLIRefusesEmptyPaths(t *testing.T) {
	for _, args := range [][]string{
		{"sql", "--data", "", "SELECT 1"},
		{"crawl", "--data="},
		{"build", "--config", ""},
		{"add", "--data", "", "a.social"},
	} {
		code, _, errs := runObserver(t, args...)
		flagName := strings.TrimSuffix(strings.TrimPrefix(args[1], "--"), "=")
		if code != exitUsage || !strings.Contains(errs, "-"+flagName+": must not be empty") {
			t.Errorf("%q: exit %d, stderr %q; want a usage error naming -%s", args, code, errs, flagName)
		}
	}
}

// observer add says a host was added only once it was: a failed write
// prints no "added" line and says nothing was added.
func TestCLIAddReportsOnlyWhatWasWritten(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	os.MkdirAll(data, 0o755)
	// Writers stage their files in data/tmp: a file in its place fails the write.
	if err := os.WriteFile(filepath.Join(data, "tmp"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runObserver(t, "add", "--data", data, "new.social")
	if code != exitFailure || strings.Contains(out, "added") || !strings.Contains(errs, "nothing was added") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want a failure, no \"added\"", code, out, errs)
	}
}

// A CA file that cannot be read is a bad flag value (exit 2) naming the flag.
func TestCLIBadCACertIsAUsageError(t *testing.T) {
	code, _, errs := runObserver(t, "check", "--ca-cert", filepath.Join(t.TempDir(), "missing.pem"), "a.social")
	if code != exitUsage || !strings.Contains(errs, "-ca-cert") || !strings.Contains(errs, "missing.pem") {
		t.Fatalf("exit %d, stderr %q; want a usage error naming -ca-cert and the file", code, errs)
	}
}

// fullWriter fails every write, as stdout redirected to /dev/full does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// A command whose output cannot be written says so and fails, even when
// the output is only a message: a script would otherwise read success.
func TestUnwritableOutputFails(t *testing.T) {
	for _, args := range [][]string{
		{"version"},
		{"new", "site", filepath.Join(t.TempDir(), "mysite")},
	} {
		var errb bytes.Buffer
		code := run(context.Background(), env{stdin: strings.NewReader(""), stdout: fullWriter{}, stderr: &errb}, args)
		if code != exitFailure || !strings.Contains(errb.String(), "no space left on device") {
			t.Errorf("%q: exit %d, stderr %q; want a failure naming the write error", args, code, errb.String())
		}
	}
}
