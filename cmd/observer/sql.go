package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/internal/cliflag"
)

// runSQL answers one read-only query over the views (docs/data.md), or
// prints the views' CREATE VIEW statements with --views. It derives first,
// so the answer includes every snapshot on disk; see duck.OpenForQueries for
// why that is safe while a crawl runs.
func runSQL(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "sql", "[flags] [QUERY]   (the query comes from stdin when not given)")
	var c common
	c.register(fs)
	// Accepted, so that scripts can pass it to every command, but always on.
	fs.Lookup("quiet").Usage = "always on for sql: only warnings and errors are logged, the answer is the output"
	format := fs.String("format", "table", "output format: "+strings.Join(duck.Formats, ", "))
	full := fs.Bool("full", false, "derive from scratch over every snapshot instead of folding only the new ones")
	views := fs.Bool("views", false, "print the CREATE VIEW statements (for the DuckDB CLI or any DuckDB client) instead of running a query")
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	if !slices.Contains(duck.Formats, *format) {
		return cliflag.Usagef("invalid -format %q: want one of %s", *format, strings.Join(duck.Formats, ", "))
	}
	var query string
	switch {
	case fs.NArg() > 1:
		return cliflag.Usagef("want one QUERY argument, got %d (quote the query)", fs.NArg())
	case *views && fs.NArg() > 0:
		return cliflag.Usagef("-views takes no QUERY")
	case fs.NArg() == 1:
		query = fs.Arg(0)
	case !*views:
		b, err := io.ReadAll(e.stdin)
		if err != nil {
			return fmt.Errorf("read the query from stdin: %w", err)
		}
		query = string(b)
	}
	if !*views && strings.TrimSpace(query) == "" {
		return cliflag.Usagef("no query: give one as an argument or on stdin")
	}
	// The answer is the output: the derivation's progress is not news.
	c.logging.Quiet = true
	cfg, log, err := c.setup(e)
	if err != nil {
		return err
	}
	store, params, err := openViews(ctx, c, cfg, log, c.at(), true, *full)
	if err != nil {
		return err
	}
	defer store.Close()

	if *views {
		script, err := store.Reader.ViewsSQL(ctx, params)
		if err != nil {
			return err
		}
		_, err = io.WriteString(e.stdout, script)
		return err
	}
	if err := store.Reader.WriteQuery(ctx, e.stdout, query, *format); err != nil {
		if errors.Is(err, duck.ErrEmptyQuery) {
			return cliflag.Usagef("%v", err)
		}
		return fmt.Errorf("query: %w", err)
	}
	return nil
}
