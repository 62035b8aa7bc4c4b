package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/fediverse-observer/observer/duck"
)

// deriveInChild folds new snapshots into the derived state in a child
// process (the hidden __derive subcommand) and waits for it. The crawl
// process is the long-lived orchestrator: DuckDB keeps the memory a
// derivation of a million hosts needed (around a gigabyte) for as long as
// the process lives, so the derivation runs where that memory is returned
// when it ends (under state.memory_limit), and the crawl's own DuckDB only
// reads the due list and writes snapshots, under crawl.duckdb_memory_limit.
func deriveInChild(ctx context.Context, e env, c common) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("derive: find this program: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe, append(c.childArgs("__derive"), "-data", c.data)...)
	out := &childOutput{w: e.stderr, prefix: "observer __derive: "}
	// One writer for both, so that os/exec copies them through one pipe:
	// with two, its two copying goroutines would write to e.stderr at once.
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	out.flush()
	if err != nil {
		if ctx.Err() != nil {
			// SIGINT or SIGTERM: the child was stopped (a derivation
			// stopped anywhere leaves the last one in force), which is
			// an interrupted pass like any other, not a failure.
			return cutShortError{"interrupted while deriving the state, before any check"}
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				// Killed from outside (the OOM killer under a MemoryMax,
				// say): it could not say why, and its exit code is -1.
				return fmt.Errorf("derive the state before the pass: the derivation process was killed by signal %d (%s); "+
					"the previous derived state is still in force", ws.Signal(), ws.Signal())
			}
			if why := out.error(); why != "" {
				return fmt.Errorf("derive the state before the pass: %s", strings.TrimPrefix(why, "derive: "))
			}
			return fmt.Errorf("derive the state before the pass: exit code %d", exit.ExitCode())
		}
		return fmt.Errorf("derive the state before the pass: %w", err)
	}
	return nil
}

// childOutput passes a child's log lines through to w but keeps back its
// final error, which starts with prefix ("observer __derive: ") and runs to
// the end of its output: the parent says it in its own words, so that a
// failed derivation is one message from the command the operator ran, not
// a line from an internal command followed by a bare exit code.
type childOutput struct {
	w      io.Writer
	prefix string
	line   []byte // the start of a line not yet ended
	err    []byte // the error, once its first line was seen
}

// maxChildError bounds what is kept of the error.
const maxChildError = 64 << 10

func (c *childOutput) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if c.err != nil {
			c.err = append(c.err, p[:min(len(p), max(0, maxChildError-len(c.err)))]...)
			return n, nil
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.line = append(c.line, p...)
			if len(c.line) > maxChildError {
				c.w.Write(c.line)
				c.line = c.line[:0]
			}
			return n, nil
		}
		c.line = append(c.line, p[:i+1]...)
		p = p[i+1:]
		c.endLine()
	}
	return n, nil
}

// flush ends a last line without its newline.
func (c *childOutput) flush() {
	if len(c.line) > 0 {
		c.endLine()
	}
}

// endLine keeps the line as the error if it is the first to start with
// prefix, and passes it through otherwise.
func (c *childOutput) endLine() {
	if msg, ok := bytes.CutPrefix(c.line, []byte(c.prefix)); ok && c.err == nil {
		c.err = append([]byte{}, msg...)
	} else {
		// A failed write to the log is the log's problem, not the
		// derivation's.
		c.w.Write(c.line)
	}
	c.line = c.line[:0]
}

// error is the child's error message, or "" when it printed none.
func (c *childOutput) error() string {
	return strings.TrimSpace(string(c.err))
}

// runDerive is the hidden __derive subcommand: one derivation of the data
// directory with the config's thresholds.
func runDerive(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "__derive", "[flags]")
	var c common
	c.register(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	cfg, log, err := c.setup(e)
	if err != nil {
		return err
	}
	store, err := duck.Open(ctx, c.data, duck.Options{Logger: log})
	if err != nil {
		return err
	}
	defer store.Close()
	_, err = store.Derive(ctx, duck.DeriveOptions{State: cfg.State})
	return err
}
