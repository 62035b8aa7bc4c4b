// Package resultfmt writes a DuckDB query's result for a person or a
// program: an aligned table for a terminal, CSV, JSON or a Markdown table.
// Values print as DuckDB's own CLI prints them, each according to its
// column's DuckDB type (the driver hands several types over as the same Go
// type, and nested values carry no type at all).
package resultfmt

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Formats lists what Write can write.
var Formats = []string{"table", "csv", "json", "markdown"}

// tableSampleRows is how many rows the table format buffers to size its
// columns; later rows stream, wider values are not padded.
const tableSampleRows = 1000

// Rows is a query's result as Write reads it.
type Rows interface {
	Next() bool
	// Values scans the current row; the slice may be reused between rows.
	Values() ([]any, error)
	Err() error
}

// Writer writes one result in one format.
type Writer struct{ f resultWriter }

// New returns the writer of format, or an error naming it when it is not
// one of Formats.
func New(format string) (*Writer, error) {
	switch format {
	case "table":
		return &Writer{&tableWriter{}}, nil
	case "csv":
		return &Writer{&csvWriter{}}, nil
	case "json":
		return &Writer{&jsonWriter{}}, nil
	case "markdown":
		return &Writer{&markdownWriter{}}, nil
	}
	return nil, fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// Write writes rows to w: columns are their names, typeNames their DuckDB
// types as duckdb-go names them (sql.ColumnType.DatabaseTypeName). Rows
// stream except the table's first tableSampleRows, which size its columns.
func (wr *Writer) Write(w io.Writer, rows Rows, columns, typeNames []string) error {
	types := make([]*colType, len(typeNames))
	for i, name := range typeNames {
		types[i] = parseColType(name)
	}
	bw := bufio.NewWriter(w)
	if err := wr.f.begin(bw, columns, types); err != nil {
		return err
	}
	for {
		vals, err := nextValues(rows)
		if err != nil {
			return err
		}
		if vals == nil {
			break
		}
		if err := wr.f.row(vals); err != nil {
			return err
		}
	}
	if err := wr.f.end(); err != nil {
		return err
	}
	return bw.Flush()
}

// nextValues returns the next row, nil after the last one. Errors and
// panics of the driver reading a type it does not support (BIT, VARINT, a
// MAP keyed by a BLOB or UUID, an unnamed STRUCT) become an error that says
// how to get the column anyway.
func nextValues(rows Rows) (vals []any, err error) {
	defer func() {
		if p := recover(); p != nil {
			vals, err = nil, fmt.Errorf("the DuckDB driver cannot read this result (%v); cast the column to VARCHAR", p)
		}
	}()
	if !rows.Next() {
		err := rows.Err()
		if err != nil && (strings.Contains(err.Error(), "unsupported data type") || strings.Contains(err.Error(), "not supported")) {
			err = fmt.Errorf("%w (cast the column to VARCHAR)", err)
		}
		return nil, err
	}
	return rows.Values()
}

type resultWriter interface {
	begin(w *bufio.Writer, columns []string, types []*colType) error
	row(vals []any) error
	end() error
}

// colType is a column's DuckDB type as duckdb-go names it
// (sql.ColumnType.DatabaseTypeName): INTEGER, DECIMAL(14,1), TIMESTAMPTZ,
// UUID, JSON, DATE[] (a LIST), INTEGER[3] (an ARRAY),
// STRUCT("a" INTEGER, "b" DATE[]), MAP(VARCHAR, INTEGER),
// UNION("n" INTEGER, "s" VARCHAR). The driver hands several types over as
// the same Go type (DATE, TIME and TIMESTAMP as time.Time; BLOB and UUID as
// []byte), and lists and structs carry no type at all, so the text of a
// value, nested or not, comes from this.
type colType struct {
	// id is the name without its parameters: DECIMAL, LIST, ARRAY, STRUCT,
	// MAP, UNION, TIMESTAMP, ...
	id string
	// elem is a LIST's or ARRAY's element type.
	elem *colType
	// fields are a STRUCT's fields or a UNION's members, in order; a MAP's
	// key and value types are fields "key" and "value".
	fields []colField
}

type colField struct {
	name string
	typ  *colType
}

// parseColType parses a type name, nil for a name it does not know how to
// read: values of an unknown type print according to their Go type.
func parseColType(name string) *colType {
	p := typeParser{s: name}
	t := p.parse()
	if t == nil || p.i != len(p.s) {
		return nil
	}
	return t
}

type typeParser struct {
	s string
	i int
}

func (p *typeParser) eat(tok string) bool {
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *typeParser) parse() *colType {
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] == '_' || '0' <= p.s[p.i] && p.s[p.i] <= '9' || 'A' <= p.s[p.i] && p.s[p.i] <= 'Z' || 'a' <= p.s[p.i] && p.s[p.i] <= 'z') {
		p.i++
	}
	if p.i == start {
		return nil
	}
	t := &colType{id: p.s[start:p.i]}
	switch t.id {
	case "DECIMAL":
		if p.eat("(") && !p.skipPast(")") {
			return nil
		}
	case "STRUCT", "UNION":
		if !p.eat("(") {
			return nil
		}
		for !p.eat(")") {
			if len(t.fields) > 0 && !p.eat(", ") {
				return nil
			}
			name, ok := p.quoted()
			if !ok || !p.eat(" ") {
				return nil
			}
			ft := p.parse()
			if ft == nil {
				return nil
			}
			t.fields = append(t.fields, colField{name, ft})
		}
	case "MAP":
		if !p.eat("(") {
			return nil
		}
		k := p.parse()
		if k == nil || !p.eat(", ") {
			return nil
		}
		v := p.parse()
		if v == nil || !p.eat(")") {
			return nil
		}
		t.fields = []colField{{"key", k}, {"value", v}}
	}
	for p.eat("[") {
		id := "LIST"
		if !p.eat("]") {
			if !p.skipPast("]") {
				return nil
			}
			id = "ARRAY"
		}
		t = &colType{id: id, elem: t}
	}
	return t
}

// skipPast skips up to and past the next tok.
func (p *typeParser) skipPast(tok string) bool {
	n := strings.Index(p.s[p.i:], tok)
	if n < 0 {
		return false
	}
	p.i += n + len(tok)
	return true
}

// quoted reads a "name" with "" for a quote in it.
func (p *typeParser) quoted() (string, bool) {
	if !p.eat(`"`) {
		return "", false
	}
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		if c != '"' {
			b.WriteByte(c)
		} else if p.eat(`"`) {
			b.WriteByte('"')
		} else {
			return b.String(), true
		}
	}
	return "", false
}

// is reports whether t is known to be the type id.
func (t *colType) is(id string) bool { return t != nil && t.id == id }

// element is the type of a LIST's or ARRAY's elements, nil if unknown.
func (t *colType) element() *colType {
	if t == nil {
		return nil
	}
	return t.elem
}

// field is the type of a STRUCT's field, a UNION's member or a MAP's key or
// value, nil if unknown.
func (t *colType) field(name string) *colType {
	if t == nil {
		return nil
	}
	for _, f := range t.fields {
		if f.name == name {
			return f.typ
		}
	}
	return nil
}

// isJSON reports whether v is a value of DuckDB's JSON type, which the
// driver parses with encoding/json: a JSON column, or a JSON nested in a
// list or struct, whose type the driver names VARCHAR. NULL is not.
func isJSON(t *colType, v any) bool {
	if v == nil {
		return false
	}
	if t.is("JSON") {
		return true
	}
	_, str := v.(string)
	return t.is("VARCHAR") && !str
}

// text renders one value for the text formats (csv, table, markdown) as
// DuckDB's CLI prints it (CAST(v AS VARCHAR)), NULL as empty:
//
//   - DECIMAL with its scale: 300.0, -0.005;
//   - DOUBLE and FLOAT in their shortest exact form, as DuckDB writes them:
//     100.0, 0.1, 1e+20, nan, inf;
//   - INTERVAL as DuckDB writes it: 00:00:00.082787, 1 year 2 months 3 days 04:05:06.5;
//   - DATE as 2026-01-06 (0044-03-15 (BC) before year 1), TIME as
//     12:00:00[.5], TIMETZ as 12:00:00+02[:30];
//   - TIMESTAMP, TIMESTAMPTZ, TIMESTAMP_S, _MS and _NS, unlike DuckDB's
//     CLI, in RFC 3339 in UTC, always with their time: 2026-01-06T00:00:00Z;
//   - infinite dates and timestamps as infinity and -infinity;
//   - UUID as 6ba7b810-9dad-11d1-80b4-00c04fd430c8;
//   - BLOB with every byte but printable ASCII (and \ ' ") as \xHH: a\x00\xFF;
//   - HUGEINT and UHUGEINT in full; ENUM as its label; JSON as compact JSON;
//   - LIST and ARRAY as [1, NULL, 3], STRUCT as {'a': 1, 'b': x}, MAP as
//     {k=v}, with DuckDB's quoting of the values inside them (['a,b', c])
//     and NULL inside them as NULL; a UNION as its value. The driver hands a
//     MAP over as a Go map, which loses DuckDB's order of the entries, so
//     they print sorted by key.
func text(t *colType, v any) string {
	if v == nil {
		return ""
	}
	var b strings.Builder
	writeText(&b, t, v)
	return b.String()
}

// writeText writes v as text, NULL as NULL (as inside a list).
func writeText(b *strings.Builder, t *colType, v any) {
	if isJSON(t, v) {
		b.Write(compactJSON(v))
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("NULL")
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeNested(b, t.element(), e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range structKeys(t, x) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('\'')
			writeEscaped(b, k)
			b.WriteString("': ")
			writeNested(b, t.field(k), x[k])
		}
		b.WriteByte('}')
	case duckdb.Map:
		b.WriteByte('{')
		for i, k := range mapKeys(x) {
			if i > 0 {
				b.WriteString(", ")
			}
			writeNested(b, t.field("key"), k)
			b.WriteByte('=')
			writeNested(b, t.field("value"), x[k])
		}
		b.WriteByte('}')
	case duckdb.Union:
		writeText(b, t.field(x.Tag), x.Value)
	default:
		b.WriteString(scalarText(t, v))
	}
}

// writeNested writes a value inside a LIST, STRUCT or MAP: nested values as
// they are, others quoted as DuckDB quotes them there.
func writeNested(b *strings.Builder, t *colType, v any) {
	switch v.(type) {
	case nil, []any, map[string]any, duckdb.Map, duckdb.Union:
		writeText(b, t, v)
		return
	}
	if isJSON(t, v) {
		writeText(b, t, v)
		return
	}
	s := scalarText(t, v)
	if !needsQuotes(s) {
		b.WriteString(s)
		return
	}
	b.WriteByte('\'')
	writeEscaped(b, s)
	b.WriteByte('\'')
}

// needsQuotes reports whether DuckDB quotes a value's text inside a nested
// value (CalculateEscapedStringLength in DuckDB's vector_cast_helpers.hpp):
// when it is empty, begins or ends with a space, reads null, or holds one of
// the characters that delimit nested values.
func needsQuotes(s string) bool {
	if s == "" || isSpace(s[0]) || len(s) >= 2 && isSpace(s[len(s)-1]) || strings.EqualFold(s, "null") {
		return true
	}
	return strings.ContainsAny(s, `"'(),:=[]{}`)
}

func isSpace(c byte) bool { return c == ' ' || '\t' <= c && c <= '\r' }

// writeEscaped writes s with a backslash before each ' and \, as DuckDB
// writes quoted texts and struct keys inside nested values.
func writeEscaped(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
}

// structKeys are a STRUCT's fields in the order of its type, then any the
// type does not name, sorted.
func structKeys(t *colType, m map[string]any) []string {
	keys := make([]string, 0, len(m))
	if t != nil {
		for _, f := range t.fields {
			if _, ok := m[f.name]; ok {
				keys = append(keys, f.name)
			}
		}
	}
	if len(keys) == len(m) {
		return keys
	}
	var rest []string
	for k := range m {
		if !slices.Contains(keys, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(keys, rest...)
}

// mapKeys are a MAP's keys, sorted: numbers by value, others by their text.
func mapKeys(m duckdb.Map) []any {
	keys := make([]any, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	return keys
}

func compareKeys(a, b any) int {
	switch x := a.(type) {
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y)
		}
	case *big.Int:
		if y, ok := b.(*big.Int); ok {
			return x.Cmp(y)
		}
	case duckdb.Decimal:
		if y, ok := b.(duckdb.Decimal); ok && x.Scale == y.Scale {
			return x.Value.Cmp(y.Value)
		}
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	switch {
	case va.CanInt() && vb.CanInt():
		return cmp.Compare(va.Int(), vb.Int())
	case va.CanUint() && vb.CanUint():
		return cmp.Compare(va.Uint(), vb.Uint())
	case va.CanFloat() && vb.CanFloat():
		return cmp.Compare(va.Float(), vb.Float())
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// scalarText is the text of a value that is neither NULL nor nested.
func scalarText(t *colType, v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return floatText(x, 64)
	case float32:
		return floatText(float64(x), 32)
	case *big.Int:
		return x.String()
	case duckdb.Decimal:
		return decimalText(x)
	case duckdb.Interval:
		return intervalText(x)
	case time.Time:
		switch {
		case t.is("DATE"):
			return dateText(x)
		case t.is("TIME"):
			return timeText(x)
		case t.is("TIMETZ"):
			return timeText(x) + offsetText(x)
		}
		return timestampText(t, x)
	case []byte:
		if t.is("UUID") && len(x) == 16 {
			h := hex.EncodeToString(x)
			return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
		}
		return blobText(x)
	}
	return fmt.Sprint(v)
}

// floatText writes a DOUBLE (bits 64) or FLOAT (bits 32) as DuckDB does:
// the shortest digits that read back as the same number, in exponent form
// below 1e-4 and from 1e16, with at least one decimal otherwise.
func floatText(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, bits)
	if exp, _ := strconv.Atoi(e[strings.LastIndexByte(e, 'e')+1:]); exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, bits)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// decimalText writes a DECIMAL with exactly its scale's digits after the
// point: 300.0, 0.00, -0.005.
func decimalText(d duckdb.Decimal) string {
	if d.Value == nil {
		return ""
	}
	digits := new(big.Int).Abs(d.Value).String()
	scale := int(d.Scale)
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	if scale > 0 {
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if d.Value.Sign() < 0 {
		return "-" + digits
	}
	return digits
}

// intervalText writes an INTERVAL as DuckDB does (IntervalToStringCast):
// years, months and days, then the time of day, 00:00:00 if all are zero.
func intervalText(iv duckdb.Interval) string {
	var parts []string
	unit := func(n int64, name string) {
		if n == 0 {
			return
		}
		if n != 1 && n != -1 {
			name += "s"
		}
		parts = append(parts, strconv.FormatInt(n, 10)+" "+name)
	}
	unit(int64(iv.Months/12), "year")
	unit(int64(iv.Months%12), "month")
	unit(int64(iv.Days), "day")
	if iv.Micros != 0 || len(parts) == 0 {
		sign, us := "", uint64(iv.Micros)
		if iv.Micros < 0 {
			sign, us = "-", -us
		}
		parts = append(parts, sign+clockText(us/3_600_000_000, us/60_000_000%60, us/1_000_000%60, us%1_000_000))
	}
	return strings.Join(parts, " ")
}

// clockText writes hh:mm:ss, then the microseconds without their trailing
// zeros if there are any.
func clockText(h, m, s, us uint64) string {
	t := fmt.Sprintf("%02d:%02d:%02d", h, m, s)
	if us != 0 {
		t += strings.TrimRight(fmt.Sprintf(".%06d", us), "0")
	}
	return t
}

func timeText(t time.Time) string {
	return clockText(uint64(t.Hour()), uint64(t.Minute()), uint64(t.Second()), uint64(t.Nanosecond()/1000))
}

// offsetText writes a TIMETZ's offset as DuckDB does: +02, -05:30, +05:30:15.
func offsetText(t time.Time) string {
	_, off := t.Zone()
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	s := fmt.Sprintf("%s%02d", sign, off/3600)
	if off%3600 != 0 {
		s += fmt.Sprintf(":%02d", off/60%60)
	}
	if off%60 != 0 {
		s += fmt.Sprintf(":%02d", off%60)
	}
	return s
}

// dateText writes a DATE as DuckDB does: 2026-01-06, 0044-03-15 (BC),
// infinity.
func dateText(t time.Time) string {
	switch t.Unix() / 86400 {
	case math.MaxInt32:
		return "infinity"
	case -math.MaxInt32:
		return "-infinity"
	}
	y, m, d := t.Date()
	if y <= 0 {
		return fmt.Sprintf("%04d-%02d-%02d (BC)", 1-y, m, d)
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, m, d)
}

// timestampText writes a TIMESTAMP in RFC 3339 (UTC), or infinity: DuckDB
// stores the infinities as the largest and smallest count of its unit.
func timestampText(t *colType, x time.Time) string {
	var n int64
	switch {
	case t.is("TIMESTAMP_S"):
		n = x.Unix()
	case t.is("TIMESTAMP_MS"):
		n = x.UnixMilli()
	case t.is("TIMESTAMP_NS"):
		n = x.UnixNano()
	default:
		n = x.UnixMicro()
	}
	switch n {
	case math.MaxInt64:
		return "infinity"
	case -math.MaxInt64:
		return "-infinity"
	}
	return x.UTC().Format(time.RFC3339Nano)
}

// blobText writes a BLOB as DuckDB does: printable ASCII as itself, other
// bytes and \ ' " as \xHH.
func blobText(p []byte) string {
	var b strings.Builder
	for _, c := range p {
		if c >= 0x20 && c <= 0x7e && c != '\\' && c != '\'' && c != '"' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, `\x%02X`, c)
		}
	}
	return b.String()
}

// compactJSON marshals a value of DuckDB's JSON type, which the driver
// parsed into maps (whose keys this sorts), slices, strings, float64s and
// bools, without escaping <, > and & as DuckDB does not.
func compactJSON(v any) []byte {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return compactJSON(fmt.Sprint(v))
	}
	return []byte(strings.TrimSuffix(b.String(), "\n"))
}

// appendJSON appends one value for the json format: NULL as null, numbers
// (integers, HUGEINT, DECIMAL, DOUBLE) as JSON numbers, LIST and ARRAY as
// arrays, STRUCT as an object in the order of its fields, MAP as an object
// keyed by the keys' text (sorted, see text), UNION as its value, a JSON
// value as itself, and everything else as a string of its text (DATE,
// TIME, TIMESTAMP, INTERVAL, UUID, BLOB, ENUM; NaN and infinite DOUBLEs,
// which JSON has no number for: "nan", "inf", "-inf").
//
// A DECIMAL is a number written with exactly its digits (300.0, and all 38
// digits of a DECIMAL(38,x)): JSON numbers have no precision limit, so the
// text is exact. A reader that parses every number as a float64
// (JavaScript's JSON.parse, for one) rounds those beyond 15 to 17
// significant digits, as it rounds a BIGINT beyond 2^53 or a HUGEINT; one
// that keeps numbers exact (Python's json with parse_float=Decimal, Go's
// json.Number, jq 1.7) gets the value DuckDB computed.
func appendJSON(b []byte, t *colType, v any) []byte {
	if isJSON(t, v) {
		return append(b, compactJSON(v)...)
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.AppendQuote(b, floatText(x, 64))
		}
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return strconv.AppendQuote(b, floatText(float64(x), 32))
		}
	case *big.Int:
		return append(b, x.String()...)
	case duckdb.Decimal:
		if x.Value != nil {
			return append(b, decimalText(x)...)
		}
	case duckdb.Interval, time.Time, []byte:
		return appendJSONString(b, scalarText(t, v))
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, t.element(), e)
		}
		return append(b, ']')
	case map[string]any:
		b = append(b, '{')
		for i, k := range structKeys(t, x) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSON(b, t.field(k), x[k])
		}
		return append(b, '}')
	case duckdb.Map:
		b = append(b, '{')
		for i, k := range mapKeys(x) {
			if i > 0 {
				b = append(b, ',')
			}
			var key strings.Builder
			writeText(&key, t.field("key"), k)
			b = appendJSONString(b, key.String())
			b = append(b, ':')
			b = appendJSON(b, t.field("value"), x[k])
		}
		return append(b, '}')
	case duckdb.Union:
		return appendJSON(b, t.field(x.Tag), x.Value)
	}
	p, err := json.Marshal(v)
	if err != nil {
		return appendJSONString(b, scalarText(t, v))
	}
	return append(b, p...)
}

func appendJSONString(b []byte, s string) []byte {
	p, _ := json.Marshal(s)
	return append(b, p...)
}

type csvWriter struct {
	w     *csv.Writer
	types []*colType
}

func (c *csvWriter) begin(w *bufio.Writer, cols []string, types []*colType) error {
	c.w, c.types = csv.NewWriter(w), types
	return c.w.Write(cols)
}

func (c *csvWriter) row(vals []any) error {
	rec := make([]string, len(vals))
	for i, v := range vals {
		rec[i] = text(c.types[i], v)
	}
	return c.w.Write(rec)
}

func (c *csvWriter) end() error { c.w.Flush(); return c.w.Error() }

type jsonWriter struct {
	w     *bufio.Writer
	cols  []string
	types []*colType
	n     int
	buf   []byte
}

func (j *jsonWriter) begin(w *bufio.Writer, cols []string, types []*colType) error {
	j.w, j.cols, j.types = w, uniqueKeys(cols), types
	_, err := w.WriteString("[")
	return err
}

func (j *jsonWriter) row(vals []any) error {
	sep := ",\n"
	if j.n == 0 {
		sep = "\n"
	}
	j.n++
	b := append(j.buf[:0], sep+"  {"...)
	for i, c := range j.cols {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendJSONString(b, c)
		b = append(b, ": "...)
		b = appendJSON(b, j.types[i], vals[i])
	}
	b = append(b, '}')
	j.buf = b
	_, err := j.w.Write(b)
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
	types  []*colType
	widths []int
	buf    [][]string
	sized  bool
}

func (t *tableWriter) begin(w *bufio.Writer, cols []string, types []*colType) error {
	t.w, t.cols, t.types = w, cols, types
	t.widths = make([]int, len(cols))
	for i, c := range cols {
		t.widths[i] = utf8.RuneCountInString(c)
	}
	return nil
}

func (t *tableWriter) row(vals []any) error {
	cells := make([]string, len(vals))
	for i, v := range vals {
		cells[i] = cleanCell(text(t.types[i], v))
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

type markdownWriter struct {
	w     *bufio.Writer
	types []*colType
}

func mdCell(s string) string {
	s = cleanCell(s)
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, "|", `\|`)
}

func (m *markdownWriter) begin(w *bufio.Writer, cols []string, types []*colType) error {
	m.w, m.types = w, types
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
		cells[i] = mdCell(text(m.types[i], v))
	}
	_, err := fmt.Fprintf(m.w, "| %s |\n", strings.Join(cells, " | "))
	return err
}

func (m *markdownWriter) end() error { return nil }
