package build_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/build/buildtest"
)

// The browser test drives Debian's Chromium over the DevTools protocol on a
// pipe (--remote-debugging-pipe: JSON messages separated by NUL bytes on file
// descriptors 3 and 4), which needs no WebSocket client and no new module.
// The protocol tells console errors apart from other messages, which
// --enable-logging output does not, and reports failed resource loads too.

func chromiumPath(t *testing.T) string {
	t.Helper()
	if os.Getenv("OBSERVER_NO_BROWSER") == "1" {
		t.Skip("OBSERVER_NO_BROWSER=1: browser test skipped")
	}
	for _, name := range []string{"chromium", "/usr/bin/chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium not found: run scripts/install-test-deps.sh (or set OBSERVER_NO_BROWSER=1 to skip this test locally)")
	return ""
}

func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("OBSERVER_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "artifacts")
	}
	dir = filepath.Join(dir, "browser")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

type cdpMessage struct {
	ID        int64                     `json:"id,omitempty"`
	Method    string                    `json:"method,omitempty"`
	Params    json.RawMessage           `json:"params,omitempty"`
	Result    json.RawMessage           `json:"result,omitempty"`
	Error     *struct{ Message string } `json:"error,omitempty"`
	SessionID string                    `json:"sessionId,omitempty"`
}

type browser struct {
	cmd     *exec.Cmd
	w       io.WriteCloser
	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan cdpMessage
	events  chan cdpMessage
	stderr  strings.Builder
}

func startBrowser(t *testing.T, bin string) *browser {
	t.Helper()
	toChrome, ourW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ourR, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-extensions", "--disable-default-apps", "--metrics-recording-only",
		"--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication",
		// Only loopback: nothing the page asks for may leave the machine.
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
		"--hide-scrollbars", "--user-data-dir="+t.TempDir(),
		"--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome} // fd 3: commands, fd 4: replies
	b := &browser{cmd: cmd, w: ourW, pending: map[int64]chan cdpMessage{}, events: make(chan cdpMessage, 1024)}
	cmd.Stderr = &lockedWriter{b: &b.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	toChrome.Close()
	fromChrome.Close()
	go b.readLoop(ourR)
	t.Cleanup(func() {
		ourW.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return b
}

type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (b *browser) readLoop(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			for id, ch := range b.pending {
				close(ch)
				delete(b.pending, id)
			}
			b.mu.Unlock()
			close(b.events)
			return
		}
		var m cdpMessage
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.pending[m.ID]
			delete(b.pending, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		select {
		case b.events <- m:
		default: // nobody is interested in a flood of events
		}
	}
}

func (b *browser) call(ctx context.Context, session, method string, params any, result any) error {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpMessage, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	msg, _ := json.Marshal(cdpMessage{ID: id, Method: method, Params: p, SessionID: session})
	b.mu.Lock()
	_, err = b.w.Write(append(msg, 0))
	b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: browser went away", method)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// page is one tab with the console and log domains enabled.
type page struct {
	b       *browser
	session string
	mu      sync.Mutex
	errs    []string
	loaded  chan struct{}
}

func (b *browser) newPage(ctx context.Context, t *testing.T) *page {
	t.Helper()
	var target struct{ TargetID string }
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		t.Fatal(err)
	}
	var att struct{ SessionID string }
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		t.Fatal(err)
	}
	p := &page{b: b, session: att.SessionID, loaded: make(chan struct{}, 16)}
	go p.watch()
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable"} {
		if err := b.call(ctx, p.session, m, map[string]any{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// watch records console errors, uncaught exceptions and error log entries
// (failed loads, CSP violations) of this page.
func (p *page) watch() {
	for m := range p.b.events {
		if m.SessionID != p.session {
			continue
		}
		switch m.Method {
		case "Runtime.consoleAPICalled":
			var ev struct {
				Type string
				Args []struct {
					Value       any
					Description string
				}
			}
			json.Unmarshal(m.Params, &ev)
			if ev.Type == "error" || ev.Type == "assert" {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, fmt.Sprint(a.Value), a.Description)
				}
				p.addErr("console." + ev.Type + ": " + strings.Join(parts, " "))
			}
		case "Runtime.exceptionThrown":
			p.addErr("exception: " + string(m.Params))
		case "Log.entryAdded":
			var ev struct {
				Entry struct{ Level, Text, URL string }
			}
			json.Unmarshal(m.Params, &ev)
			if ev.Entry.Level == "error" {
				p.addErr("log: " + ev.Entry.Text + " " + ev.Entry.URL)
			}
		case "Page.loadEventFired":
			p.loaded <- struct{}{}
		}
	}
}

func (p *page) addErr(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.errs = append(p.errs, s)
}

func (p *page) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.errs = nil
}

func (p *page) errors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errs...)
}

func (p *page) open(ctx context.Context, t *testing.T, url string, width, height int, mobile bool, dark bool) {
	t.Helper()
	if err := p.b.call(ctx, p.session, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}, nil); err != nil {
		t.Fatal(err)
	}
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	if err := p.b.call(ctx, p.session, "Emulation.setEmulatedMedia", map[string]any{
		"features": []map[string]string{{"name": "prefers-color-scheme", "value": scheme}}}, nil); err != nil {
		t.Fatal(err)
	}
	for len(p.loaded) > 0 {
		<-p.loaded
	}
	if err := p.b.call(ctx, p.session, "Page.navigate", map[string]any{"url": url}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.loaded:
	case <-ctx.Done():
		t.Fatalf("%s never finished loading", url)
	}
}

func (p *page) eval(ctx context.Context, t *testing.T, expr string, out any) {
	t.Helper()
	var res struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct{ Text string }
	}
	if err := p.b.call(ctx, p.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res); err != nil {
		t.Fatal(err)
	}
	if res.ExceptionDetails != nil {
		t.Fatalf("evaluate %s: %s", expr, res.ExceptionDetails.Text)
	}
	if err := json.Unmarshal(res.Result.Value, out); err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
}

func (p *page) screenshot(ctx context.Context, t *testing.T, file string, width int) {
	t.Helper()
	var height float64
	p.eval(ctx, t, "document.documentElement.scrollHeight", &height)
	height = min(height, 6000) // a long list: the top tells enough
	var shot struct{ Data string }
	if err := p.b.call(ctx, p.session, "Page.captureScreenshot", map[string]any{
		"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": 0, "width": width, "height": height, "scale": 1}}, &shot); err != nil {
		t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil || len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Fatalf("screenshot %s: not a PNG (%v)", file, err)
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBrowserHomePage(t *testing.T) {
	bin := chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) // safety net
	defer cancel()

	data := buildtest.Sample(50, now)
	out, _ := mustBuild(t, "..", testConfig(), data)
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(out)))
	// A page that logs an error, to show the test would notice one.
	mux.HandleFunc("/__broken.html", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!DOCTYPE html><title>broken</title><link rel="icon" href="data:,"><script>console.error("deliberate failure")</script><img src="/missing.png" alt="">`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	b := startBrowser(t, bin)
	p := b.newPage(ctx, t)
	arts := artifactsDir(t)

	p.open(ctx, t, srv.URL+"/__broken.html", 800, 600, false, false)
	var ready string
	p.eval(ctx, t, "document.readyState", &ready)
	if errs := p.errors(); !containsAll(strings.Join(errs, "\n"), "deliberate failure", "missing.png") {
		t.Fatalf("the console watch misses errors: %q\nchromium stderr: %s", errs, b.stderr.String())
	}
	p.reset()

	views := []struct {
		name          string
		width, height int
		mobile, dark  bool
	}{
		{"phone", 390, 844, true, false},
		{"phone-dark", 390, 844, true, true},
		{"desktop", 1440, 900, false, false},
	}
	for _, v := range views {
		for _, path := range []string{"/", "/live/"} {
			p.open(ctx, t, srv.URL+path, v.width, v.height, v.mobile, v.dark)
			if errs := p.errors(); len(errs) > 0 {
				t.Errorf("%s at %s: console errors: %q", path, v.name, errs)
			}
			p.reset()
			// Nothing is wider than the screen.
			var scrollW, innerW float64
			p.eval(ctx, t, "document.documentElement.scrollWidth", &scrollW)
			p.eval(ctx, t, "window.innerWidth", &innerW)
			if scrollW > innerW {
				t.Errorf("%s at %s: page is %v px wide in a %v px window", path, v.name, scrollW, innerW)
			}
			name := "home"
			if path != "/" {
				name = "live"
			}
			p.screenshot(ctx, t, filepath.Join(arts, name+"-"+v.name+".png"), v.width)
			if path != "/" {
				continue
			}
			var text string
			p.eval(ctx, t, "document.body.innerText", &text)
			for _, inst := range data.NewList {
				if !strings.Contains(text, inst.Host) {
					t.Errorf("%s: host %s is not on the page", v.name, inst.Host)
				}
			}
			var rels []string
			p.eval(ctx, t, `Array.from(document.querySelectorAll('a[href$=".example.net/"]')).map(a => a.rel)`, &rels)
			if len(rels) != len(data.NewList) {
				t.Errorf("%s: %d instance links, want %d", v.name, len(rels), len(data.NewList))
			}
			for _, r := range rels {
				if r != "nofollow ugc noopener" {
					t.Errorf("%s: instance link rel=%q", v.name, r)
				}
			}
			// The hostile names arrived as text, not as elements.
			var scripts int
			p.eval(ctx, t, "document.scripts.length + document.querySelectorAll('img[onerror]').length", &scripts)
			if scripts != 0 {
				t.Errorf("%s: %d script or onerror elements on the page", v.name, scripts)
			}
		}
	}
	if t.Failed() {
		t.Logf("screenshots in %s", arts)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
