// Package duck owns DuckDB: it is the only package that runs SQL. It writes
// the crawler's facts as Parquet snapshots under the data directory, derives
// instance states, schedules and lists from them with the embedded .sql files,
// and answers read-only queries for `observer sql` and the site builder.
//
// The DuckDB database itself is in memory and lives only as long as a Store:
// everything durable is a Parquet file that appeared atomically (written into
// data/tmp, then renamed into place), so readers in other processes never see
// half a file and a killed writer loses at most its unflushed tail.
package duck

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
)

// The data directory's layout. Snapshots are hive-partitioned by UTC date.
const (
	ChecksDir      = "checks"      // checks/date=YYYY-MM-DD/*.parquet
	DiscoveriesDir = "discoveries" // discoveries/date=YYYY-MM-DD/*.parquet
	PassesDir      = "passes"      // passes/date=YYYY-MM-DD/*.parquet
	DerivedDir     = "derived"     // materialised derived state
	TmpDir         = "tmp"         // files being written; never read as data
)

// Store is an open data directory with an in-memory DuckDB over it.
type Store struct {
	dir       string
	connector *duckdb.Connector
	db        *sql.DB
	log       *slog.Logger
}

// Options configures Open.
type Options struct {
	// Create makes the data directory if it does not exist. Commands that
	// only read (sql, build) leave it false so a typo in --data is an error,
	// not a fresh empty directory.
	Create bool
	// MemoryLimit, if set, is DuckDB's memory_limit (e.g. "512MB") for this
	// Store: DuckDB otherwise takes up to 80% of the machine's memory for
	// its buffers and keeps it, which a crawl process, meant to stay small
	// beside its checkers, cannot afford. Operators past it spill to
	// data/tmp.
	MemoryLimit string
	Logger      *slog.Logger
}

// Open opens the data directory dir.
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	if opts.Create {
		if err := os.MkdirAll(filepath.Join(abs, TmpDir), 0o755); err != nil {
			return nil, fmt.Errorf("data directory %s: %w", dir, err)
		}
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("data directory %s: not a directory", dir)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, fmt.Errorf("start duckdb: %w", err)
	}
	s := &Store{dir: abs, connector: connector, db: sql.OpenDB(connector), log: logger}
	if opts.MemoryLimit != "" {
		if err := s.limitMemory(ctx, opts.MemoryLimit); err != nil {
			s.Close()
			return nil, fmt.Errorf("duckdb memory limit %q: %w", opts.MemoryLimit, err)
		}
	}
	if _, err := s.db.ExecContext(ctx, schemaSQL); err != nil {
		s.Close()
		return nil, fmt.Errorf("create schema: %w", err)
	}
	return s, nil
}

// limitMemory sets DuckDB's memory_limit, past which operators spill into
// data/tmp/duckdb-spill. DuckDB refuses to switch the temporary directory
// once it has been used, so it is set only when it differs: a Store may be
// limited more than once (every Derive with a MemoryLimit).
func (s *Store) limitMemory(ctx context.Context, limit string) error {
	spill := filepath.ToSlash(s.path(TmpDir, "duckdb-spill"))
	stmts := []string{
		"SET memory_limit = " + sqlString(limit),
		// memory_limit bounds DuckDB's buffers, not what its allocator keeps
		// from the operating system: with the defaults, the full derivation
		// of the million-host benchmark peaked anywhere from 1.2 to 1.66 GiB
		// at a 1 GB limit, as freed memory stayed mapped. Handing it back
		// after every task, from a background thread, kept the peak at
		// 1.21-1.25 GiB in seven runs, at no cost in time.
		"SET allocator_flush_threshold = '16MB'",
		"SET allocator_background_threads = true",
	}
	var current string
	if err := s.db.QueryRowContext(ctx, "SELECT current_setting('temp_directory')").Scan(&current); err != nil {
		return fmt.Errorf("temp_directory: %w", err)
	}
	if current != spill {
		stmts = append(stmts, "SET temp_directory = "+sqlString(spill))
	}
	for _, stmt := range stmts {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}

// Close releases DuckDB.
func (s *Store) Close() error {
	err := s.db.Close()
	if cerr := s.connector.Close(); err == nil {
		err = cerr
	}
	return err
}

// Dir is the absolute path of the data directory.
func (s *Store) Dir() string { return s.dir }

// path joins parts below the data directory.
func (s *Store) path(parts ...string) string {
	return filepath.Join(append([]string{s.dir}, parts...)...)
}

// glob is the read_parquet pattern for one snapshot kind.
func (s *Store) glob(kind string) string {
	return filepath.ToSlash(s.path(kind, "*", "*.parquet"))
}

// hasFiles reports whether any Parquet file of a snapshot kind exists, so a
// fresh data directory gives empty relations instead of DuckDB's
// "no files found" error.
func (s *Store) hasFiles(kind string) (bool, error) {
	matches, err := filepath.Glob(filepath.Join(s.dir, kind, "*", "*.parquet"))
	if err != nil {
		return false, fmt.Errorf("list %s: %w", kind, err)
	}
	return len(matches) > 0, nil
}

// sqlString quotes s as a SQL string literal. Used for file paths, which
// DuckDB table functions and COPY cannot take as bound parameters.
func sqlString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// isNotExist reports whether err means a path is missing.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
