// Package duck owns DuckDB: it is the only package that runs SQL. It writes
// the crawler's facts as Parquet snapshots under the data directory, derives
// instance states, schedules and lists from them with the embedded .sql files,
// and answers read-only queries for `observer sql` and the site builder
// (SiteData). What `observer add` records is decided here too (AddManual):
// which of the hosts given are new to the snapshots, and nothing when the
// blocklist names one.
//
// Each rule over the data is written once, in the embedded .sql files, in a
// folder per stage (embed.go): the states and transitions in
// sql/derivation/ (run in the order of order.txt), the schedule in
// sql/views/state.sql, the published lists and the blocklist in
// sql/views/, what the crawler asks (the due and known hosts) in
// sql/queries/. docs/data.md, "Where each rule lives", maps every rule to
// its file. SQL rather than Go because the published lists are views over
// every known host, which any DuckDB client can load (`observer sql
// --views`).
//
// The DuckDB database itself is in memory and lives only as long as a Store:
// everything durable is a Parquet file that appeared atomically (written into
// data/tmp, then renamed into place), so readers in other processes never see
// half a file and a killed writer loses at most its unflushed tail.
package duck

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
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

// Store is an open data directory with an in-memory DuckDB over it. Its
// three jobs are three types sharing that DuckDB: Snapshots writes the
// crawler's facts, Deriver folds them into the derived state, and Reader
// answers the queries over both (the views, `observer sql`, the site's
// data, the crawler's known and due hosts).
type Store struct {
	*core
	Snapshots *Snapshots
	Deriver   *Deriver
	Reader    *Reader
}

// Snapshots writes the crawler's facts (checks, discoveries, passes) as
// Parquet snapshots under the data directory, each file appearing
// atomically, never rewritten.
type Snapshots struct{ *core }

// Deriver folds the snapshots into the derived state under data/derived
// (the state, its transitions and live events), incrementally when it can,
// and keeps the manifest that says which files are folded and which derived
// files are in force, removing those no reader can still be using.
type Deriver struct{ *core }

// Reader answers read-only questions of the data directory: it defines the
// views over the snapshots and the derived state, runs queries over them
// (`observer sql`, in its formats), reads the site's lists and counts, and
// the crawler's known and due hosts.
type Reader struct{ *core }

// core is what the three jobs share: the data directory and its DuckDB.
type core struct {
	dir       string
	spill     string // this Store's own spill directory, under data/tmp
	connector *duckdb.Connector
	db        *sql.DB
	log       *slog.Logger
}

func newStore(c *core) *Store {
	return &Store{core: c, Snapshots: &Snapshots{c}, Deriver: &Deriver{c}, Reader: &Reader{c}}
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
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.Create {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("data directory %s: %w", dir, err)
		}
		// Nothing is created in a directory dataDir would refuse.
		if err := globSafe(dir, abs); err != nil {
			return nil, err
		}
		if err := checkCreatable(dir); err != nil {
			return nil, err
		}
		_, statErr := os.Stat(abs)
		if err := os.MkdirAll(filepath.Join(abs, TmpDir), 0o755); err != nil {
			return nil, fmt.Errorf("data directory %s: %w", dir, err)
		}
		if errors.Is(statErr, fs.ErrNotExist) {
			// A warning, so that --quiet (cron) shows it too: a --data (or
			// a working directory) that is not the usual one starts a
			// second observer from nothing.
			logger.Warn("created the data directory: this observer starts from nothing", "data", abs)
		}
	}
	abs, err := dataDir(dir)
	if err != nil {
		return nil, err
	}
	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, fmt.Errorf("start duckdb: %w", err)
	}
	s := newStore(&core{dir: abs, connector: connector, db: sql.OpenDB(connector), log: logger})
	s.spill = filepath.ToSlash(s.path(TmpDir, fmt.Sprintf("%d-duckdb-spill-%s", os.Getpid(), rand.Text()[:8])))
	// DuckDB's default spill directory is .tmp in the working directory: a
	// large `observer sql` query would write there, outside data/. Each
	// Store has its own: DuckDB names its spill files alike in every
	// process and opens them without O_EXCL, so two processes spilling
	// into one directory overwrote and deleted each other's files (seen
	// as segfaults and short reads). The pid prefix lets the next writer
	// remove a killed process's spill (removeOrphanedTmp). It is set once,
	// here: DuckDB refuses to switch it once it has been used.
	if _, err := s.db.ExecContext(ctx, "SET temp_directory = "+sqlString(s.spill)); err != nil {
		s.Close()
		return nil, fmt.Errorf("duckdb temp_directory: %w", err)
	}
	// Every time in data/ is UTC (TIMESTAMP without zone), and so is a
	// query's now(): in the machine's zone, now()::TIMESTAMP in the
	// cookbook's queries would be local wall time compared with UTC times.
	// GLOBAL, for every connection: a plain SET holds for this connection
	// only, and the pool opens others whenever one is busy (a result
	// still being read, pages rendered in parallel).
	if _, err := s.db.ExecContext(ctx, "SET GLOBAL TimeZone = 'UTC'"); err != nil {
		s.Close()
		return nil, fmt.Errorf("duckdb time zone: %w", err)
	}
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
// the Store's spill directory (s.spill). A Store may be limited more than once (every Derive with a
// MemoryLimit).
func (s *core) limitMemory(ctx context.Context, limit string) error {
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
	os.RemoveAll(filepath.FromSlash(s.spill))
	return err
}

// Dir is the absolute path of the data directory.
func (s *Store) Dir() string { return s.dir }

// path joins parts below the data directory.
func (s *core) path(parts ...string) string {
	return filepath.Join(append([]string{s.dir}, parts...)...)
}

// checkCreatable refuses a --data that exists but cannot be reached
// (a symbolic link in a loop, a path through a file, a directory that may
// not be searched) or that is, or goes through, a symbolic link to nothing.
// MkdirAll would try mkdir on it and report only "file exists".
func checkCreatable(dir string) error {
	_, err := os.Stat(dir)
	if err == nil {
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	// Missing: it is created below the deepest part of the path that
	// exists, which must lead to a directory.
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		info, lerr := os.Lstat(p)
		if lerr == nil {
			if info.Mode()&fs.ModeSymlink == 0 {
				return nil
			}
			if _, serr := os.Stat(p); !errors.Is(serr, fs.ErrNotExist) {
				return nil
			}
			target, _ := os.Readlink(p)
			if p == filepath.Clean(dir) {
				return fmt.Errorf("data directory %s: a symbolic link to %s, which does not exist", dir, target)
			}
			return fmt.Errorf("data directory %s: %s is a symbolic link to %s, which does not exist", dir, p, target)
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}

// CheckDataDir refuses what Open refuses of a data directory (missing, not
// a directory, or a path DuckDB would read as a file pattern), for a caller
// that uses the directory before it opens a Store: observer serve watches it.
func CheckDataDir(dir string) error {
	_, err := dataDir(dir)
	return err
}

// dataDir returns the absolute path of the data directory dir, refusing one
// that is missing, not a directory, or whose path, as given or with its
// symbolic links resolved, holds a pattern character (globSafe).
func dataDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := globSafe(dir, abs); err != nil {
		return "", err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("data directory %s: %w", dir, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("data directory %s: not a directory", dir)
	}
	// A directory that can be found but not listed (another user's, mode
	// 700) would otherwise fail later as a derivation that cannot make its
	// folder, with no word about the directory itself.
	f, err := os.Open(abs)
	if err != nil {
		return "", fmt.Errorf("data directory %s: %w", dir, err)
	}
	_, err = f.Readdirnames(1)
	f.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("data directory %s: cannot list it: %w", dir, err)
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil && resolved != abs {
		if err := globSafe(dir, resolved); err != nil {
			return "", err
		}
	}
	return abs, nil
}

// globChars are the characters DuckDB (1.4) reads specially in a file name
// it is given, even in a list of files: *, ? and [ make it a pattern (and ]
// closes [), and \ separates directories as / does. No escaping is possible,
// so a data directory whose path holds one is refused (globSafe), and so is
// a snapshot file whose name does (listSnapshots). Go lists directories
// itself (os.ReadDir), never by pattern.
const globChars = `*?[]\`

// globSafe refuses a data directory whose path (path, as given or with its
// symbolic links resolved) has a character of globChars: DuckDB would read
// the patterns built on it (the snapshot views' globs, every read_parquet
// of a file in it) as matching other directories, or none.
func globSafe(dir, path string) error {
	// Slashes: on Windows, \ is the separator, which DuckDB takes as one.
	slashed := filepath.ToSlash(path)
	i := strings.IndexAny(slashed, globChars)
	if i < 0 {
		return nil
	}
	where := ""
	if path != dir {
		where = " (" + path + ")"
	}
	return fmt.Errorf("data directory %s%s: its path contains %q, which DuckDB reads as a file pattern, "+
		"so it would read other directories' snapshots or none: rename the directory or move it to a path without any of %s",
		dir, where, slashed[i], strings.Join(strings.Split(globChars, ""), " "))
}

// glob is the read_parquet pattern for one snapshot kind (the data
// directory's path holds no pattern character: Open refuses those).
func (s *core) glob(kind string) string {
	return filepath.ToSlash(s.path(kind, "*", "*.parquet"))
}

// hasFiles reports whether any Parquet file of a snapshot kind exists, so a
// fresh data directory gives empty relations instead of DuckDB's
// "no files found" error. It lists them as a derivation does, so a file
// out of place is an error here too, naming it, not a failure of whatever
// query reads the view later.
func (s *core) hasFiles(kind string) (bool, error) {
	files, err := s.listSnapshots(kind)
	return len(files) > 0, err
}

// parquetFiles lists the names of the Parquet files (not directories) in
// dir, sorted; a missing dir has none.
func parquetFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".parquet") {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			info, err := os.Stat(filepath.Join(dir, e.Name()))
			if err != nil {
				return nil, err
			}
			isDir = info.IsDir()
		}
		if !isDir {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// sqlString quotes s as a SQL string literal. Used for file paths, which
// DuckDB table functions and COPY cannot take as bound parameters.
func sqlString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// sqlList is a DuckDB list literal of the given strings, quoted: the file
// lists read_parquet and the metadata functions take.
func sqlList(items []string) string {
	quoted := make([]string, len(items))
	for i, it := range items {
		quoted[i] = sqlString(it)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// snapshotPath is the slash path of a snapshot file named relative to the
// data directory.
func (s *core) snapshotPath(rel string) string {
	return filepath.ToSlash(s.path(filepath.FromSlash(rel)))
}

// isNotExist reports whether err means a path is missing.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
