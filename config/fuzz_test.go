package config_test

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/fediverse-observer/observer/config"
)

// durations returns every Duration setting in cfg, by key.
func durations(cfg config.Config) map[string]time.Duration {
	out := map[string]time.Duration{}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		if d, ok := v.Interface().(config.Duration); ok {
			out[path] = d.D()
			return
		}
		if v.Kind() != reflect.Struct {
			return
		}
		for i := range v.NumField() {
			walk(v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	}
	walk(reflect.ValueOf(cfg), "")
	return out
}

// FuzzParse reads observer.toml files: no input panics (the type check
// walks go-toml's unstable AST); an accepted configuration is valid, has no
// negative duration, and reads back the same once written out; a refused one
// is explained in the file's terms, not Go's.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("../observer.toml"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		"", "[site]\ntitle = \"Mine\"\n[crawl]\nconcurrency = 3\ncheck_timeout = \"5s\"\n[state]\nnew_window = \"14d\"\n",
		"[site]\ntitle = \"x\"\ntheem = \"dark\"\n", "[crawl]\nconcurrency = 0", "[crawl]\ncheck_timeout = \"soon\"",
		"[site]\ntheme = \"../etc\"", "[crawl]\nproduct_token = \"a b\"", "[site\n", "[state]\nmemory_limit = \"80%\"",
		"[state]\nmemory_limit = \"1.5GB\"", "[crawl]\nduckdb_memory_limit = \"300 MB\"",
		"[crawl]\ncheck_timeout = 5", "[crawl]\nconcurrency = 3\nduration = 45", "crawl.peers_interval = 7",
		"crawl = { check_timeout = 5 }", "[Crawl]\nCheck_Timeout = 5", "[crawl]\ncheck_timeout = 1.5",
		"[crawl]\nconcurrency = \"5\"", "[site]\nunsafe_html = \"yes\"", "[crawl]\nconcurrency = [1]",
		"site = 5", "[crawl.concurrency]\nx = 1", "[crawl.concurrency]", "crawl.concurrency.x = 1",
		"[serve]\nport = 99999999999999999999", "[crawl]\nconcurrency = 1\nconcurrency = 2",
		"[site.params]\nn = 5\ns = \"x\"\nd = 1979-05-27\nlist = [1, \"a\"]\ninline = { a = 1 }\n[site.params.nested]\nb = true\n",
		"[state]\nactive_interval = \"2h\"\nactive_jitter = \"119m\"", "[serve]\nport = 65535",
		"[state]\ndead_after = \"106752d\"", "[state]\nwarmup = \"213504d\"", "[[site]]\ntitle = \"x\"",
		"[[crawl.concurrency]]", "site.params.x.y.z = 1", "[site]\nparams = { a = { b = [ { c = 1 } ] } }",
		"'crawl'.\"duration\" = \"1h\"", "crawl . duration = \"1h\"", "[site]\nparams.f = nan\nparams.t = 07:32:00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := config.Default()
		err := config.Parse(data, &cfg)
		if err != nil {
			// Go's names for the settings (go-toml's "struct field
			// config.Crawl.Concurrency"), unless the input wrote them.
			for _, goish := range []string{"struct field", "config."} {
				if strings.Contains(err.Error(), goish) && !bytes.Contains(bytes.ToLower(data), []byte(goish)) {
					t.Fatalf("%q: error in Go's terms: %v", data, err)
				}
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%q: accepted, yet invalid: %v", data, err)
		}
		for key, d := range durations(cfg) {
			if d < 0 {
				t.Fatalf("%q: %s is negative: %v", data, key, d)
			}
		}
		out, err := toml.Marshal(cfg)
		if err != nil {
			t.Fatalf("%q: accepted config %+v does not marshal: %v", data, cfg, err)
		}
		again := config.Default()
		if err := config.Parse(out, &again); err != nil {
			t.Fatalf("%q: written as\n%s\nand refused: %v", data, out, err)
		}
		if out2, err := toml.Marshal(again); err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("%q: written as\n%s\nread back and written as\n%s\n%v", data, out, out2, err)
		}
		// Params may hold NaN, which is not equal to itself; the bytes
		// compared above cover them.
		cfg.Site.Params, again.Site.Params = nil, nil
		if !reflect.DeepEqual(cfg, again) {
			t.Fatalf("%q: read back as %+v, want %+v", data, again, cfg)
		}
	})
}

// FuzzParseDuration checks the duration syntax: an accepted duration is
// not negative, reads back from its Go spelling, and from its TOML form.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{
		"7d", "90s", "29h", "0d", "d", "1.5d", "-1h", "xd", "", "+5d", "05d", "-0d", "1h30m", "1e3d", "0x10d",
		"106751d", "106752d", "213504d", "9223372036854775807d", "2562047h47m16.854775807s", "2562047h47m16.854775808s",
		"9223372036854775807ns", "1dd", " 1d", "1d ", ".5h", "5µs", "5us",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := config.ParseDuration(s)
		if err != nil {
			if !strings.Contains(err.Error(), "invalid duration") {
				t.Fatalf("ParseDuration(%q): error %q", s, err)
			}
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %v, negative", s, d)
		}
		if days, ok := strings.CutSuffix(s, "d"); ok && days != "" && strings.Trim(days, "0123456789") == "" && d%(24*time.Hour) != 0 {
			t.Fatalf("ParseDuration(%q) = %v, not whole days", s, d)
		}
		if again, err := config.ParseDuration(d.String()); err != nil || again != d {
			t.Fatalf("ParseDuration(%q) = %v, whose String reads back as %v, %v", s, d, again, err)
		}
		var cd config.Duration
		text, _ := config.Duration(d).MarshalText()
		if err := cd.UnmarshalText(text); err != nil || cd.D() != d {
			t.Fatalf("ParseDuration(%q) = %v, marshalled as %q, read back as %v, %v", s, d, text, cd.D(), err)
		}
	})
}
