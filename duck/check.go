package duck

// Checking snapshot files against their schema before a derivation reads
// them, from their Parquet footers alone.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// schemaColumn is a column of a snapshot schema table (duck/sql/snapshots/schema.sql).
type schemaColumn struct {
	name, typ string
	notNull   bool
}

// queryer is what schemaColumns needs of a *sql.DB or a *sql.Conn.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// schemaColumns lists the columns of a snapshot schema table. It asks
// pragma_table_info, which looks up the one table: duckdb_columns() goes
// through the whole catalog, and a process's first call of it had DuckDB
// generate its built-in information_schema and pg_catalog views, 20 to 130
// ms of every command's start (a first crawl pass's known hosts waited on
// it). The table is one of the schema's, named by this package.
func schemaColumns(ctx context.Context, q queryer, table string) ([]schemaColumn, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, type, "notnull" FROM pragma_table_info(`+sqlString(table)+`) ORDER BY cid`)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", table, err)
	}
	defer rows.Close()
	var out []schemaColumn
	for rows.Next() {
		var c schemaColumn
		if err := rows.Scan(&c.name, &c.typ, &c.notNull); err != nil {
			return nil, fmt.Errorf("schema of %s: %w", table, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("schema of %s: %w", table, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("schema of %s: no columns", table)
	}
	return out, nil
}

// narrowerInts are the integer types a column of the key's type may have in
// a file: reading them with union_by_name gives the schema's type (a
// narrower integer widens losslessly), so the fold sees what it expects.
var narrowerInts = map[string][]string{
	"BIGINT":  {"TINYINT", "SMALLINT", "INTEGER", "UTINYINT", "USMALLINT", "UINTEGER"},
	"INTEGER": {"TINYINT", "SMALLINT", "UTINYINT", "USMALLINT"},
}

// fits reports whether a column of type found in a file reads as the
// schema's type want. A list column's footer gives no element type at its
// own name (the element is a child), so any list fits a list.
func fits(found, want string) bool {
	return found == want || slices.Contains(narrowerInts[want], found) ||
		found == "a list" && strings.HasSuffix(want, "[]")
}

// nullCount is what the footers of one file say of one column's NULLs.
type nullCount struct {
	nulls   int64
	unknown bool // a row group of it has no null count
}

// checkSnapshots checks the Parquet files of one snapshot kind (paths
// relative to the data directory) against its schema table from their
// footers only, in one query for their schemas and one for their row
// groups' statistics: each column of the schema a file has must have the
// schema's type (or a narrower integer), and a column the schema declares
// NOT NULL must be in every file that has rows and hold no NULL. Columns a
// file lacks (it predates them) and columns the schema lacks (a newer
// writer's) are left alone, as the readers' union_by_name reads them. A
// file whose footer lacks a NOT NULL column's null count (another writer
// may leave statistics out) has that column read to count them. The error
// names the first offending file and column (files in order, columns in the
// schema's), and what is wrong.
func (s *Deriver) checkSnapshots(ctx context.Context, conn *sql.Conn, schemaTable string, files []string, noNullCounts bool) error {
	if len(files) == 0 {
		return nil
	}
	cols, err := schemaColumns(ctx, conn, schemaTable)
	if err != nil {
		return err
	}
	kind := strings.TrimSuffix(schemaTable, "_schema")
	f := footers{conn: conn, abs: make([]string, len(files)), known: make(map[string]bool, len(files))}
	for i, file := range files {
		f.abs[i] = s.snapshotPath(file)
		f.known[f.abs[i]] = true
	}
	var names, notNull []string
	for _, c := range cols {
		names = append(names, sqlString(c.name))
		if c.notNull {
			notNull = append(notNull, sqlString(c.name))
		}
	}
	types, err := f.columnTypes(ctx, names)
	if err != nil {
		return fmt.Errorf("read the schemas of the %s files: %w", kind, blameFile(ctx, conn, f.abs, err))
	}
	counts, err := f.nullCounts(ctx, notNull, noNullCounts)
	if err != nil {
		return fmt.Errorf("read the statistics of the %s files: %w", kind, blameFile(ctx, conn, f.abs, err))
	}
	toCount, err := judgeFooters(f.abs, cols, types, counts)
	if err != nil {
		return err
	}
	if virtual := virtualColumnsRead(schemaTable); len(virtual) > 0 {
		if err := f.refuseColumns(ctx, virtual); err != nil {
			return err
		}
	}
	if err := countNulls(ctx, conn, toCount); err != nil {
		return fmt.Errorf("count the NULLs of the %s files without statistics: %w", kind, err)
	}
	return nil
}

// virtualColumnsRead names the virtual columns of read_parquet that the
// derivation reads from the files of schemaTable: where each check is, for
// fold_edge_facts.sql (snapshotSource). A column of the same name in a file
// stands in for DuckDB's, and would misplace the facts of its checks.
func virtualColumnsRead(schemaTable string) []string {
	if schemaTable == "checks_schema" {
		return []string{"file_index", "file_row_number"}
	}
	return nil
}

// refuseColumns fails for the first file (in order) with a column, or a
// struct column, named like one of names.
func (f footers) refuseColumns(ctx context.Context, names []string) error {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = sqlString(n)
	}
	found := map[string]string{}
	var fileName, column string
	// A leaf's path starts with its top-level column's name; a file with no
	// row group lists none, and has no rows to misplace.
	rows, err := f.conn.QueryContext(ctx, fmt.Sprintf(`SELECT DISTINCT file_name, trim(split_part(path_in_schema, ',', 1))
		FROM parquet_metadata(%s) WHERE trim(split_part(path_in_schema, ',', 1)) IN (%s)`, sqlList(f.abs), strings.Join(quoted, ", ")))
	if err != nil {
		return err
	}
	if err := eachRow(rows, f.known, &fileName, []any{&fileName, &column}, func() { found[fileName] = column }); err != nil {
		return err
	}
	for _, file := range f.abs {
		if column, ok := found[file]; ok {
			return fmt.Errorf("snapshot file %s: column %s has the name of a column DuckDB gives every file it reads, "+
				"which the derivation reads to find each check (the schema is in docs/data.md): "+
				"rewrite the file without it, or move it out of the data directory", file, column)
		}
	}
	return nil
}

// footers reads the footers of a set of snapshot files (absolute paths,
// each of them known), all in one query per question.
type footers struct {
	conn  *sql.Conn
	abs   []string
	known map[string]bool
}

// columnTypes gives, per file, every schema element named like one of
// names (quoted), with its type (a NULL type is a nested column): a nested
// struct of a newer writer may have a field named like a column, so a
// column fits if one of them does.
func (f footers) columnTypes(ctx context.Context, names []string) (map[string]map[string][]string, error) {
	types := map[string]map[string][]string{}
	var fileName, name, typ string
	rows, err := f.conn.QueryContext(ctx, fmt.Sprintf(`SELECT file_name, name,
		coalesce(duckdb_type, CASE WHEN converted_type = 'LIST' THEN 'a list' ELSE 'a nested type' END)
		FROM parquet_schema(%s) WHERE name IN (%s)`, sqlList(f.abs), strings.Join(names, ", ")))
	if err != nil {
		return nil, err
	}
	err = eachRow(rows, f.known, &fileName, []any{&fileName, &name, &typ}, func() {
		if types[fileName] == nil {
			types[fileName] = map[string][]string{}
		}
		types[fileName][name] = append(types[fileName][name], typ)
	})
	return types, err
}

// nullCounts gives, per file that has row groups at all, the null counts of
// the columns notNull (quoted) names, summed over its row groups (top-level
// columns only: a nested field's path has a comma). noNullCounts reads the
// footers as if they had none (for tests).
func (f footers) nullCounts(ctx context.Context, notNull []string, noNullCounts bool) (map[string]map[string]nullCount, error) {
	counts := map[string]map[string]nullCount{}
	if len(notNull) == 0 {
		return counts, nil
	}
	stat := "stats_null_count"
	if noNullCounts {
		stat = "NULL::BIGINT"
	}
	var fileName string
	var path sql.NullString
	var c nullCount
	rows, err := f.conn.QueryContext(ctx, fmt.Sprintf(`SELECT file_name, path_in_schema,
		coalesce(sum(%[1]s), 0)::BIGINT, coalesce(bool_or(%[1]s IS NULL), false)
		FROM parquet_metadata(%[2]s)
		GROUP BY GROUPING SETS ((file_name), (file_name, path_in_schema))
		HAVING path_in_schema IS NULL OR path_in_schema IN (%[3]s)`, stat, sqlList(f.abs), strings.Join(notNull, ", ")))
	if err != nil {
		return nil, err
	}
	err = eachRow(rows, f.known, &fileName, []any{&fileName, &path, &c.nulls, &c.unknown}, func() {
		if counts[fileName] == nil {
			counts[fileName] = map[string]nullCount{}
		}
		if path.Valid {
			counts[fileName][path.String] = c
		}
	})
	return counts, err
}

// judgeFooters fails for the first file (in order) whose footer breaks the
// schema cols: a column of another type, or a NOT NULL column missing or
// holding NULLs. It returns the NOT NULL columns whose footers do not say
// how many NULLs they hold, which must be read to know.
func judgeFooters(abs []string, cols []schemaColumn, types map[string]map[string][]string, counts map[string]map[string]nullCount) ([]fileColumn, error) {
	var toCount []fileColumn
	for _, file := range abs {
		for _, c := range cols {
			found := types[file][c.name]
			if len(found) > 0 && !slices.ContainsFunc(found, func(t string) bool { return fits(t, c.typ) }) {
				return nil, fmt.Errorf("snapshot file %s: column %s is %s, want %s (the schema is in docs/data.md): "+
					"rewrite the file with the schema's types, or move it out of the data directory", file, c.name, found[0], c.typ)
			}
		}
		fileCounts, hasRows := counts[file]
		if !hasRows {
			continue // no row groups, no rows
		}
		for _, c := range cols {
			if !c.notNull {
				continue
			}
			n, ok := fileCounts[c.name]
			switch {
			case !ok:
				return nil, fmt.Errorf("snapshot file %s: column %s is missing, and it may not be NULL (the schema is in docs/data.md): "+
					"rewrite the file with it, or move it out of the data directory", file, c.name)
			case n.nulls > 0:
				return nil, nullsError(file, c.name, n.nulls)
			case n.unknown:
				toCount = append(toCount, fileColumn{file, c.name})
			}
		}
	}
	return toCount, nil
}

// fileColumn is a column of a file.
type fileColumn struct{ file, column string }

// countNulls reads the columns of files whose footers have no null count
// for them, one query for all of them, and fails for the first that holds
// NULLs.
func countNulls(ctx context.Context, conn *sql.Conn, cols []fileColumn) error {
	if len(cols) == 0 {
		return nil
	}
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = fmt.Sprintf(`SELECT %d AS i, count(*) AS n FROM read_parquet(%s, hive_partitioning = false) WHERE "%s" IS NULL`,
			i, sqlString(c.file), c.column)
	}
	var i int
	var n int64
	err := conn.QueryRowContext(ctx, "SELECT i, n FROM ("+strings.Join(parts, " UNION ALL ")+") WHERE n > 0 ORDER BY i LIMIT 1").Scan(&i, &n)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return nullsError(cols[i].file, cols[i].column, n)
}

// eachRow scans each row into dest and calls fn, checking that *file (one
// of dest) is one of the files asked about: were DuckDB to spell a path
// otherwise, the checks would silently miss that file.
func eachRow(rows *sql.Rows, known map[string]bool, file *string, dest []any, fn func()) error {
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if !known[*file] {
			return fmt.Errorf("unexpected file name %q", *file)
		}
		fn()
	}
	return rows.Err()
}

func nullsError(file, column string, n int64) error {
	nulls := "NULLs"
	if n == 1 {
		nulls = "NULL"
	}
	return fmt.Errorf("snapshot file %s: column %s holds %d %s, and it may not be NULL (the schema is in docs/data.md): "+
		"rewrite the file without those rows, or move it out of the data directory", file, column, n, nulls)
}

// blameFile names the file behind err, an error from reading the footers of
// every file in abs at once, when DuckDB's message names none: a damaged
// footer gives a bare Thrift error ("don't know what type"), which in a
// directory of hundreds of snapshots says nothing of which to remove. It
// reads each footer alone until one fails.
func blameFile(ctx context.Context, conn *sql.Conn, abs []string, err error) error {
	f, ferr := firstFailing(ctx, abs, err.Error(), func(f string) error {
		var n int64
		return conn.QueryRowContext(ctx, "SELECT count(*) FROM parquet_schema("+sqlString(f)+")").Scan(&n)
	})
	if f != "" {
		return fmt.Errorf("%s: %w", f, ferr)
	}
	return err
}

// firstFailing is the first of paths for which try fails, with try's error,
// trying them one at a time: the file behind an error from reading them all
// at once. It is "" when msg, that error's message, names one of them
// already (DuckDB named it), when ctx is done, or when none fails alone.
func firstFailing(ctx context.Context, paths []string, msg string, try func(path string) error) (string, error) {
	for _, p := range paths {
		if strings.Contains(msg, p) {
			return "", nil
		}
	}
	for _, p := range paths {
		if ctx.Err() != nil {
			return "", nil
		}
		if err := try(p); err != nil {
			return p, err
		}
	}
	return "", nil
}
