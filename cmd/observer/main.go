// Command observer watches the Fediverse for newly created instances and
// publishes what it sees as a static website. Each subcommand parses its
// flags (internal/cliflag), reads the config (config, which only the
// commands import, and its mappings onto the packages' options), runs the
// packages and maps the outcome to an exit code. The work is done in
// internal/crawlpass (a crawl pass over the data directory, its derivation
// in a child process), crawl (the network), sandbox (the confined child
// processes checks run in), duck (DuckDB and the SQL: snapshots, the
// derivation, the views and queries, observer add's manual discoveries)
// and build (the site), with hostname (host names, seed lists and the
// blocklist), internal/childproc (a child process's error pipe) and
// lockfile (one writer per directory).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/fediverse-observer/observer/internal/childproc"
	"github.com/fediverse-observer/observer/internal/cliflag"
	"github.com/fediverse-observer/observer/internal/crawlpass"
)

// Exit codes, documented in the README.
const (
	exitOK       = 0
	exitFailure  = 1 // the command failed
	exitUsage    = 2 // bad flags or arguments
	exitCutShort = 3 // a crawl pass stopped by its budget (--max-checks, --duration) or a signal
)

// env is what a subcommand may touch of the outside world; tests run
// commands in-process with their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) error
	hidden  bool
}

func commands() []command {
	return []command{
		{name: "crawl", summary: "run one crawl pass over the hosts that are due", run: runCrawl},
		{name: "check", summary: "check one host and explain what the crawler sees (writes nothing)", run: runCheck},
		{name: "add", summary: "record hosts as manual discoveries", run: runAdd},
		{name: "build", summary: "derive the lists and render the site into public/", run: runBuild},
		{name: "sql", summary: "run a read-only SQL query over the data (or print the views with --views)", run: runSQL},
		{name: "serve", summary: "preview the site on 127.0.0.1, rebuilding on changes", run: runServe},
		{name: "new", summary: "new site DIR: create the skeleton of a new site", run: runNew},
		{name: "version", summary: "print the version", run: runVersion},
		{name: "__checker", summary: "(internal) a sandboxed checker process", run: runChecker, hidden: true},
		{name: "__derive", summary: "(internal) the crawl's derivation, in a process of its own", run: runDerive, hidden: true},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, e env, args []string) int {
	if len(args) == 0 {
		printUsage(e.stderr)
		return exitUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		switch {
		case len(args) == 1:
			printUsage(e.stderr)
			return exitOK
		case len(args) == 2 && isCommand(args[1]):
			// observer help COMMAND is observer COMMAND -h.
			return run(ctx, e, []string{args[1], "-h"})
		}
		if len(args) == 2 {
			fmt.Fprintf(e.stderr, "observer: unknown command %q (one of: %s)\n", args[1], strings.Join(commandNames(), ", "))
		} else {
			fmt.Fprintf(e.stderr, "observer %s: want at most one COMMAND\n", args[0])
		}
		return exitUsage
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, e, args[1:])
		var cut *crawlpass.CutShortError
		var usage *cliflag.UsageError
		switch {
		case err == nil:
			return exitOK
		case errors.Is(err, flag.ErrHelp):
			return exitOK
		case errors.As(err, &cut):
			fmt.Fprintf(e.stderr, "observer %s: %v\n", c.name, err)
			return exitCutShort
		case errors.As(err, new(*childproc.ReportedError)):
			return exitFailure
		case errors.As(err, &usage):
			if !usage.Reported {
				fmt.Fprintf(e.stderr, "observer %s: %v\n", c.name, err)
			}
			return exitUsage
		case ctx.Err() != nil:
			// Whatever failed, a signal is why: say so before the
			// context.Canceled at the end of the error's chain.
			fmt.Fprintf(e.stderr, "observer %s: interrupted: %v\n", c.name, err)
			return exitFailure
		default:
			fmt.Fprintf(e.stderr, "observer %s: %v\n", c.name, err)
			return exitFailure
		}
	}
	fmt.Fprintf(e.stderr, "observer: unknown command %q (see observer help)\n", args[0])
	return exitUsage
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: observer COMMAND [flags]\n\ncommands:")
	for _, c := range commands() {
		if !c.hidden {
			fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintln(w, "\nobserver COMMAND -h shows a command's flags.")
}

// isCommand reports whether name is a command help can explain.
func isCommand(name string) bool {
	return slices.Contains(commandNames(), name)
}

// commandNames lists the commands a user may run.
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		if !c.hidden {
			names = append(names, c.name)
		}
	}
	return names
}

func runVersion(_ context.Context, e env, args []string) error {
	fs := newFlagSet(e, "version", "")
	if err := cliflag.ParseNoArgs(fs, args); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(e.stdout, "observer", version()); err != nil {
		return fmt.Errorf("write version: %w", err)
	}
	return nil
}

// version is the module version when built from a tagged module, else "dev".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
