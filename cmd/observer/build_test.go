package main

import (
	"bytes"
	"encoding/csv"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/build/buildtest"
	"github.com/fediverse-observer/observer/lockfile"
)

// build runs `observer build` over the site at asOf into out.
func (s *simSite) build(t *testing.T, out string) (int, string, string) {
	t.Helper()
	return runObserver(t, "build", "--quiet", "--config", s.config, "--data", s.data(), "--out", out, "--now", asOf)
}

// csvColumn runs a query and returns its first column.
func (s *simSite) csvColumn(t *testing.T, q string) []string {
	t.Helper()
	code, out, errs := s.sql(t, "--format", "csv", q)
	if code != exitOK {
		t.Fatalf("%s: exit %d: %s", q, code, errs)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var col []string
	for _, r := range recs[1:] {
		col = append(col, r[0])
	}
	return col
}

func TestBuildRendersTheSiteFromACrawl(t *testing.T) {
	s := crawledSite(t)
	live := s.csvColumn(t, "SELECT host FROM live ORDER BY host")
	if len(live) < 10 {
		t.Fatalf("only %d live hosts after two passes", len(live))
	}
	blocked := live[len(live)/2]
	const topQuery = "select software, count(*) as n from live group by software order by n desc, software limit ?"
	// DuckDB's types as the templates get them: sum gives a HUGEINT
	// (*big.Int), avg a DOUBLE, and a DECIMAL is duckdb.Decimal.
	const numbersQuery = "select sum(x) as h, 1234567.5::DECIMAL(10,1) as d, avg(x) as f, 12::TINYINT as t from (values (1000000::BIGINT), (234567)) v(x)"
	buildtest.WriteTree(t, s.dir, map[string]string{
		"observer.toml": "[site]\ntitle = \"Test Observer\"\nbase_url = \"https://observer.example/\"\n" +
			"[crawl]\nseeds = \"seeds.txt\"\nblocklist = \"blocklist.txt\"\n",
		"blocklist.txt":  blocked + "\n",
		"content/top.md": "---\ntitle: Top software\nlayout: top.html\n---\nThe most common.\n",
		"layouts/top.html": `{{ define "main" }}<ul>{{ range sql "` + topQuery + `" 3 }}<li>{{ .software }}={{ .n }}</li>{{ end }}</ul>` +
			`{{ range sql "` + numbersQuery + `" }}<p>{{ formatInt .h }}|{{ formatInt .d }}|{{ formatInt .f }}|{{ add .t 1 }}</p>{{ end }}{{ end }}`,
	})
	out := filepath.Join(t.TempDir(), "public")
	if code, stdout, errs := s.build(t, out); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
	}

	for _, f := range []string{"index.html", "live/index.html", "404.html", "live.txt", "live.csv", "live.json", "new.csv", "new.atom", "robots.txt", "sitemap.xml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s missing: %v", f, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "index.html")); !bytes.Contains(b, []byte("Test Observer")) {
		t.Errorf("index.html lacks the site's title")
	}
	// live.txt is the live view for the build time, less the blocklist.
	b, err := os.ReadFile(filepath.Join(out, "live.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := slices.DeleteFunc(slices.Clone(live), func(h string) bool { return h == blocked })
	if got := strings.Fields(string(b)); !slices.Equal(got, want) {
		t.Errorf("live.txt has %d hosts, want the %d live ones less %s", len(got), len(want), blocked)
	}
	// Nor does any other published file (the other lists, the pages, the
	// feeds) name it.
	named := regexp.MustCompile(`(^|[^a-z0-9.-])` + regexp.QuoteMeta(blocked) + `([^a-z0-9-]|$)`)
	err = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && named.Match(b) {
			t.Errorf("%s names the blocklisted %s", path, blocked)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The templates' sql function reads the same views.
	top, err := os.ReadFile(filepath.Join(out, "top", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if p := "<p>1\u202f234\u202f567|1\u202f234\u202f568|617\u202f284|13</p>"; !bytes.Contains(top, []byte(p)) {
		t.Errorf("top/index.html lacks %s:\n%s", p, top)
	}
	code, rows, _ := s.sql(t, "--format", "csv", strings.Replace(topQuery, "?", "3", 1))
	recs, _ := csv.NewReader(strings.NewReader(rows)).ReadAll()
	if code != exitOK || len(recs) < 2 {
		t.Fatalf("top software: exit %d, %q", code, rows)
	}
	for _, r := range recs[1:] {
		if li := "<li>" + r[0] + "=" + r[1] + "</li>"; !bytes.Contains(top, []byte(li)) {
			t.Errorf("top/index.html lacks %s:\n%s", li, top)
		}
	}

	// Built again from the same data, nothing changes, and nothing is left
	// beside the output but its lock file.
	info, _ := os.Stat(filepath.Join(out, "index.html"))
	if code, _, errs := s.build(t, out); code != exitOK {
		t.Fatalf("second build: exit %d: %s", code, errs)
	}
	if again, _ := os.Stat(filepath.Join(out, "index.html")); !again.ModTime().Equal(info.ModTime()) {
		t.Errorf("an unchanged index.html was rewritten")
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{".public.lock", "public"}) {
		t.Errorf("beside the output: %v", names)
	}
}

// bareSite is a site directory with a config and an empty data directory.
func bareSite(t *testing.T) *simSite {
	t.Helper()
	dir := t.TempDir()
	s := &simSite{dir: dir, config: filepath.Join(dir, "observer.toml")}
	buildtest.WriteArchive(t, dir, `
-- observer.toml --
[site]
title = "Bare"
`)
	os.MkdirAll(s.data(), 0o755)
	return s
}

func TestBuildTemplateErrorLeavesThePublishedSiteAlone(t *testing.T) {
	s := bareSite(t)
	out := filepath.Join(s.dir, "public")
	if code, _, errs := s.build(t, out); code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	before := stampTree(t, out)
	index, _ := os.ReadFile(filepath.Join(out, "index.html"))

	for _, tc := range []struct{ layout, want string }{
		{`{{ define "main" }}{{ .Page.NoSuchField }}{{ end }}`, "NoSuchField"},
		{`{{ define "main" }}{{ range sql "CREATE TABLE x AS SELECT 1" }}{{ end }}{{ end }}`, "only read-only"},
		{`{{ define "main" }}{{ range sql "SELECT nope FROM live" }}{{ end }}{{ end }}`, "nope"},
	} {
		buildtest.WriteTree(t, s.dir, map[string]string{"layouts/home.html": tc.layout})
		code, _, errs := s.build(t, out)
		if code != exitFailure || !strings.Contains(errs, "home.html") || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want a failure naming home.html and %s", tc.layout, code, errs, tc.want)
		}
		// One prefix: the command's.
		if !strings.HasPrefix(errs, "observer build: ") || strings.Contains(errs, "build: build:") {
			t.Errorf("%s: stderr %q", tc.layout, errs)
		}
		if after := stampTree(t, out); len(after) != len(before) {
			t.Errorf("%s: the published site changed: %d files, was %d", tc.layout, len(after), len(before))
		} else {
			for p, st := range after {
				if before[p] != st {
					t.Errorf("%s: %s changed", tc.layout, p)
				}
			}
		}
		if b, _ := os.ReadFile(filepath.Join(out, "index.html")); !bytes.Equal(b, index) {
			t.Errorf("%s: index.html changed", tc.layout)
		}
	}
}

func TestBuildIntoALockedOutputFailsNamingThePID(t *testing.T) {
	s := bareSite(t)
	out := filepath.Join(s.dir, "public")
	l, err := lockfile.Acquire(filepath.Join(s.dir, ".public.lock"))
	if err != nil {
		t.Fatal(err)
	}
	code, _, errs := s.build(t, out)
	if code != exitFailure || !strings.Contains(errs, "locked by process "+strconv.Itoa(os.Getpid())) || !strings.Contains(errs, out) {
		t.Fatalf("exit %d, stderr %q; want a failure naming the output and pid %d", code, errs, os.Getpid())
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused build wrote the output")
	}
	l.Release()
	if code, _, errs := s.build(t, out); code != exitOK {
		t.Fatalf("after the lock was released: exit %d: %s", code, errs)
	}
}

func TestBuildRefusesBadInputBeforeWriting(t *testing.T) {
	s := bareSite(t)
	out := filepath.Join(s.dir, "public")
	blocklist := filepath.Join(s.dir, "data", "blocklist.txt")
	os.WriteFile(blocklist, []byte("good.social\nnot a host!\n"), 0o644)
	code, _, errs := s.build(t, out)
	if code != exitFailure || !strings.Contains(errs, blocklist) || !strings.Contains(errs, "line 2") {
		t.Errorf("bad blocklist: exit %d, stderr %q; want a failure naming %s and line 2", code, errs, blocklist)
	}
	os.Remove(blocklist)

	missing := filepath.Join(s.dir, "nodata")
	code, _, errs = runObserver(t, "build", "--config", s.config, "--data", missing, "--out", out)
	if code != exitFailure || !strings.Contains(errs, missing) {
		t.Errorf("missing data dir: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runObserver(t, "build", "--config", s.config, "--data", s.data(), "--out", out, "extra")
	if code != exitUsage || !strings.Contains(errs, "extra") {
		t.Errorf("extra argument: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("bad input wrote the output")
	}
}
