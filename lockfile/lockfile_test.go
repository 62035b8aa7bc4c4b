package lockfile_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/lockfile"
)

// TestMain lets the test binary act as another process holding the lock.
func TestMain(m *testing.M) {
	if path := os.Getenv("LOCKFILE_HOLD"); path != "" {
		l, err := lockfile.Acquire(path)
		if err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		buf := make([]byte, 1)
		os.Stdin.Read(buf) // hold until the parent closes stdin
		l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestSecondAcquireNamesHolderPID(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOCKFILE_HOLD="+path)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	buf := make([]byte, 7)
	if _, err := stdout.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("holder did not lock: %q %v", buf, err)
	}

	_, err := lockfile.Acquire(path)
	var held *lockfile.HeldError
	if !errors.As(err, &held) {
		t.Fatalf("want HeldError, got %v", err)
	}
	if held.PID != cmd.Process.Pid || !strings.Contains(err.Error(), strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("error %q does not name holder pid %d", err, cmd.Process.Pid)
	}
}

func TestLockFreedWhenHolderIsKilled(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOCKFILE_HOLD="+path)
	cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	stdout.Read(buf)
	cmd.Process.Kill()
	cmd.Wait()
	l, err := lockfile.Acquire(path)
	if err != nil {
		t.Fatalf("lock of a killed holder not freed: %v", err)
	}
	l.Release()
}

func TestReleaseThenReacquire(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	l, err := lockfile.Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("lock file holds %q, want our pid", b)
	}
	l.Release()
	// A released lock must not keep naming this process: a later reader
	// (or an operator's cat) would take a dead run for the holder.
	if b, err := os.ReadFile(path); err != nil || len(b) != 0 {
		t.Fatalf("released lock file holds %q (%v), want it empty", b, err)
	}
	l2, err := lockfile.Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	l2.Release()
}

// TestHeldErrorWithoutPID: a holder whose pid could not be read (not yet
// written, or the file emptied) is not reported as "process 0".
func TestHeldErrorWithoutPID(t *testing.T) {
	msg := (&lockfile.HeldError{Path: "/data/.lock"}).Error()
	if strings.Contains(msg, "process 0") || !strings.Contains(msg, "/data/.lock") {
		t.Fatalf("HeldError without a pid says %q", msg)
	}
	msg = (&lockfile.HeldError{Path: "/data/.lock", PID: 4242}).Error()
	if !strings.Contains(msg, "process 4242") {
		t.Fatalf("HeldError with pid 4242 says %q", msg)
	}
}

func TestUnwritableDirectoryIsAnError(t *testing.T) {
	_, err := lockfile.Acquire(filepath.Join(t.TempDir(), "missing", ".lock"))
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("want error naming the path, got %v", err)
	}
}

// holder is another process holding the lock at a path.
type holder struct {
	cmd   *exec.Cmd
	stdin interface{ Close() error }
}

func hold(t *testing.T, path string) *holder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOCKFILE_HOLD="+path)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holder{cmd: cmd, stdin: stdin}
	t.Cleanup(h.release)
	buf := make([]byte, 7)
	if _, err := stdout.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("holder did not lock: %q %v", buf, err)
	}
	return h
}

// release makes the holder release the lock and exit.
func (h *holder) release() {
	h.stdin.Close()
	h.cmd.Wait()
}

type waited struct {
	l   *lockfile.Lock
	err error
}

func startWait(ctx context.Context, path string) chan waited {
	ch := make(chan waited, 1)
	go func() {
		l, err := lockfile.Wait(ctx, path, nil)
		ch <- waited{l, err}
	}()
	return ch
}

func result(t *testing.T, ch chan waited) waited {
	t.Helper()
	select {
	case w := <-ch:
		return w
	case <-time.After(30 * time.Second): // safety net only
		t.Fatal("Wait did not return")
		return waited{}
	}
}

// notYet fails if Wait has returned while another process holds the lock.
func notYet(t *testing.T, ch chan waited) {
	t.Helper()
	select {
	case w := <-ch:
		t.Fatalf("Wait returned (%v, %v) while another process held the lock", w.l, w.err)
	default:
	}
}

// takenByUs checks that the lock at path is held, by this process.
func takenByUs(t *testing.T, path string) {
	t.Helper()
	if b, _ := os.ReadFile(path); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q, want our pid", b)
	}
	_, err := lockfile.Acquire(path)
	var held *lockfile.HeldError
	if !errors.As(err, &held) || held.PID != os.Getpid() {
		t.Errorf("Acquire after Wait: %v, want the lock held by us", err)
	}
}

func TestWaitTakesLockWhenHolderReleases(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	h := hold(t, path)
	ch := startWait(context.Background(), path)
	notYet(t, ch)
	h.release()
	w := result(t, ch)
	if w.err != nil {
		t.Fatalf("Wait: %v", w.err)
	}
	takenByUs(t, path)
	if err := w.l.Release(); err != nil {
		t.Fatal(err)
	}
	l, err := lockfile.Acquire(path)
	if err != nil {
		t.Fatalf("Acquire after the waited lock's Release: %v", err)
	}
	l.Release()
}

// Wait says once who it waits for, when the lock is held, and not at all
// when it is free.
func TestWaitSaysWhoItWaitsFor(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	h := hold(t, path)
	told := make(chan *lockfile.HeldError, 10)
	ch := make(chan waited, 1)
	ctx := &countingCtx{Context: context.Background(), tries: make(chan struct{}, 100)}
	go func() {
		l, err := lockfile.Wait(ctx, path, func(held *lockfile.HeldError) { told <- held })
		ch <- waited{l, err}
	}()
	// Three tries, all finding the lock held, before it is released.
	for range 3 {
		select {
		case <-ctx.tries:
		case <-time.After(30 * time.Second): // safety net only
			t.Fatal("Wait did not try again")
		}
	}
	select {
	case held := <-told:
		if held.PID != h.cmd.Process.Pid || held.Path != path {
			t.Errorf("told %+v, want the holder's pid %d and %s", held, h.cmd.Process.Pid, path)
		}
	case <-time.After(30 * time.Second): // safety net only
		t.Fatal("Wait did not say it was waiting")
	}
	notYet(t, ch)
	h.release()
	w := result(t, ch)
	if w.err != nil {
		t.Fatalf("Wait: %v", w.err)
	}
	if n := len(told); n != 0 {
		t.Errorf("told %d more times, want once in all", n)
	}
	w.l.Release()

	l, err := lockfile.Wait(context.Background(), path, func(held *lockfile.HeldError) { t.Errorf("told %+v about a free lock", held) })
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
}

func TestWaitTakesLockWhenHolderIsKilled(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	h := hold(t, path)
	ch := startWait(context.Background(), path)
	notYet(t, ch)
	h.cmd.Process.Kill()
	h.cmd.Wait()
	w := result(t, ch)
	if w.err != nil {
		t.Fatalf("Wait: %v", w.err)
	}
	takenByUs(t, path)
	w.l.Release()
}

// countingCtx tells each time Wait asks for Done: once per try that found
// the lock held.
type countingCtx struct {
	context.Context
	tries chan struct{}
}

func (c *countingCtx) Done() <-chan struct{} {
	c.tries <- struct{}{}
	return c.Context.Done()
}

// watchedCtx tells when Wait first asks for Done: it has found the lock
// held and waits.
type watchedCtx struct {
	context.Context
	once    sync.Once
	waiting chan struct{}
}

func (c *watchedCtx) Done() <-chan struct{} {
	c.once.Do(func() { close(c.waiting) })
	return c.Context.Done()
}

func TestWaitCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	h := hold(t, path)
	inner, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx := &watchedCtx{Context: inner, waiting: make(chan struct{})}
	ch := startWait(ctx, path)
	select {
	case <-ctx.waiting:
	case w := <-ch:
		t.Fatalf("Wait returned (%v, %v) while another process held the lock", w.l, w.err)
	case <-time.After(30 * time.Second): // safety net only
		t.Fatal("Wait never watched its context while the lock was held")
	}
	cancel()
	w := result(t, ch)
	if !errors.Is(w.err, context.Canceled) || w.l != nil {
		t.Fatalf("Wait = %v, %v; want an error wrapping context.Canceled", w.l, w.err)
	}
	if !strings.Contains(w.err.Error(), strconv.Itoa(h.cmd.Process.Pid)) {
		t.Errorf("error %q does not name the holder pid %d", w.err, h.cmd.Process.Pid)
	}
	// Giving up left the lock alone: the holder still has it, and once
	// it is gone the lock is free (the waiter's file is closed).
	var held *lockfile.HeldError
	if _, err := lockfile.Acquire(path); !errors.As(err, &held) || held.PID != h.cmd.Process.Pid {
		t.Errorf("after a cancelled Wait, Acquire = %v; want held by %d", err, h.cmd.Process.Pid)
	}
	h.release()
	l, err := lockfile.Acquire(path)
	if err != nil {
		t.Fatalf("lock not free after the holder released it: %v", err)
	}
	l.Release()
}

func TestWaitOnFreeLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	l, err := lockfile.Wait(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	takenByUs(t, path)
	l.Release()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if l, err := lockfile.Wait(ctx, path, nil); !errors.Is(err, context.Canceled) {
		l.Release()
		t.Fatalf("Wait with a done context = %v; want an error wrapping context.Canceled", err)
	}
}

func TestWaitUnwritableDirectoryIsAnError(t *testing.T) {
	_, err := lockfile.Wait(context.Background(), filepath.Join(t.TempDir(), "missing", ".lock"), nil)
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("want error naming the path, got %v", err)
	}
}
