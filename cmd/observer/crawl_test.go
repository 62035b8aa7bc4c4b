package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/fedisim"
)

// A pass that leaves hosts over only because their address was busy says
// so rather than blaming a budget that did not run out.
func TestNotStartedReasonNamesTheCause(t *testing.T) {
	for _, c := range []struct {
		sum  crawl.Summary
		want string
	}{
		{crawl.Summary{NotStarted: 5}, "5 due hosts left for a later pass (budget reached)"},
		{crawl.Summary{NotStarted: 3, AddressBusy: 3}, "3 due hosts left for a later pass (address busy and every place to wait for it taken)"},
		{crawl.Summary{NotStarted: 5, AddressBusy: 2}, "5 due hosts left for a later pass (budget reached; 2 of them: address busy and every place to wait for it taken)"},
	} {
		if got := notStartedReason(c.sum); got != c.want {
			t.Errorf("notStartedReason(%+v) = %q, want %q", c.sum, got, c.want)
		}
	}
}

// A crawl creates a missing data directory (the first pass of a new
// observer) and says so, since a --data or working directory other than the
// usual one would otherwise start a second observer from nothing unseen.
func TestCrawlSaysItCreatedTheDataDirectory(t *testing.T) {
	s := newSimSite(t, fedisim.Config{})
	data := filepath.Join(s.dir, "new", "data")
	run := func() string {
		t.Helper()
		// --quiet, as from cron: the line is a warning.
		args := append([]string{"crawl", "--quiet", "--config", s.config, "--data", data, "--now", "2026-01-01T00:00:00Z", "--max-checks", "1"}, s.net...)
		code, out, errs := runObserver(t, args...)
		if code != exitOK && code != exitCutShort {
			t.Fatalf("exit %d\n%s\n%s", code, out, errs)
		}
		return errs
	}
	if errs := run(); !strings.Contains(errs, "created the data directory") || !strings.Contains(errs, data) {
		t.Errorf("first crawl into a new directory does not say it created it:\n%s", errs)
	}
	if errs := run(); strings.Contains(errs, "created the data directory") {
		t.Errorf("second crawl says it created the directory:\n%s", errs)
	}
}
