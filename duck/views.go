package duck

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// ViewParams are what time-relative views are computed for.
type ViewParams struct {
	Now time.Time // the moment live and new are computed for
	// Rules hold the list windows (LiveWindow, NewWindow, Warmup) and the
	// schedule the state view's next_check_at is computed with (the
	// intervals, their jitters, DiscoveryDelay).
	Rules Rules
	// Blocklist is the operator's blocklist in its file's form (exact
	// hosts and "*.domain" entries, as hostname.Blocklist.Entries gives
	// them): the published lists leave these hosts out.
	Blocklist []string
}

// view is one named relation of the query surface.
type view struct {
	name string
	sql  string // the SELECT the view stands for (a macro's expression)
	// params, when set, make it a macro of these parameters instead.
	params string
}

// create is the CREATE statement's object: VIEW name, or MACRO name(params).
func (v view) create() string {
	if v.params != "" {
		return "MACRO " + v.name + "(" + v.params + ")"
	}
	return "VIEW " + v.name
}

// snapshotView reads one snapshot kind. union_by_name lets files written
// before a column was added be read with NULL in it. A kind with no file yet
// reads as an empty relation of the schema's columns, spelled out, so that
// the view stands on its own in any DuckDB client (observer sql --views).
func (s *Reader) snapshotView(ctx context.Context, kind, schemaTable string) (view, error) {
	ok, err := s.hasFiles(kind)
	if err != nil {
		return view{}, err
	}
	empty, err := s.emptyRelation(ctx, schemaTable)
	if err != nil {
		return view{}, err
	}
	if !ok {
		return view{name: kind, sql: empty}, nil
	}
	// Unioned by name with the schema's empty relation, so that a column
	// added since the files were written reads as NULL (after an upgrade,
	// until a pass writes one) rather than failing every query naming it.
	return view{name: kind, sql: fmt.Sprintf(
		"%s UNION ALL BY NAME SELECT * FROM read_parquet(%s, hive_partitioning = true, hive_types = {'date': DATE}, union_by_name = true)",
		empty, sqlString(s.glob(kind)))}, nil
}

// emptyRelation is a SELECT of no rows with the columns of schemaTable and
// the hive partition column date.
func (s *Reader) emptyRelation(ctx context.Context, schemaTable string) (string, error) {
	schema, err := schemaColumns(ctx, s.db, schemaTable)
	if err != nil {
		return "", err
	}
	cols := make([]string, len(schema))
	for i, c := range schema {
		cols[i] = fmt.Sprintf("NULL::%s AS %s", c.typ, c.name)
	}
	return "SELECT " + strings.Join(cols, ", ") + ", NULL::DATE AS date WHERE false", nil
}

// views lists the query surface in dependency order: the snapshots first,
// then the derived relations that read them.
func (s *Reader) views(ctx context.Context, p ViewParams) ([]view, error) {
	out, err := s.snapshotViews(ctx)
	if err != nil {
		return nil, err
	}
	derived, err := s.derivedViews(p)
	if err != nil {
		return nil, err
	}
	return append(out, derived...), nil
}

// snapshotViews are the views over the snapshots alone: checks,
// discoveries and passes.
func (s *Reader) snapshotViews(ctx context.Context) ([]view, error) {
	var out []view
	for _, k := range []struct{ kind, schema string }{
		{ChecksDir, "checks_schema"},
		{DiscoveriesDir, "discoveries_schema"},
		{PassesDir, "passes_schema"},
	} {
		v, err := s.snapshotView(ctx, k.kind, k.schema)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// CreateViews defines the views in this Store's DuckDB.
func (s *Reader) CreateViews(ctx context.Context, p ViewParams) error {
	vs, err := s.views(ctx, p)
	if err != nil {
		return err
	}
	return s.createViews(ctx, vs)
}

// CreateSnapshotViews defines the snapshot views alone (checks,
// discoveries, passes), for what runs before a derivation or without one
// (a crawl reading its known hosts, add). They never read data/derived,
// which may hold a damaged file, or files an older observer wrote with
// other columns, until the next derivation rebuilds it.
func (s *Reader) CreateSnapshotViews(ctx context.Context) error {
	vs, err := s.snapshotViews(ctx)
	if err != nil {
		return err
	}
	return s.createViews(ctx, vs)
}

func (s *Reader) createViews(ctx context.Context, vs []view) error {
	for _, v := range vs {
		stmt := fmt.Sprintf("CREATE OR REPLACE %s AS %s", v.create(), v.sql)
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("create view %s: %w", v.name, ctx.Err())
			}
			// DuckDB follows its message with the statement and a caret:
			// the user never wrote it. A damaged file is named.
			err = s.blameQuery(ctx, err)
			msg, _, _ := strings.Cut(err.Error(), "\n")
			return fmt.Errorf("create view %s: %s%w", v.name, msg, errorsOnly{err})
		}
	}
	return nil
}

// ViewsSQL is the CREATE VIEW script for the same views, with absolute paths,
// for the DuckDB CLI or any other DuckDB client (`observer sql --views`).
func (s *Reader) ViewsSQL(ctx context.Context, p ViewParams) (string, error) {
	vs, err := s.views(ctx, p)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "-- Views over %s, computed for %s.\n", s.dir, p.Now.UTC().Format(time.RFC3339))
	// Every time in the data is UTC, and so are observer sql's now() and
	// current_date: in a client in another zone the cookbook's "last 7
	// days" would be off by the zone's offset.
	b.WriteString("SET TimeZone = 'UTC';\n")
	for _, v := range vs {
		fmt.Fprintf(&b, "CREATE OR REPLACE %s AS\n%s;\n", v.create(), v.sql)
	}
	return b.String(), nil
}

// LockDown makes this Store read-only for whatever queries come next: DuckDB
// may read files only below the data directory, and the configuration is
// locked so a query cannot undo that. Query adds the other half: only
// SELECT statements run, so nothing (COPY, ATTACH, CREATE) can write.
// DuckDB checks the path a query names, not the file it ends at, so a
// symbolic link under the data directory to a file outside it would be a way
// out: LockDown refuses a data directory that holds one (linksOutside).
func (s *Reader) LockDown(ctx context.Context) error {
	if err := linksOutside(s.dir); err != nil {
		return err
	}
	dir := filepath.ToSlash(s.dir) + "/"
	for _, stmt := range []string{
		fmt.Sprintf("SET allowed_directories = [%s]", sqlString(dir)),
		"SET enable_external_access = false",
		"SET lock_configuration = true",
	} {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("lock down duckdb: %w", err)
		}
	}
	return nil
}

// linksOutside refuses a symbolic link under dir whose target, resolved,
// is not under dir resolved, or cannot be resolved (a dangling link's
// target may be made anywhere later).
func linksOutside(dir string) error {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("data directory %s: %w", dir, err)
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := filepath.EvalSymlinks(path)
		if rel, rerr := filepath.Rel(root, target); err != nil || rerr != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			link, _ := os.Readlink(path)
			return fmt.Errorf("data directory %s: %s is a symbolic link to %s, outside it: queries read only the data directory, so remove the link (or copy the file in)", dir, path, link)
		}
		return nil
	})
}

// Rows is a streaming query result.
type Rows struct {
	Columns []string
	rows    *sql.Rows
	conn    *sql.Conn
	values  []any
	// blame names the damaged file behind an error that ends iteration.
	blame func(error) error
}

// Next advances to the next row; Values returns it.
func (r *Rows) Next() bool { return r.rows.Next() }

// Values scans the current row. The slice is reused between rows.
func (r *Rows) Values() ([]any, error) {
	if r.values == nil {
		r.values = make([]any, len(r.Columns))
	}
	ptrs := make([]any, len(r.values))
	for i := range r.values {
		ptrs[i] = &r.values[i]
	}
	if err := r.rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	return r.values, nil
}

// Err is the error that ended iteration, if any. An error reading a
// damaged Parquet file names it.
func (r *Rows) Err() error {
	if err := r.rows.Err(); err != nil {
		return r.blame(err)
	}
	return nil
}

// Close releases the result.
func (r *Rows) Close() error {
	err := r.rows.Close()
	r.conn.Close()
	return err
}

// Query runs one read-only statement: a SELECT (or a statement DuckDB
// classifies as one, such as FROM x, WITH … SELECT, SHOW, DESCRIBE).
// Anything else is refused before it runs: a text of several statements
// (the driver would run all but the last while preparing, so "COPY …;
// SELECT 1" would write before any check), and EXPLAIN, whose ANALYZE form
// runs the statement it explains.
func (s *Reader) Query(ctx context.Context, query string, args ...any) (*Rows, error) {
	return s.query(ctx, query, nil, args...)
}

// query is Query, running instead the statement that rewrite makes of the
// query's column types once the query has passed the checks (nil: the query
// itself). The rows keep the query's own column names.
func (s *Reader) query(ctx context.Context, query string, rewrite func([]duckdb.TypeInfo) string, args ...any) (*Rows, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("duckdb connection: %w", err)
	}
	// Parsed first, without planning: planning some statements already
	// acts (EXPORT DATABASE makes its directory), so the statement type
	// that Prepare gives would come too late for them.
	var parseError string
	var statements int
	if err := conn.QueryRowContext(ctx, `SELECT coalesce(json_extract_string(j, '$.error_message'), ''), coalesce(json_array_length(j, '$.statements'), 1)
		FROM (SELECT json_serialize_sql(?::VARCHAR) AS j)`, query).Scan(&parseError, &statements); err != nil {
		conn.Close()
		return nil, fmt.Errorf("parse query: %w", err)
	}
	switch {
	case strings.HasPrefix(parseError, "Only SELECT statements"):
		conn.Close()
		return nil, errors.New(notReadOnly)
	case parseError == "" && statements == 0:
		conn.Close()
		return nil, ErrEmptyQuery
	}
	run, cols := query, []string(nil)
	err = conn.Raw(func(raw any) error {
		dc, ok := raw.(driver.Conn)
		if !ok {
			return fmt.Errorf("duckdb connection: unexpected driver type")
		}
		// Prepare, unlike PrepareContext, refuses several statements
		// without running any of them.
		stmt, err := dc.Prepare(query)
		if err != nil {
			if strings.Contains(err.Error(), "multi-statement") {
				return fmt.Errorf("only one statement is allowed here")
			}
			return err
		}
		defer stmt.Close()
		ds, ok := stmt.(*duckdb.Stmt)
		if !ok {
			return fmt.Errorf("duckdb statement: unexpected driver type")
		}
		typ, err := ds.StatementType()
		if err != nil {
			return err
		}
		if typ != duckdb.STATEMENT_TYPE_SELECT {
			return errors.New(notReadOnly)
		}
		if rewrite == nil {
			return nil
		}
		n, err := ds.ColumnCount()
		if err != nil {
			return err
		}
		names, types := make([]string, n), make([]duckdb.TypeInfo, n)
		for i := range n {
			if names[i], err = ds.ColumnName(i); err != nil {
				return err
			}
			// A type the driver has no description of is left to DuckDB's
			// own text (a nil TypeInfo).
			types[i], _ = ds.ColumnTypeInfo(i)
		}
		run, cols = rewrite(types), names
		return nil
	})
	if err != nil {
		conn.Close()
		return nil, s.blameQuery(ctx, err)
	}
	rows, err := conn.QueryContext(ctx, run, args...)
	if err != nil {
		conn.Close()
		return nil, s.blameQuery(ctx, err)
	}
	if cols == nil {
		if cols, err = rows.Columns(); err != nil {
			rows.Close()
			conn.Close()
			return nil, err
		}
	}
	return &Rows{Columns: cols, rows: rows, conn: conn, blame: func(err error) error { return s.blameQuery(ctx, err) }}, nil
}

// ErrEmptyQuery is Query's error for a text with no statement in it (only
// white space or comments).
var ErrEmptyQuery = errors.New("no query: the text holds no statement, only comments or white space")

// notReadOnly is Query's refusal of a statement that is not a query. A
// PIVOT without its values listed is one too: DuckDB runs it as a CREATE TYPE
// and a SELECT.
const notReadOnly = "only read-only queries (SELECT, FROM, WITH, SHOW, DESCRIBE; a PIVOT with its values listed: ON col IN (...)) are allowed here"

// QueryMaps runs a read-only query and returns every row as a map from
// column name to value: the shape templates want. Use Query for large results.
func (s *Reader) QueryMaps(ctx context.Context, query string, args ...any) ([]map[string]any, error) {
	rows, err := s.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []map[string]any
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		m := make(map[string]any, len(vals))
		for i, c := range rows.Columns {
			m[c] = vals[i]
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
