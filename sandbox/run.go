package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/fediverse-observer/observer/crawl"
)

// RunChecker is the body of the hidden checker subcommand: it confines the
// process, then serves check requests on stdin and stdout until stdin is
// closed. Build check (the crawler, CA files loaded) before calling it:
// once confined, the process cannot read most files. Nothing else may
// write to stdout; log to stderr, which the orchestrator forwards.
func RunChecker(ctx context.Context, check crawl.Checker, opts ConfineOptions, log *slog.Logger) error {
	known, err := InheritedKnown()
	if err != nil {
		return err
	}
	rep, err := Confine(opts)
	if err != nil {
		known.Close()
		return fmt.Errorf("confine checker: %w", err)
	}
	return Serve(ctx, os.Stdin, os.Stdout, check, ServeOptions{Report: rep, Logger: log, Known: known})
}
