package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/fedisim"
)

// crawlWithRules runs a pass over a world of 60 instances, with its 3
// seeds, in both isolation modes, giving the crawl the --connect-to rules
// rules returns (the simulator's host and port given) in place of the
// simulator's own, and hands each pass's log to check.
func crawlWithRules(t *testing.T, rules func(s *simSite, host string) []string, check func(t *testing.T, isolation, errs string)) {
	for _, isolation := range []string{"process", "none"} {
		t.Run(isolation, func(t *testing.T) {
			s := newSimSite(t, fedisim.Config{Instances: 60})
			host, _, err := net.SplitHostPort(s.sim.Addr())
			if err != nil {
				t.Fatal(err)
			}
			var args []string
			for _, r := range rules(s, host) {
				args = append(args, "--connect-to", r)
			}
			for i := 0; i < len(s.net); i++ {
				if s.net[i] == "--connect-to" {
					i++
					continue
				}
				args = append(args, s.net[i])
			}
			s.net = args
			// Not --quiet: the log has the confinement report.
			code, out, errs := runObserver(t, append([]string{"crawl", "--config", s.config, "--data", filepath.Join(s.dir, "data"),
				"--now", "2026-01-01T12:00:00Z", "--isolation", isolation, "--concurrency", "2"}, s.net...)...)
			if code != exitOK || !strings.Contains(out, "3 checks") {
				t.Fatalf("a pass with %d --connect-to rules: exit %d\nstdout:\n%s\nstderr:\n%s", len(args), code, out, tail(errs, 4000))
			}
			if got := s.query(t, "SELECT count(*) FROM checks WHERE outcome = 'alive'"); got[0] != strconv.Itoa(3) {
				t.Errorf("alive checks %s, want the 3 seeds", got[0])
			}
			check(t, isolation, errs)
		})
	}
}

// A staging setup that maps many hosts, each rule to its own port as often
// as not, crawls in both isolation modes: the confined checker's report of
// its allowed ports stays within what the orchestrator accepts.
func TestCrawlWithManyConnectToRules(t *testing.T) {
	crawlWithRules(t, func(s *simSite, host string) []string {
		var rules []string
		for i := range 250 {
			// Hosts of the simulator, on its port, and absent hosts
			// each on a port of its own: 251 distinct ports in all.
			rules = append(rules, fmt.Sprintf("%s:443:%s:%d", s.sim.Host(i%60), host, s.sim.Port()),
				fmt.Sprintf("absent%d.social:443:%s:%d", i, host, 20000+i))
		}
		return append(rules, s.sim.ConnectToEach()...)
	}, func(t *testing.T, isolation, errs string) {
		// Run as root (as CI runs), the crawl says once that its
		// checkers drop their privileges and why its own user is better.
		if n := strings.Count(errs, "running as root"); isolation == "process" && os.Geteuid() == 0 && n != 1 {
			t.Errorf("run as root, the crawl said so %d times, want once:\n%s", n, errs)
		}
	})
}

// Thirty thousand --connect-to rules (a test world of that many instances
// has a rule each), more than a process's arguments can hold: the
// checkers get them on an inherited file, not on their command line, and
// the crawl works in both isolation modes, sending each host where its rule
// says. The rules go to a thousand ports, which the confined checker's
// report summarises.
func TestCrawlWithThirtyThousandConnectToRules(t *testing.T) {
	crawlWithRules(t, func(s *simSite, host string) []string {
		var rules []string
		argBytes := 0
		for i := range 30_000 {
			r := fmt.Sprintf("absent-instance-number-%05d.example.social:443:%s:%d", i, host, 20000+i%1000)
			rules = append(rules, r)
			argBytes += len(r) + len("--connect-to") + 2*(1+8) // both strings, their NULs and argv pointers
		}
		// More than Linux lets one exec carry (ARG_MAX, 2 MiB with an
		// 8 MiB stack): on the command line this could not work.
		if argBytes <= 2<<20 {
			t.Fatalf("the rules take %d bytes of arguments, not over 2 MiB", argBytes)
		}
		// The seeds reach the simulator only through the last rules,
		// with no catch-all: a checker that lost the end of the list
		// would not find them.
		for _, seed := range s.sim.Seeds(3) {
			rules = append(rules, seed+":443:"+s.sim.AddrOf(seed))
		}
		return rules
	}, func(t *testing.T, isolation, errs string) {
		// Where Landlock restricts TCP, the report names the ports
		// briefly.
		if isolation == "process" && !strings.Contains(errs, "landlock_net") {
			t.Errorf("no confinement report in the log:\n%s", tail(errs, 4000))
		}
		if strings.Contains(errs, "+landlock_net") && !strings.Contains(errs, "ports: 53 443 20000 20001 20002 20003 20004 20005 … 99") {
			t.Errorf("the confinement report does not summarise the rules' ports:\n%s", tail(errs, 4000))
		}
	})
}
