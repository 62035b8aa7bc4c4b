package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/build/buildtest"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last: %s", what, timeout, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fetch GETs url; errors come back as the body, for polling.
func fetch(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServeBuildsServesAndRebuildsOnChanges(t *testing.T) {
	s := bareSite(t)
	// Serve watches the folders that exist when it starts (a new site has
	// them all).
	for _, d := range []string{"content", "layouts", "static"} {
		os.MkdirAll(filepath.Join(s.dir, d), 0o755)
	}
	// As a person would run it: in the site directory, every default (the
	// config is ./observer.toml, the data ./data, the output a temporary
	// directory).
	t.Chdir(s.dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr testsupport.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr},
			[]string{"serve", "--port", "0", "--now", asOf})
	}()

	ready := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/) \(built into (.+)\)`)
	var url, outDir string
	eventually(t, "the preview's address on stdout", 30*time.Second, func() (bool, string) {
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d before serving: %s", code, stderr.String())
		default:
		}
		m := ready.FindStringSubmatch(stdout.String())
		if m == nil {
			return false, stdout.String() + stderr.String()
		}
		url, outDir = m[1], m[2]
		return true, ""
	})

	code, body := fetch(url)
	if code != http.StatusOK || !strings.Contains(body, "<title>Bare") || !strings.Contains(body, "EventSource") {
		t.Fatalf("GET /: %d\n%s", code, body)
	}
	// Links point at the preview, not at the site's base_url.
	if code, body := fetch(url + "sitemap.xml"); code != http.StatusOK || !strings.Contains(body, url) {
		t.Errorf("sitemap.xml does not use the preview's address %s: %d\n%s", url, code, body)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "public")); err == nil {
		t.Error("serve wrote public/")
	}

	// A new page and a changed config are rebuilt in.
	buildtest.WriteArchive(t, s.dir, `
-- content/about.md --
---
title: About this preview
---
Hello.
`)
	eventually(t, "the new page", 30*time.Second, func() (bool, string) {
		code, body := fetch(url + "about/")
		return code == http.StatusOK && strings.Contains(body, "About this preview"), body
	})
	buildtest.WriteArchive(t, s.dir, `
-- observer.toml --
[site]
title = "Renamed"
`)
	eventually(t, "the new title", 30*time.Second, func() (bool, string) {
		_, body := fetch(url)
		return strings.Contains(body, "<title>Renamed"), body
	})

	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("serve exited with %d: %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop when its context ended")
	}
	if _, err := os.Stat(outDir); err == nil {
		t.Errorf("the temporary preview directory %s is left behind", outDir)
	}
	if got := stderr.String(); strings.Contains(got, "level=ERROR") {
		t.Errorf("errors logged:\n%s", got)
	}
}

func TestServeRefusesBadFlagsAndAMissingDataDir(t *testing.T) {
	s := bareSite(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--port", "70000"}, exitUsage, "70000"},
		// -1 once meant "the config's port"; now it is what it says.
		{[]string{"--port", "-1"}, exitUsage, "-1"},
		{[]string{"extra"}, exitUsage, "extra"},
		{[]string{"--data", filepath.Join(s.dir, "nodata")}, exitFailure, "nodata"},
	} {
		args := append([]string{"serve", "--config", s.config, "--data", s.data()}, tc.args...)
		code, _, errs := runObserver(t, args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d naming %s", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

// A port already taken fails at once, in one line with one prefix.
func TestServeOnATakenPort(t *testing.T) {
	s := bareSite(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	code, _, errs := runObserver(t, "serve", "--config", s.config, "--data", s.data(), "--port", port)
	if code != exitFailure || !strings.HasPrefix(errs, "observer serve: listen tcp 127.0.0.1:"+port+": ") ||
		!strings.Contains(errs, "address already in use") || strings.Count(errs, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want one line naming the port", code, errs)
	}
}
