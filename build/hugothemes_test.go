package build_test

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/fediverse-observer/observer/build"
	"github.com/fediverse-observer/observer/build/buildtest"
	"github.com/fediverse-observer/observer/config"
)

// themesDir holds the public Hugo themes vendored for this test (each
// with a PROVENANCE file: repository, commit, licence), the test site
// they are built with (site/) and the differences that remain
// (differences.tsv).
var themesDir = filepath.Join("testdata", "themes")

// TestHugoThemesBuildAsHugoDoes builds the test site with each vendored
// theme, unchanged, twice: with Debian's hugo, and as observer build does
// (its observer.toml read as the command reads it, an empty data
// directory's worth of observer data), and
// compares every HTML page Hugo writes with the observer's: its title,
// its visible text and its links. What differs must be listed, with its
// reason, in differences.tsv, and every listed difference must still
// occur, so that the list (and docs/theming.md, which gives it to
// users) stays true.
func TestHugoThemesBuildAsHugoDoes(t *testing.T) {
	hugo, err := exec.LookPath("hugo")
	if err != nil {
		t.Fatalf("this test needs Debian's hugo, which scripts/install-test-deps.sh installs: %v", err)
	}
	diffs := readDifferences(t, filepath.Join(themesDir, "differences.tsv"))
	entries, err := os.ReadDir(themesDir)
	if err != nil {
		t.Fatal(err)
	}
	var themes []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(themesDir, e.Name(), "PROVENANCE")); err == nil {
			themes = append(themes, e.Name())
		}
	}
	if len(themes) < 3 {
		t.Fatalf("%d vendored themes, want at least 3", len(themes))
	}
	// The observer is told the time Hugo reads from the clock, since
	// themes print the year.
	now := time.Now().UTC().Truncate(time.Second)
	for _, theme := range themes {
		t.Run(theme, func(t *testing.T) {
			work := t.TempDir()
			copyDir(t, filepath.Join(themesDir, "site"), work)
			copyDir(t, filepath.Join(themesDir, theme), filepath.Join(work, "themes", theme))
			setObserverTheme(t, filepath.Join(work, "observer.toml"), theme)

			hugoOut := filepath.Join(t.TempDir(), "hugo")
			cmd := exec.Command(hugo, "--quiet", "--source", work, "--config", filepath.Join(work, "hugo.toml"),
				"--themesDir", filepath.Join(work, "themes"), "--theme", theme,
				"--destination", hugoOut, "--cacheDir", t.TempDir(), "--noBuildLock")
			cmd.Env = append(os.Environ(), "HUGO_ENVIRONMENT=production", "TZ=UTC")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("hugo: %v\n%s", err, b)
			}

			cfg := config.Default()
			b, err := os.ReadFile(filepath.Join(work, "observer.toml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := config.Parse(b, &cfg); err != nil {
				t.Fatalf("observer.toml: %v", err)
			}
			obsOut := filepath.Join(t.TempDir(), "public")
			_, err = build.Build(context.Background(), build.Options{Site: cfg.BuildSettings("dev"), SiteDir: work, OutDir: obsOut, Data: &buildtest.Fake{}, Now: now})
			if err != nil {
				t.Fatalf("observer build: %v", err)
			}

			comparePages(t, theme, hugoOut, obsOut, diffs)
		})
	}
	for _, d := range diffs {
		if !d.used && slices.Contains(themes, d.theme) || !d.used && d.theme == "*" {
			t.Errorf("differences.tsv:%d (%s %s %s) no longer occurs: remove it, and from docs/theming.md", d.line, d.theme, d.pages, d.field)
		}
	}
}

// difference is one listed difference: in the pages of a theme (or "*")
// matching a pattern, the field (title, text, links, or page for a page
// Hugo writes and the observer does not) shows hugo where Hugo shows it
// and observer where the observer does.
type difference struct {
	theme, pages, field string
	hugo, observer      string
	line                int
	used                bool
}

func readDifferences(t *testing.T, file string) []*difference {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*difference
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 6 {
			t.Fatalf("%s:%d: want 6 tab-separated fields (theme, pages, field, hugo, observer, reason), got %d", file, n, len(cols))
		}
		switch cols[2] {
		case "title", "text", "links", "page":
		default:
			t.Fatalf("%s:%d: field %q is not title, text, links or page", file, n, cols[2])
		}
		if cols[5] == "" {
			t.Fatalf("%s:%d: a difference needs its reason", file, n)
		}
		out = append(out, &difference{theme: cols[0], pages: cols[1], field: cols[2], hugo: unescape(cols[3]), observer: unescape(cols[4]), line: n})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// unescape lets a field hold a tab or a newline (\t, \n) and be empty (∅).
func unescape(s string) string {
	if s == "∅" {
		return ""
	}
	return strings.NewReplacer(`\t`, "\t", `\n`, "\n").Replace(s)
}

func (d *difference) applies(theme, page, field string) bool {
	if d.field != field || d.theme != "*" && d.theme != theme {
		return false
	}
	ok, _ := path.Match(d.pages, page)
	return ok
}

func comparePages(t *testing.T, theme, hugoOut, obsOut string, diffs []*difference) {
	t.Helper()
	var pages []string
	err := filepath.WalkDir(hugoOut, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		rel, err := filepath.Rel(hugoOut, p)
		pages = append(pages, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("hugo wrote no pages")
	}
	for _, page := range pages {
		hv := readView(t, filepath.Join(hugoOut, page))
		if _, err := os.Stat(filepath.Join(obsOut, page)); err != nil {
			if !expected(diffs, theme, page, "page", "exists", "missing") {
				t.Errorf("%s: Hugo writes it, the observer does not", page)
			}
			continue
		}
		ov := readView(t, filepath.Join(obsOut, page))
		for _, f := range []struct{ name, hugo, obs string }{
			{"title", hv.title, ov.title},
			{"text", hv.text, ov.text},
			{"links", strings.Join(hv.links, "\n"), strings.Join(ov.links, "\n")},
		} {
			want := f.hugo
			for _, d := range diffs {
				if d.applies(theme, page, f.name) && strings.Contains(want, d.hugo) {
					want = strings.ReplaceAll(want, d.hugo, d.observer)
					d.used = true
				}
			}
			if want != f.obs {
				t.Errorf("%s: the %s differs from Hugo's:\n%s", page, f.name, firstDifference(want, f.obs))
			}
		}
	}
}

// expected reports whether a whole-page difference is listed, marking it.
func expected(diffs []*difference, theme, page, field, hugo, obs string) bool {
	for _, d := range diffs {
		if d.applies(theme, page, field) && d.hugo == hugo && d.observer == obs {
			d.used = true
			return true
		}
	}
	return false
}

// firstDifference shows where two texts part, with some context.
func firstDifference(hugo, obs string) string {
	i := 0
	for i < len(hugo) && i < len(obs) && hugo[i] == obs[i] {
		i++
	}
	from := max(0, i-60)
	cut := func(s string) string { return s[min(from, len(s)):min(i+100, len(s))] }
	return fmt.Sprintf("  hugo:     …%q…\n  observer: …%q…", cut(hugo), cut(obs))
}

// view is what a reader of a page sees of it: the title, the text of the
// body (white space folded, what scripts, styles and templates hold left
// out) and the targets of its links.
type view struct {
	title string
	text  string
	links []string
}

func readView(t *testing.T, file string) view {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var v view
	var text []string
	var walk func(n *html.Node, inBody bool)
	walk = func(n *html.Node, inBody bool) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "style", "template", "noscript":
				return
			case "title":
				if !inBody && v.title == "" {
					v.title = fold(textOf(n))
					return
				}
			case "body":
				inBody = true
			case "a":
				for _, a := range n.Attr {
					if a.Key == "href" {
						v.links = append(v.links, a.Val)
					}
				}
			}
		}
		if n.Type == html.TextNode && inBody {
			text = append(text, n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inBody)
		}
	}
	walk(doc, false)
	v.text = fold(strings.Join(text, " "))
	return v
}

func textOf(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

// fold makes each run of white space one space.
func fold(s string) string { return strings.Join(strings.Fields(s), " ") }

// copyDir copies a directory tree of regular files.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// setObserverTheme names the theme in observer.toml's [site] table, as a
// user switching themes would.
func setObserverTheme(t *testing.T, file, theme string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := strings.CutPrefix(string(b), "[site]\n")
	if !ok {
		t.Fatalf("%s must begin with [site]", file)
	}
	if err := os.WriteFile(file, []byte("[site]\ntheme = \""+theme+"\"\n"+s), 0o644); err != nil {
		t.Fatal(err)
	}
}
