package crawlpass

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fediverse-observer/observer/internal/childproc"
)

// DeriveInChild is an Options.Derive that folds new snapshots into the
// derived state in a child process and waits for it: this program again
// (os.Executable) with args, which start its derivation subcommand
// reporting on childproc's error pipe. The crawl process is the long-lived
// orchestrator: DuckDB keeps the memory a derivation of a million hosts
// needed (around a gigabyte) for as long as the process lives, so the
// derivation runs where that memory is returned when it ends (under
// state.memory_limit), and the crawl's own DuckDB only reads the due list
// and writes snapshots, under crawl.duckdb_memory_limit. The child's log
// goes to log; its error comes back through the error pipe and is said in
// the pass's words.
func DeriveInChild(args []string, log io.Writer) func(context.Context) error {
	return func(ctx context.Context) error {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("derive: find this program: %w", err)
		}
		err = childproc.Run(ctx, exe, args, log)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			// SIGINT or SIGTERM: the child was stopped (a derivation
			// stopped anywhere leaves the last one in force), which is an
			// interrupted pass like any other, not a failure.
			return &CutShortError{Reason: "interrupted while deriving the state, before any check"}
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
}
