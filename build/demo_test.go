package build_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// goTool is the go command, to build the binaries the demo runs. go test
// puts its own GOROOT/bin first on the PATH of the tests it runs.
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: TestDemo builds bin/observer and bin/fedisim with it: %v", err)
	}
	return p
}

// TestDemo runs scripts/demo.sh (what make demo runs) with freshly built
// binaries into a temporary directory, checks that the site it builds is
// plausible for the simulated Fediverse, and looks at the home and live
// pages in Chromium at a phone's and a desktop's width (screenshots in the
// artefacts directory, demo-*.png).
//
// It runs the demo at its default size (3000 instances), as make demo
// does: 1 min 30 s on the 2-core machine it was written on, beside a
// running benchmark, but 11 min when other test runs loaded the machine
// too (load average 25), most of it per pass (a process start, a
// derivation, the hostile hosts stalling each large pass until their 5 s
// check deadline). DEMO_INSTANCES in the environment sets a smaller world
// (600 took 4 min at that load, with the same kinds of hosts: hostile
// ones, deaths, moves, opt-outs).
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the demo crawls two simulated weeks")
	}
	bin := t.TempDir()
	started := time.Now()
	build := exec.Command(goTool(t), "build", "-o", bin+string(filepath.Separator), "../cmd/observer", "../cmd/fedisim")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("built observer and fedisim in %s", time.Since(started).Round(time.Millisecond))

	// A deadline of our own, inside go test's: the script and every process
	// it started get SIGTERM (the script's trap stops the simulator, the
	// crawl stops cleanly) rather than outliving the test.
	timeout := 20 * time.Minute
	if d, ok := t.Deadline(); ok {
		timeout = min(timeout, time.Until(d)-30*time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "demo")
	cmd := exec.CommandContext(ctx, "../scripts/demo.sh")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	cmd.Env = append(os.Environ(), "DEMO_DIR="+dir,
		"OBSERVER="+filepath.Join(bin, "observer"), "FEDISIM="+filepath.Join(bin, "fedisim"))
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	started = time.Now()
	err := cmd.Run()
	t.Logf("scripts/demo.sh ran in %s:\n%s", time.Since(started).Round(time.Millisecond), log.String())
	if err != nil {
		if ctx.Err() != nil {
			t.Fatalf("scripts/demo.sh did not finish within %s", timeout)
		}
		t.Fatalf("scripts/demo.sh: %v (its output is above; per-pass logs were in %s)", err, filepath.Join(dir, "logs"))
	}
	// Every pass ran and was reported; a failed one would have stopped the script.
	if n := strings.Count(log.String(), "demo: day "); n != 28 {
		t.Errorf("the demo reported %d passes, want 14 days × 2", n)
	}

	public := filepath.Join(dir, "public")
	for _, f := range []string{"index.html", "live/index.html", "about/index.html", "404.html", "new.atom", "new.csv",
		"live.txt", "live.csv", "live.json", "sitemap.xml", "robots.txt", "style.css"} {
		if st, err := os.Stat(filepath.Join(public, f)); err != nil || st.Size() == 0 {
			t.Errorf("the demo site lacks %s (or it is empty): %v", f, err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// live.txt: one host per line, sorted, no duplicates, a plausible count
	// for the simulated world (most of it answers; the hostile hosts and the
	// dead do not).
	live := strings.Fields(testsupport.ReadFile(t, filepath.Join(public, "live.txt")))
	m := regexp.MustCompile(`simulated Fediverse: (\d+) instances`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatal("the demo did not say how many instances it simulates")
	}
	n, _ := strconv.Atoi(m[1])
	if len(live) < n/2 || len(live) > n+100 {
		t.Errorf("live.txt lists %d hosts for a simulated Fediverse of %d", len(live), n)
	}
	if !slices.IsSorted(live) || len(slices.Compact(slices.Clone(live))) != len(live) {
		t.Error("live.txt is not sorted or has duplicates")
	}
	liveRows := readCSV(t, filepath.Join(public, "live.csv"))
	if len(liveRows)-1 != len(live) {
		t.Errorf("live.csv has %d rows, live.txt %d hosts", len(liveRows)-1, len(live))
	}

	// The new list: in new.csv, on the home page and in the feed.
	newRows := readCSV(t, filepath.Join(public, "new.csv"))
	if len(newRows) < 2 || newRows[0][0] != "host" {
		t.Fatalf("new.csv has no instances: %q", newRows)
	}
	home := testsupport.ReadFile(t, filepath.Join(public, "index.html"))
	assertContains(t, "index.html", home, "Fediverse Observer (offline demo)")
	if got := strings.Count(home, `<li class="instance">`); got != len(newRows)-1 {
		t.Errorf("index.html lists %d instances, new.csv %d", got, len(newRows)-1)
	}
	newHosts := map[string]bool{}
	for _, r := range newRows[1:] {
		newHosts[r[0]] = true
		if !strings.Contains(home, ">"+r[0]+"</a>") {
			t.Errorf("index.html does not list the new instance %s", r[0])
		}
	}
	feed := parseFeed(t, filepath.Join(public, "new.atom"))
	if len(feed.Items) == 0 {
		t.Error("new.atom has no entries")
	}
	for _, item := range feed.Items {
		if !newHosts[item.Title] {
			t.Errorf("new.atom has an entry %q that new.csv does not list", item.Title)
		}
	}

	// The live page draws its history as inline SVG, one point per day.
	livePage := testsupport.ReadFile(t, filepath.Join(public, "live", "index.html"))
	assertContains(t, "live/index.html", livePage, `<svg class="chart chart-live"`, `<svg class="chart chart-new"`)
	assertNotContains(t, "live/index.html", livePage, "No history yet")

	// Over two weeks the simulated Fediverse changed: hosts died and moved.
	for _, state := range []string{"dead", "moved"} {
		got := demoSQL(t, bin, dir, "SELECT count(*) FROM transitions WHERE to_state = '"+state+"'")
		if n, err := strconv.Atoi(got); err != nil || n == 0 {
			t.Errorf("transitions to %s: %q, want some", state, got)
		}
	}

	t.Run("browser", func(t *testing.T) { browseDemo(t, public, newRows[1][0]) })
}

// demoSQL runs one query with the demo's observer over its data and
// returns the single value it answers.
func demoSQL(t *testing.T, bin, dir, query string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "observer"), "sql", "--config", "observer.toml", "--data", "data", "--format", "csv", query)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("observer sql %q: %v\n%s", query, err, stderr.String())
	}
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 2 || len(rows[1]) != 1 {
		t.Fatalf("observer sql %q: want one value, got %q (%v)", query, out, err)
	}
	return rows[1][0]
}

// browseDemo opens the demo's home and live pages in Chromium at a phone's
// and a desktop's width.
func browseDemo(t *testing.T, public, firstNew string) {
	chromium := chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // safety net
	defer cancel()
	srv := httptest.NewServer(http.FileServer(http.Dir(public)))
	defer srv.Close()
	b := startBrowser(t, chromium)
	p := b.newPage(ctx, t)
	arts := artifactsDir(t)
	for _, v := range []struct {
		name          string
		width, height int
		mobile        bool
	}{
		{"phone", 390, 844, true},
		{"desktop", 1440, 900, false},
	} {
		for _, pg := range []struct{ name, path string }{{"home", "/"}, {"live", "/live/"}} {
			p.open(ctx, t, srv.URL+pg.path, v.width, v.height, v.mobile, false)
			p.screenshot(ctx, t, filepath.Join(arts, "demo-"+pg.name+"-"+v.name+".png"), v.width)
			if errs := p.errors(); len(errs) > 0 {
				t.Errorf("%s at %s: console errors: %q", pg.path, v.name, errs)
			}
			p.reset()
			var scrollW, innerW float64
			p.eval(ctx, t, "document.documentElement.scrollWidth", &scrollW)
			p.eval(ctx, t, "window.innerWidth", &innerW)
			if scrollW > innerW {
				t.Errorf("%s at %s: the page is %v px wide in a %v px window", pg.path, v.name, scrollW, innerW)
			}
			switch pg.name {
			case "home":
				var text string
				p.eval(ctx, t, "document.body.innerText", &text)
				if !strings.Contains(text, firstNew) {
					t.Errorf("home at %s: the newest instance %s is not shown", v.name, firstNew)
				}
				var scripts int
				p.eval(ctx, t, "document.scripts.length + document.querySelectorAll('img[onerror], a[href^=\"javascript:\"]').length", &scripts)
				if scripts != 0 {
					t.Errorf("home at %s: %d script, onerror or javascript: elements: the hostile hosts' names became markup", v.name, scripts)
				}
			case "live":
				// Both charts are drawn, and take up room on the screen.
				var sizes []float64
				p.eval(ctx, t, `Array.from(document.querySelectorAll("svg.chart")).flatMap(s => { const r = s.getBoundingClientRect(); return [r.width, r.height] })`, &sizes)
				if len(sizes) != 4 || slices.Min(sizes) < 50 {
					t.Errorf("live at %s: chart sizes (width, height) %v, want two charts at least 50 px each way", v.name, sizes)
				}
			}
		}
	}
	if t.Failed() {
		t.Logf("screenshots in %s", arts)
	}
}
