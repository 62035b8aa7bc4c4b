package childproc

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestMain lets the test binary be the child: CHILDPROC_TEST names what it
// does.
func TestMain(m *testing.M) {
	switch os.Getenv("CHILDPROC_TEST") {
	case "":
		os.Exit(m.Run())
	case "fail":
		os.Stdout.WriteString("level=INFO msg=started\n")
		os.Stderr.WriteString("level=WARN msg=x\n")
		Report(ErrorFD, errors.New("derive: boom\nLINE 1: more"))
		os.Exit(1)
	case "exit2":
		os.Stderr.WriteString("usage: a line that is no record\n")
		os.Exit(2)
	case "kill":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	case "ok":
		os.Stderr.WriteString("level=INFO msg=done\n")
	}
}

func runChild(t *testing.T, what string) (string, error) {
	t.Helper()
	t.Setenv("CHILDPROC_TEST", what)
	var log strings.Builder
	err := Run(context.Background(), os.Args[0], nil, &log)
	return log.String(), err
}

// The child's log reaches the parent's log whole; its error comes back as
// the record it wrote, lines and all, and nothing of it is in the log.
func TestReportedErrorComesBackAsItsRecord(t *testing.T) {
	log, err := runChild(t, "fail")
	if log != "level=INFO msg=started\nlevel=WARN msg=x\n" {
		t.Errorf("log %q", log)
	}
	var reported *Error
	if !errors.As(err, &reported) || reported.Message != "derive: boom\nLINE 1: more" {
		t.Fatalf("error %#v, want the reported one", err)
	}
}

func TestChildWithoutARecordIsDescribedByHowItEnded(t *testing.T) {
	log, err := runChild(t, "exit2")
	if err == nil || err.Error() != "exit code 2" || !strings.Contains(log, "no record") {
		t.Errorf("exit 2: error %v, log %q", err, log)
	}
	_, err = runChild(t, "kill")
	var killed *KilledError
	if !errors.As(err, &killed) || killed.Signal != syscall.SIGKILL || err.Error() != "killed by signal 9 (killed)" {
		t.Errorf("killed: %v", err)
	}
	log, err = runChild(t, "ok")
	if err != nil || log != "level=INFO msg=done\n" {
		t.Errorf("ok: %v, log %q", err, log)
	}
}

// A cancelled context kills the child and says so.
func TestCancelledRunWrapsTheContextsError(t *testing.T) {
	t.Setenv("CHILDPROC_TEST", "ok")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Run(ctx, os.Args[0], nil, &strings.Builder{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
