package main

import (
	"encoding/csv"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mmcdole/gofeed"

	"github.com/fediverse-observer/observer/build/buildtest"
)

// hostileTexts are the hostile hosts whose name and description carry
// markup or spreadsheet formulas (fedisim/hostile.go).
var hostileTexts = []string{
	"hostile-script-tags.social",
	"hostile-formula-hyperlink.social",
	"hostile-formula-plus.social",
	"hostile-formula-minus.social",
	"hostile-formula-at.social",
	"hostile-formula-quoted.social",
}

// formulaStart is what a spreadsheet takes for the start of a formula.
const formulaStart = "=+-@\t\r"

// checkHostileSite builds the site from a crawl of the hostile hosts and
// checks that their names and descriptions arrive escaped in the HTML and
// the Atom feed, and inert in the CSV files. now is after the crawl.
func checkHostileSite(t *testing.T, s *simSite, now string) {
	// Every host here was discovered in the observer's first hour, inside
	// the default 7-day warmup, which keeps the first hosts off the new
	// list. The build's config has no warmup, so that they are new; the
	// crawl's config stays as it was (the warmup also decides when new
	// hosts are first checked).
	cfg := filepath.Join(s.dir, "build.toml")
	buildtest.WriteArchive(t, s.dir, `
-- build.toml --
[site]
title = "Hostile"
[state]
warmup = "0s"
`)
	data := s.data()

	// What the crawler recorded, read through the new list: it must still
	// carry the markup and the formulas, or the checks below prove nothing.
	in := "'" + strings.Join(hostileTexts, "','") + "'"
	code, out, errs := runObserver(t, "sql", "--config", cfg, "--data", data, "--now", now, "--format", "csv",
		"SELECT host, name, description FROM new WHERE host IN ("+in+") ORDER BY host")
	if code != exitOK {
		t.Fatalf("sql: exit %d: %s", code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("sql output: %v\n%s", err, out)
	}
	recorded := map[string][2]string{} // host -> name, description
	for _, r := range rows[1:] {
		recorded[r[0]] = [2]string{r[1], r[2]}
	}
	for _, h := range hostileTexts {
		rec, ok := recorded[h]
		info, _ := s.sim.Instance(h)
		switch {
		case !ok:
			t.Errorf("%s is not on the new list", h)
		case rec[0] != info.Name:
			t.Errorf("%s: recorded name %q, the server sent %q", h, rec[0], info.Name)
		}
	}
	if n := recorded["hostile-script-tags.social"]; !strings.Contains(n[0], "<script>") || !strings.Contains(n[1], "<img") {
		t.Errorf("the script-tags host's texts lost their markup before the build: %q", n)
	}
	if t.Failed() {
		t.FailNow()
	}

	public := filepath.Join(t.TempDir(), "public")
	code, out, errs = runObserver(t, "build", "--quiet", "--config", cfg, "--data", data, "--out", public, "--now", now)
	if code != exitOK {
		t.Fatalf("build: exit %d\n%s\n%s", code, out, errs)
	}
	read := func(rel string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(public, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	// HTML: no markup of theirs anywhere; on the home page each name and
	// description is text that unescapes to exactly what was recorded.
	for _, page := range []string{"index.html", "live/index.html"} {
		body := read(page)
		for _, bad := range []string{"<script>alert", "<img src=x", `href="javascript:`} {
			if strings.Contains(body, bad) {
				t.Errorf("%s contains %q", page, bad)
			}
		}
	}
	home := read("index.html")
	paragraph := func(block, class string) (string, bool) {
		m := regexp.MustCompile(`(?s)<p class="` + class + `">(.*?)</p>`).FindStringSubmatch(block)
		if m == nil {
			return "", false
		}
		return m[1], true
	}
	for _, h := range hostileTexts {
		block := instanceBlock(home, h)
		if block == "" {
			t.Errorf("index.html does not list %s", h)
			continue
		}
		for k, class := range []string{"name", "description"} {
			want := recorded[h][k]
			raw, ok := paragraph(block, class)
			if !ok {
				t.Errorf("index.html, %s: no %s", h, class)
				continue
			}
			if strings.ContainsAny(raw, `<>"`) {
				t.Errorf("index.html, %s: the %s is not escaped: %q", h, class, raw)
			}
			if got := html.UnescapeString(raw); got != want {
				t.Errorf("index.html, %s: the %s reads %q, want %q", h, class, got, want)
			}
		}
	}

	// Atom: after the XML is decoded, the entry's HTML shows the texts as
	// text: escaped once more, unescaping to what was recorded.
	f, err := os.Open(filepath.Join(public, "new.atom"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	feed, err := gofeed.NewParser().Parse(f)
	if err != nil {
		t.Fatalf("new.atom: %v", err)
	}
	entries := map[string]*gofeed.Item{}
	for _, it := range feed.Items {
		entries[it.Title] = it
	}
	strong := regexp.MustCompile(`(?s)<p><strong>(.*?)</strong></p>(?:<p>(.*?)</p>)?$`)
	for _, h := range hostileTexts {
		it := entries[h]
		if it == nil {
			t.Errorf("new.atom has no entry for %s", h)
			continue
		}
		for _, bad := range []string{"<script", "<img", `href="javascript:`} {
			if strings.Contains(it.Content, bad) {
				t.Errorf("new.atom, %s: the content carries %q: %s", h, bad, it.Content)
			}
		}
		m := strong.FindStringSubmatch(it.Content)
		if m == nil {
			t.Errorf("new.atom, %s: no name and description in %q", h, it.Content)
			continue
		}
		for k, raw := range m[1:] {
			if strings.ContainsAny(raw, `<>"`) {
				t.Errorf("new.atom, %s: %q is not escaped", h, raw)
			}
			if got := html.UnescapeString(raw); got != recorded[h][k] {
				t.Errorf("new.atom, %s: reads %q, want %q", h, got, recorded[h][k])
			}
		}
	}
	if raw := read("new.atom"); strings.Contains(raw, "<script") || strings.Contains(raw, "<img") {
		t.Error("new.atom carries a raw <script> or <img> element")
	}

	// CSV: no cell starts a formula; the hostile texts are there with an
	// apostrophe in front where they would, and otherwise exactly.
	for _, name := range []string{"new.csv", "live.csv"} {
		rows, err := csv.NewReader(strings.NewReader(read(name))).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		byHost := map[string][]string{}
		for _, row := range rows {
			byHost[row[0]] = row
			for _, cell := range row {
				if cell != "" && strings.ContainsRune(formulaStart, rune(cell[0])) {
					t.Errorf("%s: cell %q starts with a formula character", name, cell)
				}
			}
		}
		for _, h := range hostileTexts {
			row := byHost[h]
			if row == nil {
				t.Errorf("%s does not list %s", name, h)
				continue
			}
			if name != "new.csv" {
				continue
			}
			for k, col := range []int{slices.Index(rows[0], "name"), slices.Index(rows[0], "description")} {
				want := recorded[h][k]
				if want != "" && strings.ContainsRune(formulaStart, rune(want[0])) {
					want = "'" + want
				}
				if col < 0 || row[col] != want {
					t.Errorf("new.csv, %s: %v, want %q in column %d", h, row, want, col)
				}
			}
		}
	}
}

// instanceBlock is the home page's list item for host, or "".
func instanceBlock(page, host string) string {
	for _, block := range strings.Split(page, `<li class="instance">`)[1:] {
		if end := strings.Index(block, "</li>"); end >= 0 {
			block = block[:end]
		}
		if strings.Contains(block, `">`+host+`</a>`) {
			return block
		}
	}
	return ""
}
