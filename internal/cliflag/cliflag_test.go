package cliflag

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// Flags may follow positional arguments; "--" ends them; an argument that
// starts with "-" but holds whitespace in its would-be name (an SQL query
// beginning with a comment) is positional.
func TestParseTellsFlagsFromArguments(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		config string
		json   bool
		rest   []string
	}{
		{[]string{"-- x\nSELECT 1"}, "", false, []string{"-- x\nSELECT 1"}},
		{[]string{"--config", "-- odd name", "q"}, "-- odd name", false, []string{"q"}},
		{[]string{"--config=/My Sites/observer.toml", "q"}, "/My Sites/observer.toml", false, []string{"q"}},
		{[]string{"q", "--json", "--config", "c.toml"}, "c.toml", true, []string{"q"}},
		{[]string{"--json", "SELECT 1 -- one", "--config=c"}, "c", true, []string{"SELECT 1 -- one"}},
		{[]string{"--json", "--", "--config", "c"}, "", true, []string{"--config", "c"}},
		{[]string{"a", "--", "-b c", "--json"}, "", false, []string{"a", "-b c", "--json"}},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		config := fs.String("config", "", "")
		asJSON := fs.Bool("json", false, "")
		if err := Parse(fs, tc.args); err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if *config != tc.config || *asJSON != tc.json || strings.Join(fs.Args(), "|") != strings.Join(tc.rest, "|") {
			t.Errorf("%q: config %q, json %v, args %q; want %q, %v, %q", tc.args, *config, *asJSON, fs.Args(), tc.config, tc.json, tc.rest)
		}
	}
}

// The logging flags give a logger of the format asked for, at warnings
// only with -quiet, refuse any other format naming it, and are given again
// to a child process.
func TestLogFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in what an info and a warning write
		info bool
	}{
		{nil, "level=WARN", true},
		{[]string{"-log-format", "json"}, `"level":"WARN"`, true},
		{[]string{"-quiet"}, "level=WARN", false},
	} {
		var l Log
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		l.Register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		log, err := l.Logger(&b)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		log.Info("i")
		log.Warn("w")
		if !strings.Contains(b.String(), tc.want) || strings.Contains(b.String(), "INFO") != tc.info {
			t.Errorf("%v wrote %q", tc.args, b.String())
		}
		again := flag.NewFlagSet("child", flag.ContinueOnError)
		var child Log
		child.Register(again)
		if err := again.Parse(l.Args()); err != nil || child != l {
			t.Errorf("%v: a child given %v parses %+v, %v", tc.args, l.Args(), child, err)
		}
	}
	if _, err := (Log{Format: "yaml"}).Logger(io.Discard); err == nil || !strings.Contains(err.Error(), `"yaml"`) {
		t.Errorf("-log-format yaml: %v", err)
	}
}
