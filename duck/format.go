package duck

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"
)

// Formats lists what WriteQuery can write.
var Formats = []string{"table", "csv", "json", "markdown"}

// tableSampleRows is how many rows the table format buffers to size its
// columns; later rows stream, wider values are not padded.
const tableSampleRows = 1000

// WriteQuery runs one read-only query (see Query) and writes its result to w
// as format: table (aligned columns for a terminal), csv (with a header),
// json (an array of objects) or markdown (a pipe table). A failing query
// returns DuckDB's message. Rows stream except the table's first
// tableSampleRows, which size its columns.
func (s *Store) WriteQuery(ctx context.Context, w io.Writer, query, format string) error {
	var f resultWriter
	switch format {
	case "table":
		f = &tableWriter{}
	case "csv":
		f = &csvWriter{}
	case "json":
		f = &jsonWriter{}
	case "markdown":
		f = &markdownWriter{}
	default:
		return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
	}
	rows, err := s.Query(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	bw := bufio.NewWriter(w)
	if err := f.begin(bw, rows.Columns); err != nil {
		return err
	}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return err
		}
		if err := f.row(vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if err := f.end(); err != nil {
		return err
	}
	return bw.Flush()
}

type resultWriter interface {
	begin(w *bufio.Writer, columns []string) error
	row(vals []any) error
	end() error
}

// text renders one value for the text formats: NULL as empty, times in
// RFC 3339 (UTC), everything else as Go prints it.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.UTC().Format(time.DateOnly)
		}
		return x.UTC().Format(time.RFC3339Nano)
	case *big.Int:
		return x.String()
	default:
		if b, err := json.Marshal(x); err == nil && (strings.HasPrefix(string(b), "{") || strings.HasPrefix(string(b), "[")) {
			return string(b)
		}
		return fmt.Sprint(x)
	}
}

type csvWriter struct{ w *csv.Writer }

func (c *csvWriter) begin(w *bufio.Writer, cols []string) error {
	c.w = csv.NewWriter(w)
	return c.w.Write(cols)
}

func (c *csvWriter) row(vals []any) error {
	rec := make([]string, len(vals))
	for i, v := range vals {
		rec[i] = text(v)
	}
	return c.w.Write(rec)
}

func (c *csvWriter) end() error { c.w.Flush(); return c.w.Error() }

type jsonWriter struct {
	w    *bufio.Writer
	cols []string
	n    int
}

func (j *jsonWriter) begin(w *bufio.Writer, cols []string) error {
	j.w, j.cols = w, cols
	_, err := w.WriteString("[")
	return err
}

func (j *jsonWriter) row(vals []any) error {
	sep := ",\n"
	if j.n == 0 {
		sep = "\n"
	}
	j.n++
	j.w.WriteString(sep + "  {")
	for i, c := range j.cols {
		k, _ := json.Marshal(c)
		v, err := json.Marshal(jsonValue(vals[i]))
		if err != nil {
			return fmt.Errorf("column %s: %w", c, err)
		}
		if i > 0 {
			j.w.WriteString(", ")
		}
		j.w.Write(k)
		j.w.WriteString(": ")
		j.w.Write(v)
	}
	_, err := j.w.WriteString("}")
	return err
}

func jsonValue(v any) any {
	switch x := v.(type) {
	case time.Time:
		return text(x)
	case *big.Int:
		return json.Number(x.String())
	case []byte:
		return string(x)
	}
	return v
}

func (j *jsonWriter) end() error {
	end := "\n]\n"
	if j.n == 0 {
		end = "]\n"
	}
	_, err := j.w.WriteString(end)
	return err
}

// cleanCell keeps a value on one table line: untrusted texts (names,
// descriptions) may hold newlines, tabs or control characters.
func cleanCell(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

type tableWriter struct {
	w      *bufio.Writer
	cols   []string
	widths []int
	buf    [][]string
	sized  bool
}

func (t *tableWriter) begin(w *bufio.Writer, cols []string) error {
	t.w, t.cols = w, cols
	t.widths = make([]int, len(cols))
	for i, c := range cols {
		t.widths[i] = utf8.RuneCountInString(c)
	}
	return nil
}

func (t *tableWriter) row(vals []any) error {
	cells := make([]string, len(vals))
	for i, v := range vals {
		cells[i] = cleanCell(text(v))
		if v == nil {
			cells[i] = "NULL"
		}
	}
	if t.sized {
		return t.line(cells)
	}
	for i, c := range cells {
		t.widths[i] = max(t.widths[i], utf8.RuneCountInString(c))
	}
	t.buf = append(t.buf, cells)
	if len(t.buf) >= tableSampleRows {
		return t.flush()
	}
	return nil
}

func (t *tableWriter) flush() error {
	t.sized = true
	if err := t.line(t.cols); err != nil {
		return err
	}
	rule := make([]string, len(t.cols))
	for i, w := range t.widths {
		rule[i] = strings.Repeat("-", w)
	}
	if err := t.line(rule); err != nil {
		return err
	}
	for _, r := range t.buf {
		if err := t.line(r); err != nil {
			return err
		}
	}
	t.buf = nil
	return nil
}

func (t *tableWriter) line(cells []string) error {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteString("  ")
		}
		b.WriteString(c)
		if i < len(cells)-1 {
			b.WriteString(strings.Repeat(" ", max(t.widths[i]-utf8.RuneCountInString(c), 0)))
		}
	}
	b.WriteString("\n")
	_, err := t.w.WriteString(b.String())
	return err
}

func (t *tableWriter) end() error {
	if !t.sized {
		if err := t.flush(); err != nil {
			return err
		}
	}
	return nil
}

type markdownWriter struct{ w *bufio.Writer }

func mdCell(s string) string {
	s = cleanCell(s)
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, "|", `\|`)
}

func (m *markdownWriter) begin(w *bufio.Writer, cols []string) error {
	m.w = w
	cells := make([]string, len(cols))
	rule := make([]string, len(cols))
	for i, c := range cols {
		cells[i], rule[i] = mdCell(c), "---"
	}
	_, err := fmt.Fprintf(w, "| %s |\n| %s |\n", strings.Join(cells, " | "), strings.Join(rule, " | "))
	return err
}

func (m *markdownWriter) row(vals []any) error {
	cells := make([]string, len(vals))
	for i, v := range vals {
		cells[i] = mdCell(text(v))
	}
	_, err := fmt.Fprintf(m.w, "| %s |\n", strings.Join(cells, " | "))
	return err
}

func (m *markdownWriter) end() error { return nil }
