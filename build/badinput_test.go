package build_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// A partial that includes itself, directly or through another, fails the
// build with a message naming it; it used to recurse until the stack
// overflowed, which killed the process (observer serve with it).
func TestRecursivePartialIsAnError(t *testing.T) {
	for name, partials := range map[string]map[string]string{
		"itself": {"layouts/_partials/r.html": `{{ partial "r.html" . }}`},
		"mutual": {"layouts/_partials/r.html": `{{ partial "s.html" . }}`, "layouts/_partials/s.html": `x{{ partial "r.html" . }}`},
	} {
		files := map[string]string{
			"layouts/page.html": `<p>{{ partial "r.html" . }}</p>`,
			"content/a.md":      "---\ntitle: A\n---\na\n",
		}
		for k, v := range partials {
			files[k] = v
		}
		_, _, err := run(t, writeTree(t, t.TempDir(), files), testConfig(), smallData())
		if err == nil {
			t.Fatalf("%s: built", name)
		}
		msg := err.Error()
		if !strings.Contains(msg, "partials nested more than 100 deep (does it include itself?)") ||
			!strings.Contains(msg, "content/a.md") || !strings.Contains(msg, "layouts/_partials/") {
			t.Errorf("%s: %v, want the page, the partial and the nesting named", name, err)
		}
		if n := strings.Count(msg, "error calling partial"); n != 1 {
			t.Errorf("%s: %q names %d partial calls, want 1", name, msg, n)
		}
	}
	// Nesting that ends is fine.
	site := writeTree(t, t.TempDir(), map[string]string{
		"layouts/page.html":            `<p>{{ partial "count.html" 50 }}</p>`,
		"layouts/_partials/count.html": `{{ if gt . 0 }}{{ partial "count.html" (sub . 1) }}{{ else }}bottom{{ end }}`,
		"content/a.md":                 "---\ntitle: A\n---\na\n",
	})
	out, _ := mustBuild(t, site, testConfig(), smallData())
	assertContains(t, "a/index.html", read(t, filepath.Join(out, "a", "index.html")), "<p>bottom</p>")
}

// A front matter error names the line of the content file, in one line:
// YAML's lines used to be counted from after the opening ---, and TOML's
// errors had no line at all.
func TestFrontMatterErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"---\ntitle: A\ndescription: B\nbad: [unclosed\n---\nbody", "content/x.md:4: front matter: "},
		{"---\r\ntitle: A\r\n\r\n: :\r\n---\r\n", "content/x.md:4: front matter: "},
		{"---\ntitle: A\ntitle: B\n---\n", "content/x.md:3: front matter: mapping key \"title\" already defined at line 2"},
		{"+++\ntitle = \"A\"\n\nweight = \n+++\n", "content/x.md:4: front matter: "},
		{"+++\ntitle = \"A\"\ntitle = \"B\"\n+++\n", "content/x.md:3: front matter: "},
	} {
		_, _, err := run(t, writeTree(t, t.TempDir(), map[string]string{"content/x.md": c.src}), testConfig(), smallData())
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("%q: %q, want one line with %q", c.src, err, c.want)
		}
	}
}
