package build_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/build/buildtest"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// The default theme's home page says when a new instance is no longer live
// (a moved or dead one would otherwise look like any other), counts one
// user as one, offers each per-software feed to feed readers, and shows at
// most 1,000 instances, pointing to new.csv for the rest.
func TestDefaultThemeHomePage(t *testing.T) {
	moved := observer.Instance{Host: "moved.example", State: observer.StateMoved, Software: "mastodon", Users: i64(1),
		FirstAliveAt: now.Add(-3 * time.Hour)}
	data := smallData()
	data.NewList = append(data.NewList, moved)
	out, _ := mustBuild(t, smallSite(t), testConfig(), data)
	home := testsupport.ReadFile(t, filepath.Join(out, "index.html"))
	if n := strings.Count(home, `<span class="state">`); n != 1 || !strings.Contains(home, `<span class="state">moved</span>`) {
		t.Errorf("want one state badge, for moved.example; got %d in\n%s", n, home)
	}
	if !strings.Contains(home, "<span>1 user</span>") || strings.Contains(home, "1 users") || !strings.Contains(home, "<span>12 users</span>") {
		t.Error("user counts are not pluralised right")
	}
	for _, software := range []string{"mastodon", "lemmy"} {
		link := fmt.Sprintf(`<link rel="alternate" type="application/atom+xml" title="Test Observer: new %s instances" href="/new/%s.atom">`, software, software)
		if !strings.Contains(home, link) {
			t.Errorf("no feed autodiscovery for %s (want %s)", software, link)
		}
	}
	if page := testsupport.ReadFile(t, filepath.Join(out, "docs", "guide", "index.html")); strings.Contains(page, "new/mastodon.atom") {
		t.Error("a content page advertises the per-software feeds")
	}

	many := &buildtest.Fake{StatsValue: data.StatsValue}
	for i := range 1001 {
		many.NewList = append(many.NewList, observer.Instance{Host: fmt.Sprintf("n%04d.example", i), State: observer.StateLive,
			FirstAliveAt: now.Add(-time.Duration(i) * time.Minute)})
	}
	out, _ = mustBuild(t, smallSite(t), testConfig(), many)
	home = testsupport.ReadFile(t, filepath.Join(out, "index.html"))
	if n := strings.Count(home, `<li class="instance">`); n != 1000 || !strings.Contains(home, "The newest 1000 of 1001") ||
		strings.Contains(home, "n1000.example") {
		t.Errorf("%d instances on the home page; want the newest 1,000 and a pointer to new.csv", n)
	}
}

// A farm of hosts that each name a software of their own gets no feed per
// host: the per-software feeds (files, head links, the home page's list)
// are the hundred families with the most live hosts, and the live page
// lists the hundred software with the most and counts the rest.
func TestSoftwareNamesOfAHostFarmAreCapped(t *testing.T) {
	data := smallData()
	data.StatsValue.BySoftware = []observer.SoftwareCount{{Software: "mastodon", Live: 5}, {Software: "lemmy", Live: 2}}
	for i := range 150 {
		inst := observer.Instance{Host: fmt.Sprintf("farm%03d.example", i), State: observer.StateLive,
			Software: fmt.Sprintf("spam%03d", i), FirstAliveAt: now.Add(-time.Duration(i+1) * time.Minute)}
		data.NewList = append(data.NewList, inst)
		data.LiveList = append(data.LiveList, inst)
		data.StatsValue.BySoftware = append(data.StatsValue.BySoftware, observer.SoftwareCount{Software: inst.Software, Live: 1})
	}
	slices.SortFunc(data.LiveList, func(a, b observer.Instance) int { return strings.Compare(a.Host, b.Host) })
	out, _ := mustBuild(t, smallSite(t), testConfig(), data)
	feeds, err := os.ReadDir(filepath.Join(out, "new"))
	if err != nil {
		t.Fatal(err)
	}
	if len(feeds) != 100 {
		t.Errorf("%d per-software feeds, want 100", len(feeds))
	}
	for _, f := range []string{"mastodon.atom", "lemmy.atom", "spam000.atom"} {
		if _, err := os.Stat(filepath.Join(out, "new", f)); err != nil {
			t.Errorf("new/%s: %v", f, err)
		}
	}
	home := testsupport.ReadFile(t, filepath.Join(out, "index.html"))
	if n := strings.Count(home, `<link rel="alternate" type="application/atom+xml"`); n != 101 {
		t.Errorf("the home page offers %d feeds, want the site's and 100", n)
	}
	live := testsupport.ReadFile(t, filepath.Join(out, "live", "index.html"))
	if n := strings.Count(live, `<tr><th scope="row">`); n != 100 {
		t.Errorf("the live page lists %d software, want 100", n)
	}
	assertContains(t, "live/index.html", live, "and 52 more software")
}

// A software with live hosts but none new keeps its feed, empty, so its
// subscribers do not get a 404 after a quiet month; the home page lists it
// with a count of 0 but offers only feeds with entries to feed readers.
func TestQuietSoftwareKeepsItsFeed(t *testing.T) {
	data := smallData()
	data.StatsValue.BySoftware = append(data.StatsValue.BySoftware, observer.SoftwareCount{Software: "pleroma", Live: 5})
	out, _ := mustBuild(t, smallSite(t), testConfig(), data)
	feed := testsupport.ReadFile(t, filepath.Join(out, "new", "pleroma.atom"))
	if !strings.Contains(feed, "<title>Test Observer: new pleroma instances</title>") || strings.Contains(feed, "<entry>") {
		t.Errorf("new/pleroma.atom:\n%s", feed)
	}
	home := testsupport.ReadFile(t, filepath.Join(out, "index.html"))
	if !strings.Contains(home, `<a href="/new/pleroma.atom">pleroma</a> <span class="muted">(0)</span>`) {
		t.Error("the home page does not list the quiet feed")
	}
	if strings.Contains(home, `href="/new/pleroma.atom">`+"\n") || strings.Contains(home, `title="Test Observer: new pleroma instances"`) {
		t.Error("an empty feed is offered to feed readers")
	}
}
