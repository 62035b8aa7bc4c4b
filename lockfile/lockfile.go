// Package lockfile gives one process at a time a directory to write.
// Acquire fails at once, with a message naming the pid that holds the lock:
// a second crawl on the same data directory, or a second build into the
// same output, stops there. Wait instead waits for the lock until its
// context is done: a derivation of the data waits for the one before it.
//
// The lock is an flock(2) on a file, so the kernel releases it when the
// holder dies, even by SIGKILL: a stale file never blocks the next run.
package lockfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Lock is a held lock. Release it when done.
type Lock struct {
	f *os.File
}

// HeldError says who holds a lock.
type HeldError struct {
	Path string
	PID  int // 0 when the holder's pid could not be read
}

func (e *HeldError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%s is locked by process %d (another run still going?)", e.Path, e.PID)
	}
	return fmt.Sprintf("%s is locked by another process", e.Path)
}

// Acquire takes the lock at path without waiting, creating the file if
// needed, and writes this process's pid into it. If another process holds
// the lock, the error is a *HeldError.
func Acquire(path string) (*Lock, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	l, err := try(f, path)
	if err != nil {
		f.Close()
	}
	return l, err
}

// pollInterval is how often Wait tries a held lock again.
const pollInterval = 100 * time.Millisecond

// Wait takes the lock at path as Acquire does, but while another process
// holds it, it tries again every pollInterval until it gets the lock or ctx
// is done. A ctx done before the lock is taken is an error wrapping
// ctx.Err(), even if the lock is free. When the lock is held at the first
// try, Wait calls held (if not nil) once with who holds it, so that a
// caller can say what it waits for: a holder stopped or hung would
// otherwise make every later run wait in silence.
//
// flock(2) cannot be interrupted but by a signal, hence the polling: a
// blocking flock left running in a goroutine would take the lock after
// Wait had given up on it.
func Wait(ctx context.Context, path string, held func(*HeldError)) (*Lock, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for first := true; ; first = false {
		l, err := try(f, path)
		var heldErr *HeldError
		if !errors.As(err, &heldErr) {
			if err != nil {
				f.Close()
			}
			return l, err
		}
		if first && held != nil {
			held(heldErr)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("gave up waiting: %v: %w", heldErr, ctx.Err())
		case <-tick.C:
		}
	}
}

func open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// try locks f without waiting and writes our pid into it. It leaves f open
// on failure.
func try(f *os.File, path string) (*Lock, error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
			return nil, &HeldError{Path: path, PID: pid}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up. The file stays: removing it would let a third
// process lock a new file while a second still waits on the old one.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.f.Truncate(0)
	err := l.f.Close()
	l.f = nil
	return err
}
