package preview

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A linked content/ is followed by the build, so the preview watches the
// tree behind the link too: an edit in one of its folders is an event
// under the name the watch was given.
func TestWatcherFollowsALinkedTree(t *testing.T) {
	real := t.TempDir()
	if err := os.MkdirAll(filepath.Join(real, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	site := t.TempDir()
	content := filepath.Join(site, "content")
	if err := os.Symlink(real, content); err != nil {
		t.Fatal(err)
	}
	w, err := newWatcher([]string{content}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if err := os.WriteFile(filepath.Join(real, "docs", "guide.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(content, "docs", "guide.md")
	// A safety net only: the wait is on the event.
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-w.events():
			if ev.Name == want {
				if !w.relevant(ev) {
					t.Fatalf("%v is not taken for a change of the site", ev)
				}
				return
			}
		case err := <-w.errors():
			t.Fatal(err)
		case <-timeout:
			t.Fatalf("no event for %s: the linked tree's folders are not watched", want)
		}
	}
}
