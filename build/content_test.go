package build_test

import (
	"os"
	"path/filepath"
	"testing"
)

// A content/ that is a link (to a checkout elsewhere, say) builds like the
// directory it points at; it used to build a site without pages.
func TestLinkedContentDirectoryBuilds(t *testing.T) {
	real := writeTree(t, t.TempDir(), map[string]string{
		"about.md":       "---\ntitle: About\n---\nabout\n",
		"docs/guide.md":  "---\ntitle: Guide\n---\nguide\n",
		"docs/image.txt": "an asset",
	})
	site := t.TempDir()
	if err := os.Symlink(real, filepath.Join(site, "content")); err != nil {
		t.Fatal(err)
	}
	out, rep := mustBuild(t, site, testConfig(), smallData())
	for _, f := range []string{"about/index.html", "docs/guide/index.html", "docs/image.txt"} {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(f))); err != nil {
			t.Errorf("%s: %v (pages built: %d)", f, err, rep.Pages)
		}
	}
}
