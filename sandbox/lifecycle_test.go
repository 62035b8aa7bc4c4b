package sandbox_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/sandbox"
)

// Seccomp refuses what Landlock may not (a Unix socket) and what it also
// refuses (a write open of a file), with its own EPERM/EAFNOSUPPORT, so
// each wall is tested on its own.
func TestConfinedSeccompSocketsAndRDWR(t *testing.T) {
	if runtime.GOOS != "linux" || !kernelSeccomp() {
		t.Skip("needs seccomp")
	}
	target := filepath.Join(t.TempDir(), "existing")
	if err := os.WriteFile(target, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, confine := range []bool{false, true} {
		p, _ := newPool(t, confine, func(o *sandbox.PoolOptions) { o.Env = append(o.Env, envWrite+"="+target) })
		want := map[string]string{"unix.social": "address family not supported", "rdwr.social": "operation not permitted"}
		for h, msg := range want {
			r := check(t, p, h)
			if confine && !strings.Contains(r.Check.Error, msg) {
				t.Errorf("confined %s: %s %q, want %q", h, r.Check.Outcome, r.Check.Error, msg)
			}
			if !confine && r.Check.Error != "ok" {
				t.Errorf("unconfined %s: %q (the fake is broken)", h, r.Check.Error)
			}
		}
		p.Close()
	}
}

// A confined checker holds no capability, whoever started it (CI runs
// as root, where an unconfined one holds them all), and cannot open a raw,
// ICMP or netlink socket, which Landlock's TCP port rules do not govern.
func TestConfinedCheckerHoldsNoCapability(t *testing.T) {
	if runtime.GOOS != "linux" || !kernelSeccomp() {
		t.Skip("needs Linux and seccomp")
	}
	p, _ := newPool(t, true, nil)
	if !p.Report().Applied(sandbox.LayerCaps) {
		t.Errorf("layer %s not applied: %s", sandbox.LayerCaps, p.Report())
	}
	caps := check(t, p, "caps.social").Check.Error
	for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
		if !strings.Contains(caps, set+" 0000000000000000") || strings.Count(caps, set) != 1 {
			t.Errorf("confined checker's %s: %s", set, caps)
		}
	}
	if os.Geteuid() == 0 && !strings.Contains(caps, "CapBnd 0000000000000000") {
		t.Errorf("a confined checker started by root kept a bounding set: %s", caps)
	}
	for h, msg := range map[string]string{
		"raw.social":     "operation not permitted",
		"ping.social":    "operation not permitted",
		"netlink.social": "address family not supported",
	} {
		if r := check(t, p, h); !strings.Contains(r.Check.Error, msg) {
			t.Errorf("confined %s: %s %q, want %q", h, r.Check.Outcome, r.Check.Error, msg)
		}
	}
	if os.Geteuid() != 0 {
		return
	}
	// The control: started by root and unconfined, the same checker holds
	// capabilities and opens those sockets.
	u, _ := newPool(t, false, nil)
	if caps := check(t, u, "caps.social").Check.Error; strings.Contains(caps, "CapEff 0000000000000000") {
		t.Errorf("an unconfined checker started by root holds no capability (the fake is broken): %s", caps)
	}
	for _, h := range []string{"raw.social", "netlink.social"} {
		if r := check(t, u, h); r.Check.Error != "ok" {
			t.Errorf("unconfined %s as root: %q (the fake is broken)", h, r.Check.Error)
		}
	}
}

// A pool with DropCapabilities starts its checkers holding no capability:
// unconfined, one started by root holds none (the control above holds them
// all), and a confined one reports it had none to drop. Started by a user,
// the bounding set cannot be emptied, and the checker holds none either way.
func TestCheckerStartsWithoutCapabilities(t *testing.T) {
	if runtime.GOOS != "linux" || !kernelSeccomp() {
		t.Skip("needs Linux and seccomp")
	}
	root := os.Geteuid() == 0
	for _, confine := range []bool{false, true} {
		p, _ := newPool(t, confine, func(o *sandbox.PoolOptions) {
			o.DropCapabilities = true
			o.ChecksPerProcess = 1 // every check in a fresh checker
		})
		caps := check(t, p, "caps.social").Check.Error
		for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
			if !strings.Contains(caps, set+" 0000000000000000") {
				t.Errorf("confined %v: %s held: %s", confine, set, caps)
			}
		}
		if root && !strings.Contains(caps, "CapBnd 0000000000000000") {
			t.Errorf("confined %v: a checker started by root kept a bounding set: %s", confine, caps)
		}
		if confine {
			var l sandbox.Layer
			for _, x := range p.Report().Layers {
				if x.Name == sandbox.LayerCaps {
					l = x
				}
			}
			if !l.Applied || (root && !strings.Contains(l.Detail, "from the start")) {
				t.Errorf("caps layer %+v, want applied, and none held from the start when started by root", l)
			}
		}
		// The next checker starts from the same thread.
		if r := check(t, p, "caps.social"); r.Check.Error != caps {
			t.Errorf("a later check: %q, want %q", r.Check.Error, caps)
		}
		p.Close()
	}
}

// With confinement required, a pool refuses a checker that could not apply
// a layer (here, one its report says the kernel did not offer), naming it,
// and one that applied none; it takes one that applied them all.
func TestRequireConfinementRefusesAMissingLayer(t *testing.T) {
	if runtime.GOOS != "linux" || !kernelSeccomp() || kernelLandlockABI() < 1 {
		t.Skip("needs Linux with seccomp and Landlock")
	}
	start := func(confine bool, env ...string) error {
		opts := sandbox.PoolOptions{
			Args: []string{"-test.run=^$"}, Env: append([]string{envChild + "=1", envPorts + "=443"}, env...),
			RequireConfinement: true, Logger: slog.New(slog.DiscardHandler),
		}
		if confine {
			opts.Env = append(opts.Env, envConfine+"=1")
		}
		p, err := sandbox.NewPool(context.Background(), opts)
		if err == nil {
			p.Close()
		}
		return err
	}
	if err := start(true); err != nil {
		t.Fatalf("a fully confined checker was refused: %v", err)
	}
	for _, layer := range []string{sandbox.LayerSeccomp, sandbox.LayerLandlock, sandbox.LayerCaps} {
		err := start(true, envDropLayer+"="+layer)
		var nc *sandbox.NotConfinedError
		if !errors.As(err, &nc) || nc.Layer.Name != layer || !strings.Contains(err.Error(), "layer "+layer+" not applied (simulated: not offered)") {
			t.Errorf("%s missing: NewPool error %v, want a refusal naming the layer", layer, err)
		}
	}
	if err := start(false); err == nil || !strings.Contains(err.Error(), "layer inherited_fds not applied (not reported)") {
		t.Errorf("an unconfined checker: NewPool error %v, want a refusal naming its first layer", err)
	}
}

// The limits a confined checker reports as applied are the ones in force.
func TestConfinedLimitValues(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	p, _ := newPool(t, true, nil)
	data := uint64(256 << 20)
	if raceEnabled {
		data = 64 << 30
	}
	want := fmt.Sprintf("fsize 0/0 data %d/%d", data, data)
	if r := check(t, p, "limits.social"); r.Check.Error != want {
		t.Errorf("confined limits %q, want %q", r.Check.Error, want)
	}
}

// A checker gets only the environment it needs: none of the
// orchestrator's variables (credentials, tokens) reach untrusted code.
func TestCheckerEnvironmentIsMinimal(t *testing.T) {
	t.Setenv("OBSERVER_TEST_SECRET", "hunter2")
	p, _ := newPool(t, false, nil)
	r := check(t, p, "env.social")
	if r.Check.Error != "env: secret=" {
		t.Errorf("checker environment: %q", r.Check.Error)
	}
}

// A checker whose CPU time reaches RetireCPUSeconds is replaced.
func TestPoolRetiresOnCPUTime(t *testing.T) {
	p, _ := newPool(t, false, func(o *sandbox.PoolOptions) { o.RetireCPUSeconds = 0.1 })
	a := pidOf(t, p)
	if r := check(t, p, "burn.social"); r.Check.Outcome != observer.OutcomeAlive {
		t.Fatalf("burn.social: %s %q", r.Check.Outcome, r.Check.Error)
	}
	if b := pidOf(t, p); a == b {
		t.Errorf("a checker past its CPU budget was reused (pid %d)", a)
	}
	waitGone(t, a)
}

const envOrphan = "SANDBOX_TEST_ORPHAN"

// TestOrphanHelper is no test: with envOrphan set, it is an orchestrator
// that starts a checker, wedges it in sleep.social, prints its pid and
// waits to be killed.
func TestOrphanHelper(t *testing.T) {
	if os.Getenv(envOrphan) == "" {
		return
	}
	p, err := sandbox.NewPool(context.Background(), sandbox.PoolOptions{
		Args: []string{"-test.run=^$"}, Env: []string{envChild + "=1"}, Size: 1,
		CheckTimeout: time.Hour, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := p.Check(context.Background(), "pid.social", crawl.CheckOptions{CheckedAt: at})
	fmt.Printf("%s\n", r.Check.Name)
	go p.Check(context.Background(), "sleep.social", crawl.CheckOptions{CheckedAt: at})
	time.Sleep(time.Hour)
}

// A checker wedged in a check dies with its orchestrator, even one killed
// by SIGKILL that had no chance to kill its checkers.
func TestCheckerDiesWithOrchestrator(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestOrphanHelper$")
	cmd.Env = append(os.Environ(), envOrphan+"=1")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("orchestrator said %q: %v %v", line, err, perr)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	time.Sleep(300 * time.Millisecond) // the checker is in sleep.social
	cmd.Process.Kill()
	cmd.Wait()
	waitGone(t, pid)
}
