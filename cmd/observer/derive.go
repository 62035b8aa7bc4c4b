package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
	cmd.Stdout, cmd.Stderr = e.stderr, e.stderr
	if err := cmd.Run(); err != nil {
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
			// The child said why on stderr.
			return fmt.Errorf("derive the state before the pass: exit code %d", exit.ExitCode())
		}
		return fmt.Errorf("derive the state before the pass: %w", err)
	}
	return nil
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
