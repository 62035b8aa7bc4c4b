package duck

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/duckdb/duckdb-go/v2"
)

// Formats lists what WriteQuery can write.
var Formats = []string{"table", "csv", "json", "markdown"}

// tableSampleRows is how many rows the table format holds to size its
// columns; later rows stream, and a wider value is not padded.
const tableSampleRows = 1000

// WriteQuery runs one read-only query (see Query) and writes its result to w
// as format: table (aligned columns for a terminal), csv (with a header),
// json (an array of objects) or markdown (a pipe table). A failing query
// returns DuckDB's message.
//
// DuckDB writes every value: the text formats print CAST(value AS
// VARCHAR), json prints to_json(value). Go only lays the texts out. Two
// kinds of value are rewritten first, at any depth in lists, structs and
// maps: timestamps, as RFC 3339 in UTC (DuckDB's own text has a space and no
// zone), and, in json, NaN and the infinities of FLOAT and DOUBLE, as
// strings (JSON has no such numbers).
func (s *Reader) WriteQuery(ctx context.Context, w io.Writer, query, format string) error {
	if !slices.Contains(Formats, format) {
		return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
	}
	asJSON := format == "json"
	rows, err := s.query(ctx, query, func(types []duckdb.TypeInfo) string {
		cols := make([]string, len(types))
		for i, t := range types {
			v, _ := valueSQL("#"+strconv.Itoa(i+1), t, asJSON, 0)
			if asJSON {
				cols[i] = "to_json(" + v + ")::VARCHAR"
			} else {
				cols[i] = "CAST(" + v + " AS VARCHAR)"
			}
		}
		// query() runs the text as DuckDB parsed it, so a trailing
		// semicolon or comment cannot break the statement around it.
		return "SELECT " + strings.Join(cols, ", ") + " FROM query(" + sqlString(query) + ")"
	})
	if err != nil {
		return err
	}
	defer rows.Close()
	bw := bufio.NewWriter(w)
	var out resultWriter
	switch format {
	case "table":
		out = &tableWriter{w: bw}
	case "csv":
		out = &csvWriter{w: csv.NewWriter(bw)}
	case "json":
		out = &jsonWriter{w: bw}
	case "markdown":
		out = &markdownWriter{w: bw}
	}
	if err := out.begin(rows.Columns); err != nil {
		return err
	}
	cells := make([]sql.NullString, len(rows.Columns))
	ptrs := make([]any, len(cells))
	for i := range cells {
		ptrs[i] = &cells[i]
	}
	for rows.Next() {
		if err := rows.rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := out.row(cells); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if err := out.end(); err != nil {
		return err
	}
	return bw.Flush()
}

// valueSQL is the SQL of x, of type t, with the values DuckDB's text would
// not do rewritten (see WriteQuery); rewritten says whether anything was.
// depth names the lambdas' variables apart.
func valueSQL(x string, t duckdb.TypeInfo, asJSON bool, depth int) (sql string, rewritten bool) {
	if t == nil {
		return x, false
	}
	e := "e" + strconv.Itoa(depth)
	switch d := t.Details().(type) {
	case *duckdb.ListDetails:
		return listSQL(x, e, d.Child, asJSON, depth)
	case *duckdb.ArrayDetails:
		return listSQL(x, e, d.Child, asJSON, depth)
	case *duckdb.StructDetails:
		fields, changed := make([]string, len(d.Entries)), false
		for i, f := range d.Entries {
			name := `"` + strings.ReplaceAll(f.Name(), `"`, `""`) + `"`
			v, r := valueSQL("struct_extract("+x+", "+sqlString(f.Name())+")", f.Info(), asJSON, depth+1)
			fields[i], changed = name+" := "+v, changed || r
		}
		if !changed {
			return x, false
		}
		return "struct_pack(" + strings.Join(fields, ", ") + ")", true
	case *duckdb.MapDetails:
		// Keys are text in JSON too: to_json makes them strings.
		k, rk := valueSQL(e+".key", d.Key, false, depth+1)
		v, rv := valueSQL(e+".value", d.Value, asJSON, depth+1)
		if !rk && !rv {
			return x, false
		}
		return fmt.Sprintf("map_from_entries(list_transform(map_entries(%s), lambda %s: {'key': %s, 'value': %s}))", x, e, k, v), true
	}
	switch t.InternalType() {
	case duckdb.TYPE_TIMESTAMP, duckdb.TYPE_TIMESTAMP_S, duckdb.TYPE_TIMESTAMP_MS, duckdb.TYPE_TIMESTAMP_NS, duckdb.TYPE_TIMESTAMP_TZ:
		// RFC 3339 as Go's time.RFC3339Nano writes it: the fraction
		// without its trailing zeros, none for a whole second.
		return fmt.Sprintf(`CASE WHEN isinf(%[1]s) THEN %[1]s::VARCHAR ELSE strftime(%[1]s::TIMESTAMP, '%%Y-%%m-%%dT%%H:%%M:%%S') || regexp_replace('.' || lpad((nanosecond(%[1]s) %% 1000000000)::VARCHAR, 9, '0'), '\.?0+$', '') || 'Z' END`, x), true
	case duckdb.TYPE_FLOAT, duckdb.TYPE_DOUBLE:
		if asJSON {
			return fmt.Sprintf("CASE WHEN isfinite(%[1]s) THEN to_json(%[1]s) ELSE to_json(%[1]s::VARCHAR) END", x), true
		}
	}
	return x, false
}

func listSQL(x, e string, child duckdb.TypeInfo, asJSON bool, depth int) (string, bool) {
	v, r := valueSQL(e, child, asJSON, depth+1)
	if !r {
		return x, false
	}
	return fmt.Sprintf("list_transform(%s, lambda %s: %s)", x, e, v), true
}

// resultWriter lays out one result's texts (NULL: not Valid).
type resultWriter interface {
	begin(columns []string) error
	row(cells []sql.NullString) error
	end() error
}

type csvWriter struct{ w *csv.Writer }

func (c *csvWriter) begin(cols []string) error { return c.w.Write(cols) }

func (c *csvWriter) row(cells []sql.NullString) error {
	rec := make([]string, len(cells))
	for i, v := range cells {
		rec[i] = v.String
	}
	return c.w.Write(rec)
}

func (c *csvWriter) end() error { c.w.Flush(); return c.w.Error() }

// jsonWriter writes one object per line, its values as DuckDB's to_json
// gave them.
type jsonWriter struct {
	w    *bufio.Writer
	keys [][]byte
	n    int
}

func (j *jsonWriter) begin(cols []string) error {
	for _, k := range uniqueKeys(cols) {
		key, _ := json.Marshal(k)
		j.keys = append(j.keys, key)
	}
	_, err := j.w.WriteString("[")
	return err
}

func (j *jsonWriter) row(cells []sql.NullString) error {
	if j.n == 0 {
		j.w.WriteString("\n  {")
	} else {
		j.w.WriteString(",\n  {")
	}
	j.n++
	for i, v := range cells {
		if i > 0 {
			j.w.WriteString(", ")
		}
		j.w.Write(j.keys[i])
		j.w.WriteString(": ")
		if v.Valid {
			j.w.WriteString(v.String)
		} else {
			j.w.WriteString("null")
		}
	}
	_, err := j.w.WriteString("}")
	return err
}

func (j *jsonWriter) end() error {
	end := "\n]\n"
	if j.n == 0 {
		end = "]\n"
	}
	_, err := j.w.WriteString(end)
	return err
}

// uniqueKeys names repeated columns apart (a join's two date columns): a
// JSON reader keeps only one of two equal keys. A name's first column keeps
// it, and the later ones get the first of _1, _2… that no column has.
func uniqueKeys(cols []string) []string {
	taken := make(map[string]bool, len(cols))
	first := make([]bool, len(cols))
	for i, c := range cols {
		if !taken[c] {
			taken[c], first[i] = true, true
		}
	}
	out := make([]string, len(cols))
	for i, c := range cols {
		key := c
		for n := 1; !first[i] && taken[key]; n++ {
			key = c + "_" + strconv.Itoa(n)
		}
		taken[key] = true
		out[i] = key
	}
	return out
}

// tableWriter aligns columns two spaces apart, sized by the header and the
// first tableSampleRows rows, with NULL as NULL.
type tableWriter struct {
	w      *bufio.Writer
	cols   []string
	widths []int
	held   [][]string
	sized  bool
}

func (t *tableWriter) begin(cols []string) error {
	t.cols = cols
	for _, c := range cols {
		t.widths = append(t.widths, utf8.RuneCountInString(c))
	}
	return nil
}

func (t *tableWriter) row(vals []sql.NullString) error {
	cells := make([]string, len(vals))
	for i, v := range vals {
		cells[i] = "NULL"
		if v.Valid {
			cells[i] = oneLine(v.String)
		}
	}
	if t.sized {
		return t.line(cells)
	}
	for i, c := range cells {
		t.widths[i] = max(t.widths[i], utf8.RuneCountInString(c))
	}
	t.held = append(t.held, cells)
	if len(t.held) >= tableSampleRows {
		return t.flush()
	}
	return nil
}

func (t *tableWriter) flush() error {
	t.sized = true
	rule := make([]string, len(t.cols))
	for i, w := range t.widths {
		rule[i] = strings.Repeat("-", w)
	}
	for _, r := range append([][]string{t.cols, rule}, t.held...) {
		if err := t.line(r); err != nil {
			return err
		}
	}
	t.held = nil
	return nil
}

func (t *tableWriter) line(cells []string) error {
	for i, c := range cells {
		if i > 0 {
			t.w.WriteString("  ")
		}
		t.w.WriteString(c)
		if i < len(cells)-1 {
			t.w.WriteString(strings.Repeat(" ", max(t.widths[i]-utf8.RuneCountInString(c), 0)))
		}
	}
	_, err := t.w.WriteString("\n")
	return err
}

func (t *tableWriter) end() error {
	if !t.sized {
		return t.flush()
	}
	return nil
}

type markdownWriter struct{ w *bufio.Writer }

func (m *markdownWriter) begin(cols []string) error {
	cells, rule := make([]string, len(cols)), make([]string, len(cols))
	for i, c := range cols {
		cells[i], rule[i] = mdCell(c), "---"
	}
	_, err := fmt.Fprintf(m.w, "| %s |\n| %s |\n", strings.Join(cells, " | "), strings.Join(rule, " | "))
	return err
}

func (m *markdownWriter) row(vals []sql.NullString) error {
	cells := make([]string, len(vals))
	for i, v := range vals {
		cells[i] = mdCell(v.String)
	}
	_, err := fmt.Fprintf(m.w, "| %s |\n", strings.Join(cells, " | "))
	return err
}

func (m *markdownWriter) end() error { return nil }

func mdCell(s string) string {
	s = strings.ReplaceAll(oneLine(s), `\`, `\\`)
	return strings.ReplaceAll(s, "|", `\|`)
}

// oneLine keeps a value on one line of a table: untrusted texts (names,
// descriptions) may hold newlines, tabs or control characters.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
