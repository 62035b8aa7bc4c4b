package lockfile_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
	l2, err := lockfile.Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	l2.Release()
}

func TestUnwritableDirectoryIsAnError(t *testing.T) {
	_, err := lockfile.Acquire(filepath.Join(t.TempDir(), "missing", ".lock"))
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("want error naming the path, got %v", err)
	}
}
