package preview_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/build"
	"github.com/fediverse-observer/observer/build/buildtest"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/preview"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// previewSite writes a small site: a home page, a guide under docs/, a
// partial of its own under layouts/ (the test breaks a template there) and a
// static file.
func previewSite(t *testing.T) string {
	return buildtest.WriteArchive(t, t.TempDir(), `
-- content/_index.md --
---
title: Welcome home
---
Intro text.
-- content/docs/guide.md --
---
title: Guide
---
Guide body
-- layouts/_partials/observer/footer.html --
<footer>Footer {{ .Site.Title }}</footer>
-- static/extra.txt --
static file
`)
}

// previewData is three live instances.
func previewData() *buildtest.Fake {
	var live []observer.Instance
	for _, h := range []string{"alpha.example", "beta.example", "gamma.example"} {
		live = append(live, observer.Instance{Host: h, State: observer.StateLive, Software: "mastodon", FirstAliveAt: now.Add(-time.Hour)})
	}
	return &buildtest.Fake{NewList: live, LiveList: live, StatsValue: observer.Stats{Live: 3, New: 3}}
}

func previewConfig() config.Config {
	cfg := config.Default()
	cfg.Site.Title = "Preview test"
	return cfg
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// replaceFile writes like an editor that saves atomically: one rename.
func replaceFile(t *testing.T, path, body string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// changeLog is a slog handler that keeps the paths of Serve's "change"
// records: Serve logs one, in the order the watch reports them, for each
// event it takes for a change of the site and schedules a rebuild for.
type changeLog struct {
	mu    *sync.Mutex
	paths *[]string
}

func (h changeLog) Enabled(context.Context, slog.Level) bool { return true }
func (h changeLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h changeLog) WithGroup(string) slog.Handler            { return h }
func (h changeLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "change" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "path" {
			h.mu.Lock()
			*h.paths = append(*h.paths, a.Value.String())
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

func TestServeRebuildsAndReloads(t *testing.T) {
	// A safety net only: every wait below is on an event.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	site := previewSite(t)
	// Without static/ at the start: it is created below, after Serve
	// started, and must be watched from then on.
	if err := os.RemoveAll(filepath.Join(site, "static")); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(site, "observer.toml")
	buildtest.WriteArchive(t, site, `
-- observer.toml --
[site]
title = "Preview"
`)
	out := filepath.Join(t.TempDir(), "public")
	data := previewData()
	dataDir := filepath.Join(t.TempDir(), "data")
	derived := filepath.Join(dataDir, "derived")
	if err := os.MkdirAll(derived, 0o755); err != nil {
		t.Fatal(err)
	}

	urlCh := make(chan string, 1)
	// Reloads count successful rebuilds only: the test keeps its own count
	// to compare with the last generation the stream announces.
	var successes atomic.Int64
	// The changes Serve acted on, to show that the ignored directory's are
	// not among them.
	var changes []string
	var changesMu sync.Mutex
	failed := make(chan error, 16)
	done := make(chan error, 1)
	go func() {
		done <- preview.Serve(ctx, preview.Options{
			Port:   0,
			OutDir: out,
			Watch:  build.WatchPaths(site, dataDir, cfgFile),
			Ignore: []string{derived},
			Rebuild: func(ctx context.Context, baseURL string) error {
				// Like a data source that refreshes a derived database: an
				// ignored path, or every rebuild would cause another.
				if err := os.WriteFile(filepath.Join(derived, "state.db"), []byte(baseURL), 0o644); err != nil {
					return err
				}
				cfg := previewConfig()
				cfg.Site.BaseURL = baseURL
				_, err := build.Build(ctx, build.Options{Site: cfg.BuildSettings("dev"), SiteDir: site, OutDir: out, Data: data, Now: now})
				return err
			},
			Debounce: 50 * time.Millisecond,
			Logger:   slog.New(changeLog{&changesMu, &changes}),
			Ready:    func(u string) { urlCh <- u },
			Rebuilt: func(err error) {
				if err == nil {
					successes.Add(1)
				} else {
					failed <- err
				}
			},
		})
	}()
	var base string
	select {
	case base = <-urlCh:
	case err := <-done:
		t.Fatalf("serve ended: %v", err)
	case <-ctx.Done():
		t.Fatal("serve never became ready")
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("preview URL %q is not on loopback", base)
	}

	status, page := get(t, base+"docs/guide/")
	if status != 200 || !strings.Contains(page, "Guide body") || !strings.Contains(page, `new EventSource("/__reload")`) {
		t.Fatalf("GET docs/guide/: %d %s", status, page)
	}
	// The reload script is only in the served copy, not in public/.
	if onDisk := testsupport.ReadFile(t, filepath.Join(out, "docs", "guide", "index.html")); strings.Contains(onDisk, "__reload") {
		t.Error("public/ contains the reload script")
	}
	// Links use the preview's own address.
	if !strings.Contains(page, `<link rel="canonical" href="`+base+`docs/guide/">`) {
		t.Error("the preview build does not use the preview's base URL")
	}
	// A directory without its slash is redirected to itself, never to a
	// path a browser reads as another host.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"docs", "%2Fevil.example%2F..%2Fdocs", "/evil.example/../docs", "docs/../docs"} {
		resp, err := noFollow.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusMovedPermanently || loc != "/docs/" {
			t.Errorf("GET %s: %d, Location %q; want a redirect to /docs/", p, resp.StatusCode, loc)
		}
	}
	// The query goes along.
	if resp, err := noFollow.Get(base + "docs?x=1"); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.Header.Get("Location") != "/docs/?x=1" {
		t.Errorf("GET docs?x=1: Location %q, want /docs/?x=1", resp.Header.Get("Location"))
	}
	// DNS rebinding: a request naming another host is refused.
	rebind, _ := http.NewRequest("GET", base+"live.txt", nil)
	rebind.Host = "attacker.example"
	if resp, err := http.DefaultClient.Do(rebind); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("Host attacker.example: %d, want 421", resp.StatusCode)
	}
	// Nor may it follow the reload stream, which tells when the site is edited.
	rebind, _ = http.NewRequest("GET", base+"__reload", nil)
	rebind.Host = "attacker.example"
	if resp, err := http.DefaultClient.Do(rebind); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("Host attacker.example, %s: %d, want 421", "/__reload", resp.StatusCode)
	}
	if status, body := get(t, base+"no/such/page"); status != 404 || !strings.Contains(body, "Page not found") {
		t.Errorf("missing page: %d", status)
	}
	if status, body := get(t, base+"live.txt"); status != 200 || body != "alpha.example\nbeta.example\ngamma.example\n" || strings.Contains(body, "script") {
		t.Errorf("live.txt: %d %q", status, body)
	}
	// Nothing outside the output directory is served, however the path
	// climbs out of it.
	if err := os.WriteFile(filepath.Join(filepath.Dir(out), "secret.html"), []byte("not for the preview"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../secret.html", "%2e%2e/secret.html", "docs/../../secret.html"} {
		if status, body := get(t, base+p); status != http.StatusNotFound || strings.Contains(body, "not for the preview") {
			t.Errorf("GET %s: %d %q, want the site's 404", p, status, body)
		}
	}
	// A static preview takes only reads.
	if resp, err := http.Post(base+"live.txt", "text/plain", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST live.txt: %d, want 405", resp.StatusCode)
	}

	// Listen for reloads like the page's script does.
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"__reload", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("reload endpoint content type %q", ct)
	}
	events := bufio.NewReader(resp.Body)
	lastGeneration := 0
	waitEvent := func() string {
		t.Helper()
		for {
			line, err := events.ReadString('\n')
			if err != nil {
				t.Fatalf("reload stream: %v", err)
			}
			if g, ok := strings.CutPrefix(line, "data: "); ok {
				g = strings.TrimSpace(g)
				lastGeneration, _ = strconv.Atoi(g)
				return g
			}
		}
	}
	if line, err := events.ReadString('\n'); err != nil || !strings.HasPrefix(line, ": connected") {
		t.Fatalf("reload stream start: %q %v", line, err)
	}

	// Edit a content page: the site is rebuilt and the page told to reload.
	replaceFile(t, filepath.Join(site, "content", "docs", "guide.md"), "---\ntitle: Guide\n---\nEdited guide body\n")
	waitEvent()
	if _, page := get(t, base+"docs/guide/"); !strings.Contains(page, "Edited guide body") {
		t.Error("the served page does not show the edit")
	}

	// A broken template: the rebuild fails, no reload, the old site stays.
	replaceFile(t, filepath.Join(site, "layouts", "page.html"), "{{ define \"main\" }}{{ .Nope }}{{ end }}")
	select {
	case err := <-failed:
		if !strings.Contains(err.Error(), "layouts/page.html") {
			t.Errorf("rebuild error %v does not name the template", err)
		}
	case <-ctx.Done():
		t.Fatal("the broken template never caused a failed rebuild")
	}
	if _, page := get(t, base+"docs/guide/"); !strings.Contains(page, "Edited guide body") {
		t.Error("a failed rebuild took the site down")
	}
	// Fixing it (removing the override) rebuilds and reloads again.
	if err := os.Remove(filepath.Join(site, "layouts", "page.html")); err != nil {
		t.Fatal(err)
	}
	waitEvent()

	// A config change also rebuilds; generations count up.
	replaceFile(t, cfgFile, "[site]\ntitle = \"Renamed\"\n")
	if gen, _ := strconv.Atoi(waitEvent()); gen < 3 {
		t.Errorf("reload generation %d after three successful rebuilds", gen)
	}

	// New data (in a directory created after Serve started) rebuilds too.
	if err := os.MkdirAll(filepath.Join(dataDir, "checks", "day=2026-11-21"), 0o755); err != nil {
		t.Fatal(err)
	}
	data.LiveList = append(data.LiveList, observer.Instance{Host: "zeta.example", State: observer.StateLive})
	replaceFile(t, filepath.Join(dataDir, "checks", "day=2026-11-21", "part-0.parquet"), "new data")
	for {
		waitEvent()
		if _, body := get(t, base+"live.txt"); strings.Contains(body, "zeta.example") {
			break
		}
	}

	// A folder the site did not have when Serve started (static/) is
	// watched once it appears, however deep the first file in it is.
	if err := os.MkdirAll(filepath.Join(site, "static", "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	replaceFile(t, filepath.Join(site, "static", "files", "hello.txt"), "hello")
	for {
		waitEvent()
		if status, body := get(t, base+"files/hello.txt"); status == 200 && body == "hello" {
			break
		}
	}
	replaceFile(t, filepath.Join(site, "static", "files", "hello.txt"), "hello again")
	for {
		waitEvent()
		if _, body := get(t, base+"files/hello.txt"); body == "hello again" {
			break
		}
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
	// The stream ends with the server: every reload it announced has been
	// read, and the last one is the count of successful rebuilds (a failed
	// rebuild reloads nothing).
	for {
		line, err := events.ReadString('\n')
		if err != nil {
			break
		}
		if g, ok := strings.CutPrefix(line, "data: "); ok {
			lastGeneration, _ = strconv.Atoi(strings.TrimSpace(g))
		}
	}
	if n := successes.Load(); int64(lastGeneration) != n {
		t.Errorf("the last reload announced generation %d after %d successful rebuilds", lastGeneration, n)
	}
	// Every rebuild (the first one too) wrote derived/state.db, under
	// Ignore, while the watch was on: had Serve taken those writes for
	// changes, each rebuild would have scheduled the next, for ever. The
	// reload counts above cannot tell, since the extra rebuilds succeed and
	// reload too. The watch reports events in order, and the edit to
	// hello.txt (whose rebuild was awaited) came after the first build's
	// write, so a change for state.db would have been logged by now; that
	// none was is no matter of timing.
	sawEdit, sawIgnored := false, false
	for _, p := range changes {
		if !sawIgnored && (p == derived || strings.HasPrefix(p, derived+string(filepath.Separator))) {
			t.Errorf("a write to %s, under Ignore, was taken for a change", p)
			sawIgnored = true
		}
		sawEdit = sawEdit || p == filepath.Join(site, "static", "files", "hello.txt")
	}
	// And the record is the one looked for: the edits are in it.
	if !sawEdit {
		t.Errorf("no change logged for hello.txt; changes logged: %q", changes)
	}
}
