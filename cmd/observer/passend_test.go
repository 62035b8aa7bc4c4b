package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/fedisim"
)

// A signal while checks are under way ends the pass as interrupted (exit 3,
// saying so), even when every due host had already been started: reported
// as a complete pass (exit 0), the operator and systemd would take the
// abandoned checks for done.
func TestCrawlInterruptedDuringChecksIsCutShort(t *testing.T) {
	// A tarpit for each host, at an address of its own so that both are
	// checked at once: it accepts and never answers, so every check hangs.
	accepted := make(chan struct{}, 16)
	var mu sync.Mutex
	var held []net.Conn
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	var rules []string
	for i, host := range []string{"a.social", "b.social"} {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.1.%d:0", i+1))
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		rules = append(rules, "--connect-to", host+":443:"+ln.Addr().String())
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
				select {
				case accepted <- struct{}{}:
				default:
				}
			}
		}()
	}
	data := filepath.Join(t.TempDir(), "data")
	os.MkdirAll(data, 0o755)
	if code, _, errs := runObserver(t, "add", "--data", data, "a.social", "b.social"); code != exitOK {
		t.Fatalf("add: exit %d: %s", code, errs)
	}
	cfg := filepath.Join(t.TempDir(), "observer.toml")
	if err := os.WriteFile(cfg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Both hosts' checks have connected: the pass is under way.
		for range 2 {
			select {
			case <-accepted:
			case <-time.After(30 * time.Second):
			}
		}
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	var out, errb bytes.Buffer
	code := run(ctx, env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, append([]string{"crawl", "--quiet", "--data", data,
		"--isolation", "none", "--config", cfg, "--allow-addr", "127.0.0.0/8"}, rules...))
	if code != exitCutShort || !strings.Contains(errb.String(), "interrupted") {
		t.Fatalf("crawl interrupted during its checks: exit %d, stderr %q; want exit %d, interrupted", code, errb.String(), exitCutShort)
	}
}

// A pass whose last write fails (no flush during the pass, here, so the
// writer's final one is the first to fail) is a failure (exit 1), not a
// pass cut short (exit 3, which systemd counts as success).
func TestFailedFinalSnapshotWriteIsAFailure(t *testing.T) {
	s, blocker := siteWithDayBlocked(t)
	defer os.Remove(blocker)
	code, out, errs := s.crawl(t, "2026-01-02T00:00:00Z", "--isolation", "none")
	if code != exitFailure || !strings.Contains(errs, "write snapshots") {
		t.Fatalf("exit %d, want %d naming the write\n%s\n%s", code, exitFailure, out, errs)
	}
}

// A --now before the latest recorded check is allowed (a test of the
// schedule may go back), but the pass says why it finds little or nothing
// due; a later --now says nothing of the kind.
func TestCrawlWarnsOfANowBeforeTheData(t *testing.T) {
	s := newSimSite(t, fedisim.Config{})
	const warning = "--now is before the latest recorded check"
	if code, _, errs := s.crawl(t, "2026-01-02T12:00:00Z"); code != exitOK || strings.Contains(errs, warning) {
		t.Fatalf("first pass: exit %d: %s", code, errs)
	}
	code, _, errs := s.crawl(t, "2026-01-01T00:00:00Z")
	if code != exitOK || !strings.Contains(errs, warning) || !strings.Contains(errs, "now=2026-01-01T00:00:00Z") ||
		!strings.Contains(errs, "latest_check=2026-01-02T12:") {
		t.Errorf("pass at an earlier --now: exit %d, stderr %q; want a warning naming both times", code, errs)
	}
	if code, _, errs := s.crawl(t, "2026-01-03T12:00:00Z"); code != exitOK || strings.Contains(errs, warning) {
		t.Errorf("pass at a later --now: exit %d, stderr %q", code, errs)
	}
}
