package duck

// Naming the file behind a failed read of Parquet data. A damaged footer is
// found by checkSnapshots and readable; a damaged page is only found when a
// query decodes it, and DuckDB's message for it names no file ("Invalid
// string encoding found in Parquet file: value <kilobytes of the rows>",
// "ZSTD Decompression failure", "don't know what type"), which in a
// directory of hundreds of snapshots says nothing of which to move aside.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
)

// maxErrorText bounds the part of a DuckDB message an error repeats: a
// damaged string column's message quotes the rows around the damage.
const maxErrorText = 300

// shortText is the first line of err's message, at most maxErrorText bytes
// of it (DuckDB follows its message with the statement and a caret).
func shortText(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if len(msg) > maxErrorText {
		msg = strings.ToValidUTF8(msg[:maxErrorText], "") + "…"
	}
	return msg
}

// rowQueryer is what readsWhole needs of a *sql.DB or a *sql.Conn.
type rowQueryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readsWhole decodes every column of every row of the Parquet file at path
// (hashing all its columns, as hash's arguments, keeps DuckDB from skipping
// any; a table alias would lose to a column of the same name), which fails
// for a damaged page.
func readsWhole(ctx context.Context, q rowQueryer, path string) error {
	var h any
	return q.QueryRowContext(ctx, "SELECT max(hash(*COLUMNS(*))) FROM read_parquet("+sqlString(path)+")").Scan(&h)
}

// damagedFileError is a Parquet file of the data directory that cannot be
// read whole.
type damagedFileError struct {
	path, cause string
}

func (e *damagedFileError) Error() string {
	return fmt.Sprintf("%s is damaged (%s): move it out of the data directory (a derived file is rebuilt from the snapshots)", e.path, e.cause)
}

// blameDamaged names the file behind err, an error from a query over the
// Parquet files at paths (absolute), by reading each of them whole, one at
// a time, until one fails as damaged files do (a file that fails otherwise,
// say one removed meanwhile, is passed over); it costs a read of every
// file, so it is for errors only. When DuckDB's message already names one
// of them, or none fails alone (the error was not theirs), err comes back
// with its message shortened, wrapped so that errors.Is still sees a
// cancellation.
func blameDamaged(ctx context.Context, q rowQueryer, paths []string, err error) error {
	if err == nil {
		return nil
	}
	short := shortText(err)
	p, ferr := firstFailing(ctx, paths, short, func(p string) error {
		if err := readsWhole(ctx, q, p); err != nil && ctx.Err() == nil && looksDamaged(err) {
			return err
		}
		return nil
	})
	if p != "" {
		return &damagedFileError{path: p, cause: shortText(ferr)}
	}
	return fmt.Errorf("%s%w", short, errorsOnly{err})
}

// errorsOnly wraps an error for errors.Is and errors.As without adding to
// the message: blameDamaged's errors say the short text themselves.
type errorsOnly struct{ err error }

func (e errorsOnly) Error() string { return "" }
func (e errorsOnly) Unwrap() error { return e.err }

// isDamagedFile reports whether err names a file blameDamaged found
// damaged.
func isDamagedFile(err error) bool {
	var d *damagedFileError
	return errors.As(err, &d)
}

// damageMarks are parts of DuckDB's messages for Parquet data it could not
// decode. Only an error with one of them is worth reading every file to
// blame one: a query's own mistakes (a wrong column, a bad cast) are not.
var damageMarks = []string{
	"Invalid string encoding", "ecompression failure", "Corrupted file", "don't know what type",
	"Variable-length int", "Payload value bigger", "Out of buffer", "Invalid Error:",
}

// damageTypes are the kinds of DuckDB error a damaged file gives; a
// query's own mistakes are others (Binder, Parser, Conversion, Catalog).
var damageTypes = []duckdb.ErrorType{duckdb.ErrorTypeInvalidInput, duckdb.ErrorTypeIO, duckdb.ErrorTypeInvalid, duckdb.ErrorTypeInternal}

// quoted is what DuckDB quotes in its messages: paths, patterns, values
// (a host's description, a query's text), which may hold anything.
var quoted = regexp.MustCompile(`"[^"]*"|'[^']*'`)

// looksDamaged reports whether err reads like DuckDB failing to decode a
// Parquet file: an error of one of damageTypes with one of damageMarks in
// its own words, outside what it quotes.
func looksDamaged(err error) bool {
	var de *duckdb.Error
	if !errors.As(err, &de) || !slices.Contains(damageTypes, de.Type) {
		return false
	}
	own := quoted.ReplaceAllString(de.Msg, "")
	for _, m := range damageMarks {
		if strings.Contains(own, m) {
			return true
		}
	}
	return false
}

// blameQuery is blameDamaged over every Parquet file the views read (the
// snapshots and the derived files in force) when err looks like damage,
// says why when err is a derived file gone from under the query, and is
// err as it is otherwise (a query's mistake, whose message goes on with
// the line and a caret where DuckDB found it).
func (s *core) blameQuery(ctx context.Context, err error) error {
	if err == nil {
		return err
	}
	if msg := err.Error(); strings.Contains(msg, s.path(DerivedDir)) && (strings.Contains(msg, "No such file") || strings.Contains(msg, "No files found")) {
		return fmt.Errorf("the derived files this command started from were removed by newer derivations meanwhile "+
			"(at most %d retired generations are kept): run it again (%s)%w", maxRetired, shortText(err), errorsOnly{err})
	}
	if !looksDamaged(err) {
		return err
	}
	return blameDamaged(ctx, s.db, s.parquetInUse(), err)
}

// parquetInUse lists, as absolute paths, the derived files of the manifest
// in force and every snapshot file: what the views read. The derived files
// come first: few, and what most of a build reads.
func (s *core) parquetInUse() []string {
	var out []string
	if m, err := s.readManifest(); err == nil && m != nil {
		for _, f := range m.files() {
			out = append(out, s.derivedPath(f))
		}
	}
	for _, kind := range []string{ChecksDir, DiscoveriesDir, PassesDir} {
		files, err := s.listSnapshots(kind)
		if err != nil {
			continue
		}
		for _, f := range files {
			out = append(out, s.snapshotPath(f))
		}
	}
	return out
}
