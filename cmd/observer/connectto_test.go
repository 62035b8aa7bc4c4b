package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/fedisim"
)

// A staging setup that maps many hosts, each rule to its own port as often
// as not, crawls in both isolation modes: the confined checker's report of
// its allowed ports stays within what the orchestrator accepts.
func TestCrawlWithManyConnectToRules(t *testing.T) {
	for _, isolation := range []string{"process", "none"} {
		t.Run(isolation, func(t *testing.T) {
			s := newSimSite(t, fedisim.Config{Instances: 60})
			host, _, err := net.SplitHostPort(s.sim.Addr())
			if err != nil {
				t.Fatal(err)
			}
			var rules []string
			for i := range 250 {
				// Hosts of the simulator, on its port, and absent hosts
				// each on a port of its own: 251 distinct ports in all.
				rules = append(rules, "--connect-to", fmt.Sprintf("%s:443:%s:%d", s.sim.Host(i%60), host, s.sim.Port()),
					"--connect-to", fmt.Sprintf("absent%d.social:443:%s:%d", i, host, 20000+i))
			}
			s.net = append(rules, s.net...)
			code, out, errs := s.crawl(t, "2026-01-01T12:00:00Z", "--isolation", isolation)
			if code != exitOK || !strings.Contains(out, "3 checks") {
				t.Fatalf("a pass with 500 --connect-to rules: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			// Run as root (as CI runs), the crawl says once that its
			// checkers drop their privileges and why its own user is better.
			if n := strings.Count(errs, "running as root"); isolation == "process" && os.Geteuid() == 0 && n != 1 {
				t.Errorf("run as root, the crawl said so %d times, want once:\n%s", n, errs)
			}
			if got := s.query(t, "SELECT count(*) FROM checks WHERE outcome = 'alive'"); got[0] != strconv.Itoa(3) {
				t.Errorf("alive checks %s, want the 3 seeds", got[0])
			}
		})
	}
}
