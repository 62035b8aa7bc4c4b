package buildtest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fediverse-observer/observer/build/buildtest"
)

// A file of an archive ends where its last line does, as in Hugo's
// tests; an empty line after it is a final newline.
func TestWriteArchiveFileEnds(t *testing.T) {
	dir := buildtest.WriteArchive(t, t.TempDir(), `
-- a.html --
{{ .Title }}
-- sub/b.txt --
two
lines

-- c.txt --
`)
	for name, want := range map[string]string{"a.html": "{{ .Title }}", "sub/b.txt": "two\nlines\n", "c.txt": ""} {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}
}
