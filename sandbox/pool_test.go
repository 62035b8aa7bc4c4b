package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/sandbox"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// knownTable is the shared known table of hosts, closed when the test ends.
func knownTable(t testing.TB, hosts ...observer.Host) *sandbox.SharedKnown {
	t.Helper()
	k, err := sandbox.NewSharedKnown(hosts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

func newPool(t testing.TB, confine bool, mod func(*sandbox.PoolOptions)) (*sandbox.Pool, *testsupport.SyncBuffer) {
	t.Helper()
	logs := &testsupport.SyncBuffer{}
	env := []string{envChild + "=1", envWrite + "=" + filepath.Join(t.TempDir(), "written")}
	if confine {
		env = append(env, envConfine+"=1")
	}
	opts := sandbox.PoolOptions{
		Args:         []string{"-test.run=^$"},
		Env:          env,
		Size:         1,
		Known:        knownTable(t, "known.social"),
		CheckTimeout: 20 * time.Second, // a safety net; the deadline tests set a short one
		StartTimeout: 30 * time.Second,
		MemoryLimit:  512 << 20,
		Logger:       slog.New(slog.NewTextHandler(logs, nil)),
	}
	if mod != nil {
		mod(&opts)
	}
	p, err := sandbox.NewPool(context.Background(), opts)
	if err != nil {
		t.Fatalf("NewPool: %v\nlog:\n%s", err, logs)
	}
	t.Cleanup(func() { p.Close() })
	return p, logs
}

var at = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func check(t testing.TB, p *sandbox.Pool, host string) observer.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // safety net only
	defer cancel()
	r, _ := p.Check(ctx, observer.Host(host), crawl.CheckOptions{CheckedAt: at, PassID: "p1", FetchPeers: true})
	return r
}

func pidOf(t *testing.T, p *sandbox.Pool) int {
	t.Helper()
	r := check(t, p, "pid.social")
	if r.Check.Outcome != observer.OutcomeAlive {
		t.Fatalf("pid.social: %s %s", r.Check.Outcome, r.Check.Error)
	}
	pid, err := strconv.Atoi(r.Check.Name)
	if err != nil {
		t.Fatalf("pid.social name %q", r.Check.Name)
	}
	return pid
}

// gone reports whether pid no longer runs (absent, or a zombie waiting for
// a reaper that is not us).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && len(b) > i+2 && b[i+2] == 'Z'
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // safety net only
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPoolResult(t *testing.T) {
	p, _ := newPool(t, false, nil)
	r := check(t, p, "peers.social")
	c := r.Check
	if c.Outcome != observer.OutcomeAlive || c.Host != "peers.social" || !c.CheckedAt.Equal(at) || c.PassID != "p1" || r.Bytes != 42 {
		t.Fatalf("check = %+v, bytes %d", c, r.Bytes)
	}
	// known.social came over in the known set, so the checker dropped it.
	var got []string
	for _, d := range r.Discoveries {
		if d.Via != "peers.social" || !d.DiscoveredAt.Equal(at) {
			t.Errorf("discovery %+v", d)
		}
		got = append(got, string(d.Host))
	}
	if strings.Join(got, ",") != "new1.social,new2.social" {
		t.Errorf("discoveries %v, want new1.social,new2.social", got)
	}

	r = check(t, p, "moved.social")
	if r.Check.Outcome != observer.OutcomeMoved || len(r.Discoveries) != 1 || r.Discoveries[0].Via != observer.ViaRedirect || r.Discoveries[0].Host != "target.social" {
		t.Errorf("moved: %+v %+v", r.Check, r.Discoveries)
	}

	// The request is checked before it is sent: a host that is not in
	// its normalised form (an observer.Host made by conversion, not by
	// hostname.Normalize) is refused.
	r = check(t, p, "PID.Social.")
	if r.Check.Outcome != observer.OutcomeError || !strings.Contains(r.Check.Error, "not a normalised host name") {
		t.Errorf("unnormalised host: %+v", r.Check)
	}
	r = check(t, p, "not a host")
	if r.Check.Outcome != observer.OutcomeError {
		t.Errorf("invalid host: %+v", r.Check)
	}
	// Long-lived: the same process answers again.
	if a, b := pidOf(t, p), pidOf(t, p); a != b {
		t.Errorf("pool used processes %d and %d for consecutive checks", a, b)
	}
}

// Every checker drops the hosts of the one shared table, however large.
func TestPoolSharesTheKnownTable(t *testing.T) {
	known := make([]observer.Host, 0, 30001)
	for i := range 30000 {
		known = append(known, observer.Host(fmt.Sprintf("k%05d.example", i)))
	}
	known = append(known, "new2.social")
	p, _ := newPool(t, false, func(o *sandbox.PoolOptions) { o.Known = knownTable(t, known...) })
	r := check(t, p, "peers.social")
	var got []string
	for _, d := range r.Discoveries {
		got = append(got, string(d.Host))
	}
	if strings.Join(got, ",") != "known.social,new1.social" {
		t.Errorf("discoveries %v, want known.social,new1.social", got)
	}
}

func TestPoolTrimsDiscoveries(t *testing.T) {
	p, _ := newPool(t, false, nil)
	r := check(t, p, "many.social")
	if r.Check.Outcome != observer.OutcomeAlive {
		t.Fatalf("many.social: %s %s", r.Check.Outcome, r.Check.Error)
	}
	n := len(r.Discoveries)
	if n == 0 || n >= 300_000 || n > sandbox.MaxDiscoveries {
		t.Fatalf("%d discoveries, want some but at most %d", n, sandbox.MaxDiscoveries)
	}
	if string(r.Discoveries[n-1].Host) != fmt.Sprintf("h%06d.many.social", n-1) {
		t.Errorf("kept discoveries are not the first ones: last %s", r.Discoveries[n-1].Host)
	}
}

// Each hostile checker gets its host checker_failed, is killed, and the next
// check runs in a fresh process.
func TestPoolHostileCheckers(t *testing.T) {
	cases := []struct {
		host string
		want string // in the Error
	}{
		{"panic.social", "panic: boom from panic.social"},
		{"exit.social", "exit status 7"},
		{"hog.social", "memory limit exceeded"},
		{"huge.social", "frame too large"},
		{"garbage.social", "unexpected message"},
		{"badoutcome.social", "unknown outcome"},
		{"baddisc.social", "not a normalised host name"},
		{"badvia.social", "redirect discovery"},
		{"badtime.social", "checked_at"},
		{"badhost.social", "asked for"},
		{"negusers.social", "users -5 out of range"},
		{"longname.social", "name: more than 200 characters"},
		{"badstatus.social", "http_status"},
		{"slowclaim.social", "duration_ms"},
		{"badmoved.social", "moved_to"},
	}
	p, logs := newPool(t, false, nil)
	for _, tc := range cases {
		t.Run(tc.host, func(t *testing.T) {
			before := pidOf(t, p)
			r := check(t, p, tc.host)
			if r.Check.Outcome != observer.OutcomeCheckerFailed {
				t.Fatalf("outcome %s (%s), want checker_failed", r.Check.Outcome, r.Check.Error)
			}
			if !strings.Contains(r.Check.Error, tc.want) {
				t.Errorf("error %q does not say %q", r.Check.Error, tc.want)
			}
			if string(r.Check.Host) != tc.host || !r.Check.CheckedAt.Equal(at) || len(r.Discoveries) != 0 {
				t.Errorf("failed check: %+v", r)
			}
			waitGone(t, before)
			if after := pidOf(t, p); after == before {
				t.Errorf("the same checker %d answered after a failure", after)
			}
		})
	}
	if !strings.Contains(logs.String(), "checker stderr") {
		t.Errorf("checker stderr not forwarded to the log")
	}
}

func TestPoolDeadline(t *testing.T) {
	p, _ := newPool(t, false, func(o *sandbox.PoolOptions) { o.CheckTimeout = time.Second })
	before := pidOf(t, p)
	r := check(t, p, "sleep.social")
	if r.Check.Outcome != observer.OutcomeCheckerFailed || !strings.Contains(r.Check.Error, "deadline overrun") {
		t.Fatalf("sleep.social: %s %q", r.Check.Outcome, r.Check.Error)
	}
	waitGone(t, before)
	if after := pidOf(t, p); after == before {
		t.Errorf("the same checker %d answered after overrunning", after)
	}
}

func TestPoolKillsProcessGroup(t *testing.T) {
	p, logs := newPool(t, false, func(o *sandbox.PoolOptions) { o.CheckTimeout = time.Second })
	r := check(t, p, "spawn.social")
	if r.Check.Outcome != observer.OutcomeCheckerFailed {
		t.Fatalf("outcome %s (%s)", r.Check.Outcome, r.Check.Error)
	}
	m := regexp.MustCompile(`grandchild (\d+)`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no grandchild in the log:\n%s", logs)
	}
	pid, _ := strconv.Atoi(m[1])
	waitGone(t, pid)
}

// A checker leads a session of its own, so it has no controlling terminal:
// in the orchestrator's session it could open /dev/tty (where Landlock does
// not stop it), read what the operator types or push input with TIOCSTI.
func TestCheckerHasNoTerminal(t *testing.T) {
	p, _ := newPool(t, true, nil)
	pid := pidOf(t, p)
	r := check(t, p, "session.social")
	if r.Check.Outcome != observer.OutcomeAlive {
		t.Fatalf("session.social: %s %s", r.Check.Outcome, r.Check.Error)
	}
	ours, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	if sid := r.Check.Name; sid != strconv.Itoa(pid) {
		t.Errorf("checker %d is in session %s (ours is %d), want a session of its own", pid, sid, ours)
	}
}

// waitLog waits until the pool's log contains s.
func waitLog(t *testing.T, logs *testsupport.SyncBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // safety net only
	for !strings.Contains(logs.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never logged; log:\n%s", s, logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPoolCancel(t *testing.T) {
	p, logs := newPool(t, false, func(o *sandbox.PoolOptions) { o.CheckTimeout = time.Hour })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan observer.Result)
	before := pidOf(t, p)
	go func() {
		r, _ := p.Check(ctx, "sleep.social", crawl.CheckOptions{CheckedAt: at})
		done <- r
	}()
	// Cancel only once the checker is in the check: before that, Check
	// would return "not started" instead of interrupting a running check.
	waitLog(t, logs, fmt.Sprintf("pid=%d line=sleeping", before))
	cancel()
	select {
	case r := <-done:
		if r.Check.Outcome != observer.OutcomeCheckerFailed || !strings.Contains(r.Check.Error, "interrupted") {
			t.Errorf("cancelled check: %s %q", r.Check.Outcome, r.Check.Error)
		}
	case <-time.After(30 * time.Second): // safety net only
		t.Fatal("cancelled check did not return")
	}
	waitGone(t, before)
}

func TestPoolPerProcess(t *testing.T) {
	p, _ := newPool(t, false, func(o *sandbox.PoolOptions) { o.ChecksPerProcess = 1 })
	a := pidOf(t, p)
	b := pidOf(t, p)
	if a == b {
		t.Errorf("ChecksPerProcess 1 reused process %d", a)
	}
	waitGone(t, a)
	// Checks at once too, each in a process of its own.
	p, _ = newPool(t, false, func(o *sandbox.PoolOptions) { o.ChecksPerProcess, o.Size = 1, 3 })
	var wg sync.WaitGroup
	pids := make([]string, 3)
	for i := range pids {
		wg.Go(func() { pids[i] = check(t, p, "pid.social").Check.Name })
	}
	wg.Wait()
	if pids[0] == "" || pids[0] == pids[1] || pids[1] == pids[2] || pids[0] == pids[2] {
		t.Errorf("ChecksPerProcess 1 ran checks at once in processes %q", pids)
	}
}

func TestPoolConcurrent(t *testing.T) {
	p, _ := newPool(t, false, func(o *sandbox.PoolOptions) { o.Size = 3 })
	hosts := []string{"peers.social", "panic.social", "pid.social", "badoutcome.social", "moved.social", "exit.social"}
	var wg sync.WaitGroup
	results := make([]observer.Result, 4*len(hosts))
	for i := range results {
		wg.Go(func() { results[i] = check(t, p, hosts[i%len(hosts)]) })
	}
	wg.Wait()
	for i, r := range results {
		h := hosts[i%len(hosts)]
		want := observer.OutcomeAlive
		switch h {
		case "panic.social", "badoutcome.social", "exit.social":
			want = observer.OutcomeCheckerFailed
		case "moved.social":
			want = observer.OutcomeMoved
		}
		if string(r.Check.Host) != h || r.Check.Outcome != want {
			t.Errorf("check %d of %s: %s %s, want %s", i, h, r.Check.Host, r.Check.Outcome, want)
		}
	}
}

func TestNewPoolFailsOnBrokenChecker(t *testing.T) {
	_, err := sandbox.NewPool(context.Background(), sandbox.PoolOptions{
		Args:   []string{"-test.run=^$"}, // no envChild: the test binary runs no test and exits
		Logger: slog.New(slog.DiscardHandler),
	})
	if err == nil {
		t.Fatal("NewPool succeeded with a checker that never says hello")
	}
}

func layer(r sandbox.Report, name string) (sandbox.Layer, bool) {
	for _, l := range r.Layers {
		if l.Name == name {
			return l, true
		}
	}
	return sandbox.Layer{}, false
}

// A cgroup parent that cannot hold checker cgroups is reported, not fatal.
func TestPoolCgroupFallback(t *testing.T) {
	for _, dir := range []string{t.TempDir(), "/sys/fs/cgroup/unified"} {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		sub, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		usable := err == nil && strings.Contains(" "+strings.TrimSpace(string(sub))+" ", " memory ")
		p, _ := newPool(t, false, func(o *sandbox.PoolOptions) { o.CgroupParent = dir })
		l, ok := layer(p.Report(), "cgroup")
		if !ok {
			t.Fatalf("%s: no cgroup layer in %s", dir, p.Report())
		}
		if !usable && (l.Applied || !strings.Contains(l.Detail, "could not use")) {
			t.Errorf("%s: unusable cgroup parent reported as %+v", dir, l)
		}
		if r := check(t, p, "pid.social"); r.Check.Outcome != observer.OutcomeAlive {
			t.Errorf("%s: check failed: %s", dir, r.Check.Error)
		}
		p.Close()
	}
}

type sinkFunc func(observer.Result) error

func (f sinkFunc) Record(_ context.Context, r observer.Result) error { return f(r) }

// A whole pass over hostile and honest hosts finishes, with checker_failed
// for the hostile ones and the honest ones checked.
func TestPassWithPool(t *testing.T) {
	p, _ := newPool(t, false, func(o *sandbox.PoolOptions) { o.Size = 2 })
	got := map[string]observer.Outcome{}
	var discovered []string
	known := crawl.NewKnownSet(1)
	known.Add("known.social")
	pass := crawl.Pass{
		Checker: p,
		Sink: sinkFunc(func(r observer.Result) error {
			got[string(r.Check.Host)] = r.Check.Outcome
			for _, d := range r.Discoveries {
				discovered = append(discovered, string(d.Host))
			}
			return nil
		}),
		Known:       known,
		Concurrency: 2,
		Now:         at,
		PassID:      "pass",
		Logger:      slog.New(slog.DiscardHandler),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // safety net only
	defer cancel()
	sum, err := pass.Run(ctx, []observer.Host{"panic.social", "peers.social", "hog.social", "badoutcome.social", "pid.social", "exit.social"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]observer.Outcome{
		"panic.social": observer.OutcomeCheckerFailed, "hog.social": observer.OutcomeCheckerFailed,
		"badoutcome.social": observer.OutcomeCheckerFailed, "exit.social": observer.OutcomeCheckerFailed,
		"peers.social": observer.OutcomeAlive, "pid.social": observer.OutcomeAlive,
	}
	for h, o := range want {
		if got[h] != o {
			t.Errorf("%s: %s, want %s", h, got[h], o)
		}
	}
	if sum.Checks != int64(len(want)) || sum.ByOutcome[observer.OutcomeCheckerFailed] != 4 {
		t.Errorf("summary %+v", sum)
	}
	if strings.Join(discovered, ",") != "new1.social,new2.social" {
		t.Errorf("discovered %v", discovered)
	}
}

// Checkers start as work needs them: checks one after another reuse the
// first checker however large the pool, and checks at once never start more
// checkers than there are checks.
func TestPoolStartsCheckersAsWorkNeedsThem(t *testing.T) {
	p, _ := newPool(t, false, func(o *sandbox.PoolOptions) { o.Size = 8 })
	first := pidOf(t, p)
	for range 10 {
		if pid := pidOf(t, p); pid != first {
			t.Fatalf("a sequential check ran in process %d, not the idle %d", pid, first)
		}
	}
	if n := p.Started(); n != 1 {
		t.Fatalf("%d checkers started for checks one at a time, want 1", n)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for range 5 {
				if r := check(t, p, "pid.social"); r.Check.Outcome != observer.OutcomeAlive {
					t.Errorf("pid.social: %s %s", r.Check.Outcome, r.Check.Error)
				}
			}
		})
	}
	wg.Wait()
	if n := p.Started(); n > 3 {
		t.Errorf("%d checkers started for 3 checks at a time", n)
	}
}

// A pool started on a known table still to be written starts its checkers
// at once: they confine themselves, keeping the table's descriptor, before
// the table is written, and NewPool returns once it is, with checkers that
// drop the hosts written after they started.
func TestPoolStartsBeforeTheKnownTableIsWritten(t *testing.T) {
	known, err := sandbox.NewPendingKnown()
	if err != nil {
		t.Fatal(err)
	}
	defer known.Close()
	logs := &testsupport.SyncBuffer{}
	pools := make(chan *sandbox.Pool, 1)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		p, err := sandbox.NewPool(context.Background(), sandbox.PoolOptions{
			Args: []string{"-test.run=^$"}, Env: []string{envChild + "=1", envConfine + "=1", envReady + "=1"},
			Size: 2, Prestart: 2, Known: known, StartTimeout: 30 * time.Second, MemoryLimit: 512 << 20,
			Logger: slog.New(slog.NewTextHandler(logs, nil)),
		})
		if err != nil {
			t.Errorf("NewPool: %v\nlog:\n%s", err, logs)
		}
		pools <- p
	}()
	saidPIDs(t, logs, "ready", 2, returned)
	if err := known.Write(2, func(add func(observer.Host) (bool, error)) error {
		for _, h := range []observer.Host{"known.social", "new2.social"} {
			if _, err := add(h); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p := <-pools
	if p == nil {
		return
	}
	defer p.Close()
	if !p.Report().Applied(sandbox.LayerInherited) {
		t.Errorf("confinement %s", p.Report())
	}
	var got []string
	for _, d := range check(t, p, "peers.social").Discoveries {
		got = append(got, string(d.Host))
	}
	if strings.Join(got, ",") != "new1.social" {
		t.Errorf("discoveries %v, want new1.social (known.social and new2.social are in the table)", got)
	}
}

// A known table that could not be written fails the start of the pool
// waiting for it, and its checkers are killed.
func TestNewPoolFailsWhenTheKnownTableDoes(t *testing.T) {
	known, err := sandbox.NewPendingKnown()
	if err != nil {
		t.Fatal(err)
	}
	defer known.Close()
	logs := &testsupport.SyncBuffer{}
	errc := make(chan error, 1)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		p, err := sandbox.NewPool(context.Background(), sandbox.PoolOptions{
			Args: []string{"-test.run=^$"}, Env: []string{envChild + "=1", envReady + "=1"},
			Known: known, StartTimeout: 30 * time.Second, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		})
		if p != nil {
			p.Close()
		}
		errc <- err
	}()
	pid := saidPIDs(t, logs, "ready", 1, returned)[0]
	boom := errors.New("the known hosts could not be read")
	if err := known.Write(1, func(func(observer.Host) (bool, error)) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Write = %v, want %v", err, boom)
	}
	if err := <-errc; !errors.Is(err, boom) {
		t.Errorf("NewPool = %v, want the table's error", err)
	}
	waitGone(t, pid)
}

// A checker that dies with several checks under way has each of them
// checked again in a checker of its own: the check that made it die is
// recorded as failed, the others as what they are, each once.
func TestChecksUnderWayOnADyingCheckerAreCheckedAgainAlone(t *testing.T) {
	p, logs := newPool(t, false, func(o *sandbox.PoolOptions) { o.Size, o.ChecksAtOnce = 4, 4 })
	first := pidOf(t, p)
	var wg sync.WaitGroup
	waited := make([]observer.Result, 2)
	for i := range waited {
		wg.Go(func() { waited[i] = check(t, p, "wait.social") })
	}
	deadline := time.Now().Add(30 * time.Second) // safety net only
	for strings.Count(logs.String(), fmt.Sprintf("pid=%d line=waiting", first)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the two checks of wait.social never reached checker %d; log:\n%s", first, logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	crashed := check(t, p, "panic.social")
	wg.Wait()
	if crashed.Check.Outcome != observer.OutcomeCheckerFailed || !strings.Contains(crashed.Check.Error, "boom from panic.social") {
		t.Errorf("panic.social: %s %q, want checker_failed with its panic", crashed.Check.Outcome, crashed.Check.Error)
	}
	pids := map[string]bool{strconv.Itoa(first): true}
	for _, r := range waited {
		if r.Check.Outcome != observer.OutcomeAlive || pids[r.Check.Name] {
			t.Errorf("wait.social: %s %q in checker %s; want alive, each in a checker of its own, not %d", r.Check.Outcome, r.Check.Error, r.Check.Name, first)
		}
		pids[r.Check.Name] = true
	}
	if n := strings.Count(logs.String(), "checking again in a checker of its own"); n != 3 {
		t.Errorf("%d checks checked again, want the 3 under way; log:\n%s", n, logs)
	}
	if n := p.Started(); n != 4 {
		t.Errorf("%d checkers started, want the first and one for each check checked again", n)
	}
}
