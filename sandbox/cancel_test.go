package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/sandbox"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// envStart selects what TestStartHelperChild does as a checker:
//
//	hang        says on stderr "hanging", then neither reads its stdin nor
//	            says hello
//	once:PATH   serves as the usual fake checker if it is the first to
//	            create PATH, else hangs
//	evil        serves as the fake checker, except that checking
//	            evil.social writes escapes, a bidi override and a bell to
//	            stderr and exits
const envStart = "SANDBOX_TEST_START"

var startHelperArgs = []string{"-test.run=^TestStartHelperChild$"}

// evilStderr is what a compromised checker writes to its stderr before
// dying: a terminal escape, a right-to-left override and a bell.
const evilStderr = "\x1b[2J\u202eevil\x07"

// TestStartHelperChild is no test: run with envStart set, it is a checker
// process (see envStart). Otherwise it does nothing.
func TestStartHelperChild(t *testing.T) {
	mode := os.Getenv(envStart)
	if mode == "" {
		return
	}
	hang := func() {
		fmt.Fprintln(os.Stderr, "hanging")
		time.Sleep(time.Hour)
		os.Exit(1)
	}
	var checker crawl.Checker = fake{}
	switch {
	case mode == "hang":
		hang()
	case strings.HasPrefix(mode, "once:"):
		f, err := os.OpenFile(strings.TrimPrefix(mode, "once:"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			hang()
		}
		f.Close()
	case mode == "evil":
		checker = evilChecker{}
	}
	err := sandbox.Serve(context.Background(), os.Stdin, os.Stdout, checker, sandbox.ServeOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

type evilChecker struct{}

func (evilChecker) Check(ctx context.Context, host observer.Host, opts crawl.CheckOptions) (observer.Result, crawl.Trace) {
	if host == "evil.social" {
		fmt.Fprintln(os.Stderr, evilStderr)
		os.Exit(1)
	}
	return fake{}.Check(ctx, host, opts)
}

// hangingPID waits until a hanging checker has said so in the pool's log,
// and returns its pid. It gives up if returned is closed first: whatever
// was waiting for the checker returned without it.
func hangingPID(t *testing.T, logs *testsupport.SyncBuffer, returned <-chan struct{}) int {
	t.Helper()
	return saidPIDs(t, logs, "hanging", 1, returned)[0]
}

// saidPIDs waits until n checkers have written line on their stderr, as the
// pool's log shows, and returns their pids; it gives up if returned is
// closed first.
func saidPIDs(t *testing.T, logs *testsupport.SyncBuffer, line string, n int, returned <-chan struct{}) []int {
	t.Helper()
	re := regexp.MustCompile(`pid=(\d+) line=` + regexp.QuoteMeta(line))
	deadline := time.Now().Add(30 * time.Second) // safety net only
	for {
		if m := re.FindAllStringSubmatch(logs.String(), -1); len(m) >= n {
			pids := make([]int, n)
			for i := range pids {
				pids[i], _ = strconv.Atoi(m[i][1])
			}
			return pids
		}
		select {
		case <-returned:
			t.Fatalf("returned before %d checkers said %q; log:\n%s", n, line, logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d checkers did not say %q; log:\n%s", n, line, logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A pool started for a pass that is then interrupted does not wait out
// StartTimeout for a checker that never says hello: NewPool returns the
// context's error and the checker is killed, with a small known table or a
// large one.
func TestNewPoolCancelled(t *testing.T) {
	big := make([]observer.Host, 50_000)
	for i := range big {
		big[i] = observer.Host(fmt.Sprintf("k%06d.example", i))
	}
	for _, tc := range []struct {
		name  string
		known []observer.Host
	}{{"few known hosts", []observer.Host{"known.social"}}, {"many known hosts", big}} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &testsupport.SyncBuffer{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			returned := make(chan struct{})
			go func() {
				defer close(returned)
				p, err := sandbox.NewPool(ctx, sandbox.PoolOptions{
					Args:         startHelperArgs,
					Env:          []string{envStart + "=hang"},
					Known:        knownTable(t, tc.known...),
					StartTimeout: time.Hour,
					Logger:       slog.New(slog.NewTextHandler(logs, nil)),
				})
				if p != nil {
					p.Close()
				}
				errc <- err
			}()
			pid := hangingPID(t, logs, returned)
			cancel()
			select {
			case err := <-errc:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("NewPool = %v, want an error wrapping context.Canceled", err)
				}
			case <-time.After(30 * time.Second): // safety net only
				t.Fatal("NewPool did not return once its context was cancelled")
			}
			waitGone(t, pid)
		})
	}
}

// A check that has to start a checker stops waiting for it when its
// context is cancelled: checker_failed, and the half-started checker is
// killed.
func TestCheckCancelledWhileStarting(t *testing.T) {
	marker := t.TempDir() + "/started"
	p, logs := newPool(t, false, func(o *sandbox.PoolOptions) {
		o.Args = startHelperArgs
		o.Env = []string{envStart + "=once:" + marker}
		o.StartTimeout = time.Hour
		o.ChecksPerProcess = 1 // the next check needs a new checker
	})
	first := pidOf(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan observer.Result, 1)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		r, _ := p.Check(ctx, "pid.social", crawl.CheckOptions{CheckedAt: at})
		done <- r
	}()
	pid := hangingPID(t, logs, returned)
	if pid == first {
		t.Fatalf("the first checker %d hung", pid)
	}
	cancel()
	select {
	case r := <-done:
		if r.Check.Outcome != observer.OutcomeCheckerFailed || !strings.Contains(r.Check.Error, context.Canceled.Error()) {
			t.Errorf("check cancelled while its checker started: %s %q", r.Check.Outcome, r.Check.Error)
		}
	case <-time.After(30 * time.Second): // safety net only
		t.Fatal("Check did not return once its context was cancelled")
	}
	waitGone(t, pid)
}

// What a dying checker wrote to its stderr explains its checker_failed,
// cleaned: no escape, control or bidi character reaches the data.
func TestCheckerFailedErrorIsClean(t *testing.T) {
	p, _ := newPool(t, false, func(o *sandbox.PoolOptions) {
		o.Args = startHelperArgs
		o.Env = []string{envStart + "=evil"}
	})
	r := check(t, p, "evil.social")
	e := r.Check.Error
	if r.Check.Outcome != observer.OutcomeCheckerFailed || !strings.Contains(e, "evil") {
		t.Fatalf("evil.social: %s %q, want checker_failed quoting its stderr", r.Check.Outcome, e)
	}
	for _, c := range e {
		if unicode.IsControl(c) || unicode.Is(unicode.Bidi_Control, c) {
			t.Errorf("error %q holds %U", e, c)
		}
	}
	if e != observer.CleanText(e, len(e)) {
		t.Errorf("error %q is not clean text", e)
	}
}
