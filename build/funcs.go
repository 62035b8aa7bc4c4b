package build

import (
	"fmt"

	"github.com/fediverse-observer/observer/build/internal/funcs"
	"html/template"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/fediverse-observer/observer"
)

// templateFuncs is every function templates can call, wired here and
// nowhere else: Hugo's (package funcs), then the page model's own (site,
// partial, partialCached, templates, ref, relref), then the observer's
// (sql, formatInt, the charts, …), a later one replacing an earlier of
// the same name. Names not here fail the parse of the template that uses
// them, naming its file and line.
func templateFuncs(st *funcState, hugo funcs.Options) (template.FuncMap, error) {
	fm, err := funcs.New(hugo)
	if err != nil {
		return nil, fmt.Errorf("template functions: %w", err)
	}
	for name, f := range modelFuncs(st) {
		fm[name] = f
	}
	return fm, nil
}

func modelFuncs(st *funcState) template.FuncMap {
	return template.FuncMap{
		// partial and partialCached are replaced per render (execSet).
		"partial":       func(string, ...any) (any, error) { return "", nil },
		"partialCached": func(string, ...any) (any, error) { return "", nil },
		"site":          func() *Site { return st.site },
		"templates":     func() *templatesNS { return st.templates },
		"ref":           func(_ any, ref string) (string, error) { return st.site.ref(ref, true) },
		"relref":        func(_ any, ref string) (string, error) { return st.site.ref(ref, false) },
		"sql": func(query string, args ...any) ([]map[string]any, error) {
			if st.data == nil {
				return nil, fmt.Errorf("sql: no data")
			}
			rows, err := st.data.data.Query(st.data.ctx, query, args...)
			if err != nil {
				return nil, fmt.Errorf("sql: %w", err)
			}
			return rows, nil
		},
		"instanceURL":   instanceURL,
		"formatInt":     formatInt,
		"date":          func(t time.Time) string { return dateOnly(t) },
		"dateTime":      func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
		"isoTime":       func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"humanDuration": humanDuration,
		"percent":       percent,
		"deref":         deref,
		"liveChart":     func(days []observer.DayCount) template.HTML { return chartSVG(days, seriesLive) },
		"newChart":      func(days []observer.DayCount) template.HTML { return chartSVG(days, seriesNew) },
	}
}

// instanceURL is the address of an instance's home page. html/template
// escapes it again in whatever attribute it lands.
func instanceURL(host string) string { return "https://" + host + "/" }

func dateOnly(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02")
}

// formatInt prints a number whole, its digits grouped. It takes whatever
// the data and sql give: any integer type, pointers to them (nil prints
// nothing), *big.Int (DuckDB's HUGEINT, which sum of a BIGINT is), and
// floats and decimals (avg, median), rounded to the nearest whole number.
func formatInt(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case *big.Int:
		if x == nil {
			return ""
		}
		return groupSigned(x.String())
	case float64:
		return formatFloat(x)
	case float32:
		return formatFloat(float64(x))
	case uint64:
		return groupDigits(strconv.FormatUint(x, 10)) // may be above int64's range
	case uint:
		return groupDigits(strconv.FormatUint(uint64(x), 10))
	case interface{ Float64() float64 }:
		// duckdb.Decimal, which only the duck package may name.
		return formatFloat(x.Float64())
	}
	if n, ok := toInt64(v); ok {
		return groupSigned(strconv.FormatInt(n, 10))
	}
	if r := reflect.ValueOf(v); r.Kind() == reflect.Pointer {
		if r.IsNil() {
			return ""
		}
		return formatInt(r.Elem().Interface())
	}
	return fmt.Sprint(v)
}

func formatFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Sprint(f)
	}
	// Through big.Int, since a float can be far outside int64.
	n, _ := new(big.Float).SetFloat64(math.Round(f)).Int(nil)
	return groupSigned(n.String())
}

func groupSigned(s string) string {
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		return "-" + groupDigits(rest)
	}
	return groupDigits(s)
}

// toInt64 takes any Go integer type (not named ones such as
// time.Duration): the data's numbers are int64, len's are int, and the sql
// function's columns may be of any width.
func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint:
		return int64(x), uint64(x) <= math.MaxInt64
	case uint64:
		return int64(x), x <= math.MaxInt64
	case *big.Int:
		// DuckDB's HUGEINT, which sum() of a BIGINT is.
		if x == nil || !x.IsInt64() {
			return 0, false
		}
		return x.Int64(), true
	}
	return 0, false
}

// wholeNumbers converts the arguments of add, sub and percent.
func wholeNumbers(fn string, a, b any) (int64, int64, error) {
	x, okx := toInt64(a)
	y, oky := toInt64(b)
	switch {
	case !okx:
		return 0, 0, fmt.Errorf("%s: want whole numbers, got %v (%T)", fn, a, a)
	case !oky:
		return 0, 0, fmt.Errorf("%s: want whole numbers, got %v (%T)", fn, b, b)
	}
	return x, y, nil
}

// groupDigits puts thin spaces between groups of three digits, readable in
// every language (SI style).
func groupDigits(s string) string {
	if len(s) <= 4 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteString("\u202f")
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

func humanDuration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour && d%(24*time.Hour) == 0:
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	case d >= time.Hour && d%time.Hour == 0:
		if d == time.Hour {
			return "1 hour"
		}
		return fmt.Sprintf("%d hours", d/time.Hour)
	}
	return d.String()
}

func percent(a, b any) (float64, error) {
	part, total, err := wholeNumbers("percent", a, b)
	if err != nil || total <= 0 {
		return 0, err
	}
	return float64(int(float64(part)/float64(total)*1000)) / 10, nil
}

// deref follows a pointer the data uses for "not reported" (nil stays nil).
func deref(v any) any {
	switch p := v.(type) {
	case *int64:
		if p != nil {
			return *p
		}
	case *bool:
		if p != nil {
			return *p
		}
	default:
		return v
	}
	return nil
}
