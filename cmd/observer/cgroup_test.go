package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/fedisim"
)

// crawl.checker_cgroup reaches the checkers' pool: a directory that cannot
// hold checker cgroups (here, not a cgroup v2 one) is reported by name, and
// the pass goes on with the checkers' other limits.
func TestCrawlCheckerCgroupFromConfig(t *testing.T) {
	s := newSimSite(t, fedisim.Config{Instances: 20})
	dir := t.TempDir()
	cfg := fmt.Sprintf("[crawl]\nseeds = \"seeds.txt\"\nconcurrency = 2\nchecker_cgroup = %q\n", dir)
	if err := os.WriteFile(s.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := s.crawl(t, "2026-01-01T00:00:00Z", "--isolation", "process")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "could not use "+dir) {
		t.Fatalf("stderr does not report the unusable cgroup parent %s:\n%s", dir, errs)
	}
	if s.countChecks(t) == 0 {
		t.Fatal("no checks recorded")
	}
}
