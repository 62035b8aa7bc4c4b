package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/fedisim"
)

func TestRefusesNonLoopback(t *testing.T) {
	for _, args := range [][]string{
		{"--listen", "0.0.0.0:0"},
		{"--listen", "192.0.2.1:8443"},
		{"--listen", "127.0.0.1:0", "--control", "[::]:0"},
	} {
		err := run(args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// -h prints the usage and is no failure; an unknown flag is one.
func TestHelpIsNoFailure(t *testing.T) {
	var usage strings.Builder
	if err := run([]string{"-h"}, io.Discard, &usage); err != nil {
		t.Fatalf("-h: %v", err)
	}
	if !strings.Contains(usage.String(), "-ca-out") {
		t.Errorf("-h printed no usage: %q", usage.String())
	}
	if err := run([]string{"--no-such-flag"}, io.Discard, io.Discard); err == nil {
		t.Error("an unknown flag was accepted")
	}
}

func TestControl(t *testing.T) {
	sim, err := fedisim.New(fedisim.Config{Seed: 1, Instances: 100})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(controlHandler(sim))
	defer srv.Close()
	post := func(path string) int {
		resp, err := http.Post(srv.URL+path, "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("/day?d=5"); code != 200 || sim.Day() != 5 {
		t.Fatalf("POST /day?d=5: %d, day %d", code, sim.Day())
	}
	if code := post("/day?d=five"); code != 400 || sim.Day() != 5 {
		t.Fatalf("POST /day?d=five: %d, day %d", code, sim.Day())
	}
	if code := post("/now?t=2026-01-08T13:00:00Z"); code != 200 || sim.Day() != 7 {
		t.Fatalf("POST /now: %d, day %d", code, sim.Day())
	}
	resp, err := http.Get(srv.URL + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	var st fedisim.Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || st.Day != 7 || st.Instances != 100 {
		t.Fatalf("stats %+v, %v", st, err)
	}
	resp.Body.Close()
	resp, err = http.Get(srv.URL + "/seeds?n=3")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := strings.Fields(string(b)); len(got) != 3 || got[0] != sim.Seeds(1)[0] {
		t.Fatalf("seeds %q", b)
	}
}

func TestRunWritesFilesAndStopsOnSignal(t *testing.T) {
	dir := t.TempDir()
	ca, seeds, rules := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "seeds.txt"), filepath.Join(dir, "connect-to.txt")
	banner, done := startRun("--listen", "127.0.0.1:0", "--instances", "500", "--ca-out", ca, "--seeds-out", seeds, "--seeds", "4", "--control", "127.0.0.1:0", "--hostile",
		"--connect-to-out", rules)
	connectTo, flags := banner["connect-to"], banner["crawler flags"]
	if !strings.HasPrefix(connectTo, "*:443:127.0.0.1:") {
		t.Fatalf("connect-to %q", connectTo)
	}
	if !strings.HasSuffix(flags, "--ca-cert "+ca) {
		t.Errorf("crawler flags %q do not name the CA file written", flags)
	}
	if b, err := os.ReadFile(ca); err != nil || !strings.Contains(string(b), "BEGIN CERTIFICATE") {
		t.Fatalf("CA file: %v", err)
	}
	if b, err := os.ReadFile(seeds); err != nil || len(strings.Fields(string(b))) != 4 {
		t.Fatalf("seeds file %q: %v", b, err)
	}
	// One rule per host, at the simulator's port on one of its addresses,
	// then the catch-all it prints.
	b, err := os.ReadFile(rules)
	lines := strings.Fields(string(b))
	if err != nil || len(lines) < 501 || lines[len(lines)-1] != connectTo {
		t.Fatalf("--connect-to-out: %d rules, last %q, %v; want one per instance, then %q", len(lines), lines[len(lines)-1:], err, connectTo)
	}
	port := connectTo[strings.LastIndex(connectTo, ":"):]
	addrs := map[string]bool{}
	for _, rule := range lines[:len(lines)-1] {
		f := strings.Split(rule, ":")
		if len(f) != 4 || f[0] == "*" || f[1] != "443" || !strings.HasPrefix(f[2], "127.0.") || strings.HasPrefix(f[2], "127.0.0.") || ":"+f[3] != port {
			t.Fatalf("rule %q: want HOST:443:127.0.K.J%s, K > 0", rule, port)
		}
		addrs[f[2]] = true
	}
	if len(addrs) < 500 {
		t.Errorf("the hosts are at %d addresses, want one for each instance at least", len(addrs))
	}
	interrupt(t, done)
}

// Without --ca-out no CA file is written, and the crawler flags fedisim
// prints say so instead of naming one that does not exist.
func TestCrawlerFlagsWithoutCAFile(t *testing.T) {
	banner, done := startRun("--listen", "127.0.0.1:0", "--instances", "50")
	if flags := banner["crawler flags"]; !strings.Contains(flags, "--ca-cert FILE (none written: start fedisim with --ca-out FILE)") {
		t.Errorf("crawler flags %q", flags)
	}
	interrupt(t, done)
}

// startRun starts run with args and reads what it prints up to its
// "crawler flags" line, each "name: value" line by name; done receives run's
// result.
func startRun(args ...string) (banner map[string]string, done chan error) {
	pr, pw := io.Pipe()
	done = make(chan error, 1)
	go func() {
		done <- run(args, pw, io.Discard)
		pw.Close()
	}()
	banner = map[string]string{}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), ": "); ok {
			banner[name] = value
			if name == "crawler flags" {
				break
			}
		}
	}
	go io.Copy(io.Discard, pr)
	return banner, done
}

// interrupt sends this process SIGINT and waits for run, whose result done
// delivers, to end without error.
func interrupt(t *testing.T, done <-chan error) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fedisim did not stop on SIGINT")
	}
}
