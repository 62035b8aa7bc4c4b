package build_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/build"
	"github.com/fediverse-observer/observer/build/buildtest"
)

// An output directory is replaced as a whole, so one that is, holds or sits
// in the site's sources or the data directory would destroy them.
func TestOutputThatWouldDestroyInputsIsRefused(t *testing.T) {
	root := t.TempDir()
	site := smallSite(t)
	// The site lives in root/site, with its data beside content/, and a
	// link elsewhere that points into it.
	if err := os.Rename(site, filepath.Join(root, "site")); err != nil {
		t.Fatal(err)
	}
	site = filepath.Join(root, "site")
	data := filepath.Join(site, "data")
	buildtest.WriteTree(t, data, map[string]string{"checks/date=2026-11-21/a.parquet": "snapshot"})
	config := filepath.Join(site, "observer.toml")
	buildtest.WriteTree(t, site, map[string]string{"observer.toml": "# config\n"})
	buildtest.WriteTree(t, root, map[string]string{"notes.txt": "not a site"})
	link := filepath.Join(root, "link-to-content")
	if err := os.Symlink(filepath.Join(site, "content"), link); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, out, want string
	}{
		{"the site itself", site, "would replace the site directory"},
		{"a directory holding the site", root, "would replace the site directory"},
		{"the data directory", data, "would replace " + data},
		{"inside the data directory", filepath.Join(data, "public"), "is inside " + data},
		{"content", filepath.Join(site, "content"), "would replace"},
		{"inside content", filepath.Join(site, "content", "docs"), "is inside"},
		{"inside static, not yet existing", filepath.Join(site, "static", "new", "public"), "is inside"},
		{"themes", filepath.Join(site, "themes"), "would replace"},
		{"a link to content", link, "would replace"},
		{"inside a link to content", filepath.Join(link, "public"), "is inside"},
		{"the config file", config, "would replace " + config},
		{"a file", filepath.Join(site, "content", "docs", "image.txt"), "is inside"},
		{"the root", "/", "root"},
		{"a file elsewhere", filepath.Join(root, "notes.txt"), "exists and is not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := build.CheckOutDir(tc.out, site, data, config)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckOutDir(%s) = %v, want an error containing %q", tc.out, err, tc.want)
			}
		})
	}
	for _, ok := range []string{filepath.Join(site, "public"), filepath.Join(root, "elsewhere", "public"), filepath.Join(site, "out", "www")} {
		if err := build.CheckOutDir(ok, site, data, config); err != nil {
			t.Errorf("CheckOutDir(%s) = %v, want nil", ok, err)
		}
	}

	// Build itself refuses, whoever calls it, and leaves the sources as
	// they were.
	before := snapshot(t, filepath.Join(site, "content"))
	_, err := build.Build(context.Background(), build.Options{Site: testConfig().BuildSettings("dev"), SiteDir: site,
		OutDir: filepath.Join(site, "content"), Data: smallData(), Now: now})
	if err == nil || !strings.Contains(err.Error(), "would replace") {
		t.Fatalf("build into content/: %v", err)
	}
	if after := snapshot(t, filepath.Join(site, "content")); len(after) != len(before) {
		t.Errorf("content/ changed: %d files before, %d after", len(before), len(after))
	}
	if _, err := os.Stat(filepath.Join(data, "checks", "date=2026-11-21", "a.parquet")); err != nil {
		t.Errorf("data: %v", err)
	}
}

// A build replaces its output whole, so an existing directory must be
// empty or one a build wrote (it marks its output): /etc or a folder of
// notes given as the output by mistake is refused, and left as it was.
func TestOutputHoldingOtherFilesIsRefused(t *testing.T) {
	site := smallSite(t)
	opts := func(out string) build.Options {
		return build.Options{Site: testConfig().BuildSettings("dev"), SiteDir: site, OutDir: out, Data: smallData(), Now: now}
	}
	notes := filepath.Join(t.TempDir(), "notes")
	buildtest.WriteTree(t, notes, map[string]string{"todo.txt": "precious", "sub/more.txt": "more"})
	_, err := build.Build(context.Background(), opts(notes))
	if err == nil || !strings.Contains(err.Error(), "was not built by observer") {
		t.Fatalf("build into a folder of notes: %v", err)
	}
	if got := snapshot(t, notes); len(got) != 2 {
		t.Fatalf("the folder changed: %v", got)
	}
	if err := build.CheckOutDir(notes, site); err == nil || !strings.Contains(err.Error(), notes) {
		t.Fatalf("CheckOutDir(%s) = %v, want an error naming it", notes, err)
	}

	// An empty directory (made beforehand with the right owner, say) is
	// fine, and the site built there is marked, so the next build may
	// replace it.
	out := filepath.Join(t.TempDir(), "public")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := build.Build(context.Background(), opts(out)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, ".observer-build")); err != nil {
		t.Fatalf("the built site is not marked: %v", err)
	}
}

// An output that is a symbolic link, even to a directory, is refused (the
// swap would replace the link and leave its target, the directory actually
// served, with the old site), and the message says so and names the target
// to give instead: it said the link "is not a directory".
func TestOutputThatIsASymbolicLinkIsRefusedNamingItsTarget(t *testing.T) {
	site := smallSite(t)
	root := t.TempDir()
	target := filepath.Join(root, "www", "site")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "public")
	if err := os.Symlink(filepath.Join("www", "site"), link); err != nil {
		t.Fatal(err)
	}
	want := "output " + link + " is a symbolic link (to www/site): give the directory itself"
	if err := build.CheckOutDir(link, site); err == nil || err.Error() != want {
		t.Errorf("CheckOutDir = %v, want %q", err, want)
	}
	_, err := build.Build(context.Background(), build.Options{Site: testConfig().BuildSettings("dev"), SiteDir: site, OutDir: link, Data: smallData(), Now: now})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Build = %v, want an error containing %q", err, want)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", st, err)
	}
	if entries, err := os.ReadDir(target); err != nil || len(entries) != 0 {
		t.Errorf("the link's target changed: %v, %v", entries, err)
	}
	// The target itself is a fine output.
	if err := build.CheckOutDir(target, site); err != nil {
		t.Errorf("CheckOutDir(%s) = %v", target, err)
	}
}

// The preview watches the site's sources, the data directory and the files
// the site is built with, leaving out those it has none of.
func TestWatchPaths(t *testing.T) {
	got := build.WatchPaths("site", "data", "site/observer.toml", "", "site/blocklist.txt")
	want := []string{filepath.Join("site", "content"), filepath.Join("site", "layouts"), filepath.Join("site", "static"), filepath.Join("site", "themes"),
		"data", "site/observer.toml", "site/blocklist.txt"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("WatchPaths = %q, want %q", got, want)
	}
}
