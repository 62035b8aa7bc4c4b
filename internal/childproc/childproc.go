// Package childproc runs one of the program's own hidden subcommands in a
// child process and carries the child's error back to the parent as a
// record on a pipe of its own, so that the parent reports a failure in its
// own words instead of parsing the child's log. The child's stdout and
// stderr are its log, passed through untouched.
//
// The protocol: the parent opens a pipe and hands its write end to the child
// as file descriptor ErrorFD, naming it on the command line (the child's
// -error-fd flag, say); a child that fails writes one JSON object,
// {"error": "..."}, to it with Report and exits non-zero. A child that ends
// without a record (killed by a signal, a crash) is described by how it
// ended.
package childproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// ErrorFD is the child's file descriptor of the error pipe: the first of
// exec.Cmd.ExtraFiles.
const ErrorFD = 3

// maxRecord bounds what the parent reads of the pipe: an error is a line or
// a few, not a stream.
const maxRecord = 64 << 10

// record is what a failed child writes to the error pipe.
type record struct {
	Error string `json:"error"`
}

// Error is a child's failure as it reported it.
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

// KilledError is a child ended by a signal it could not report: the OOM
// killer under a MemoryMax, say.
type KilledError struct{ Signal syscall.Signal }

func (e *KilledError) Error() string {
	return fmt.Sprintf("killed by signal %d (%s)", int(e.Signal), e.Signal)
}

// Run starts exe with args, the child's stdout and stderr going to log, and
// waits for it. A failed child's error is an *Error when it reported one,
// a *KilledError when a signal ended it, or else says its exit code. When
// ctx ends the child is killed and Run returns an error wrapping ctx's.
func Run(ctx context.Context, exe string, args []string, log io.Writer) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("error pipe: %w", err)
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, exe, args...)
	// One writer for both: os/exec then writes them through one pipe, in
	// the order the child wrote them.
	cmd.Stdout, cmd.Stderr = log, log
	cmd.ExtraFiles = []*os.File{w}
	err = cmd.Start()
	// The child holds its own copy: the pipe reads to its end when the
	// child exits.
	w.Close()
	if err != nil {
		return err
	}
	reported := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(r, maxRecord))
		reported <- b
	}()
	err = cmd.Wait()
	// The pipe ends when the child exits: nothing else holds its write end.
	rec := <-reported
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return err
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return &KilledError{Signal: ws.Signal()}
	}
	var rc record
	if json.Unmarshal(rec, &rc) == nil && rc.Error != "" {
		return &Error{Message: rc.Error}
	}
	return fmt.Errorf("exit code %d", exit.ExitCode())
}

// ReportedError is a child's error that Report wrote to the parent: the
// child's exit code says it failed, and its log need not say it again.
type ReportedError struct{ Err error }

func (r *ReportedError) Error() string { return r.Err.Error() }
func (r *ReportedError) Unwrap() error { return r.Err }

// Report writes err as the error record to the pipe at fd, for the parent
// that started this process with Run. It returns err as a *ReportedError,
// or, when the record could not be written, err joined with why.
func Report(fd int, err error) error {
	f := os.NewFile(uintptr(fd), "error pipe")
	if f == nil {
		return errors.Join(err, fmt.Errorf("error pipe: no file descriptor %d", fd))
	}
	defer f.Close()
	if werr := json.NewEncoder(f).Encode(record{Error: err.Error()}); werr != nil {
		return errors.Join(err, fmt.Errorf("error pipe: %w", werr))
	}
	return &ReportedError{err}
}
