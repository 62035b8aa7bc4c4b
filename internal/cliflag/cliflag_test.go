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
