package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/internal/childproc"
	"github.com/fediverse-observer/observer/internal/cliflag"
	"github.com/fediverse-observer/observer/internal/crawlpass"
)

// deriveInChild folds new snapshots into the derived state in a child
// process (the hidden __derive subcommand) and waits for it. The crawl
// process is the long-lived orchestrator: DuckDB keeps the memory a
// derivation of a million hosts needed (around a gigabyte) for as long as
// the process lives, so the derivation runs where that memory is returned
// when it ends (under state.memory_limit), and the crawl's own DuckDB only
// reads the due list and writes snapshots, under crawl.duckdb_memory_limit.
// The child's log joins this one; its error comes back through childproc's
// error pipe and is said here, in the crawl's words.
func deriveInChild(ctx context.Context, e env, c common) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("derive: find this program: %w", err)
	}
	args := append(c.childArgs("__derive"), "-data", c.data, "-error-fd", strconv.Itoa(childproc.ErrorFD))
	err = childproc.Run(ctx, exe, args, e.stderr)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		// SIGINT or SIGTERM: the child was stopped (a derivation stopped
		// anywhere leaves the last one in force), which is an interrupted
		// pass like any other, not a failure.
		return &crawlpass.CutShortError{Reason: "interrupted while deriving the state, before any check"}
	}
	if killed, ok := errors.AsType[*childproc.KilledError](err); ok {
		return fmt.Errorf("derive the state before the pass: the derivation process was %v; the previous derived state is still in force", killed)
	}
	if reported, ok := errors.AsType[*childproc.Error](err); ok {
		// Derive's errors start with "derive: ", which this message says.
		return fmt.Errorf("derive the state before the pass: %s", strings.TrimPrefix(reported.Message, "derive: "))
	}
	return fmt.Errorf("derive the state before the pass: %w", err)
}

// runDerive is the hidden __derive subcommand: one derivation of the data
// directory with the config's thresholds. With -error-fd, its error goes to
// that pipe (childproc.Report) instead of stderr.
func runDerive(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "__derive", "[flags]")
	var c common
	c.register(fs)
	errorFD := fs.Int("error-fd", 0, "file descriptor to report the error on, for the parent process")
	if err := cliflag.ParseNoArgs(fs, args); err != nil {
		return err
	}
	err := derive(ctx, e, c)
	if err == nil || *errorFD == 0 {
		return err
	}
	if rerr := childproc.Report(*errorFD, err); rerr != nil {
		return errors.Join(err, rerr)
	}
	return reportedError{err}
}

func derive(ctx context.Context, e env, c common) error {
	cfg, log, err := c.setup(e)
	if err != nil {
		return err
	}
	store, err := duck.Open(ctx, c.data, duck.Options{Logger: log})
	if err != nil {
		return err
	}
	defer store.Close()
	_, err = store.Deriver.Derive(ctx, duck.DeriveOptions{Rules: cfg.Rules(), MemoryLimit: cfg.State.MemoryLimit})
	return err
}
