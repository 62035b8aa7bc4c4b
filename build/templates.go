package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"math/big"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"text/template/parse"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/fediverse-observer/observer"
)

// templates holds one parsed template set per layout (home.html, page.html,
// ...), each with baseof.html and the partials, as Hugo combines them.
type templates struct {
	sets  map[string]*layoutSet // by layout name, e.g. "page.html"
	state *funcState
}

type layoutSet struct {
	// master is never executed, so that it can still be cloned: html/template
	// refuses to clone a set once it has run.
	master   *template.Template
	entry    string            // name of the template to execute
	partials map[string]string // partial name -> template name
	mu       sync.Mutex
	free     []*execSet
}

// execSet is a clone of a layout's templates that one render uses at a
// time. Its partial function counts how deeply partials are nested in that
// render: a template function is told nothing about the execution calling
// it, and renders run in parallel, so the count needs a set of its own per
// render. Sets are reused, so a build clones (and escapes) a layout about
// once per concurrent render, not once per page.
type execSet struct {
	t     *template.Template
	depth int
}

// maxPartialDepth bounds the nesting of partials. A partial that includes
// itself, directly or through others, would otherwise recurse until the Go
// stack overflows, which kills the process (observer serve with it) instead
// of failing the build. A real site nests a few deep.
const maxPartialDepth = 100

// partialDepthError is returned by the innermost partial call over the
// bound; the calls around it pass it up as it is, so that the message names
// the partial once instead of 100 nested "error calling partial" prefixes.
type partialDepthError struct{ file string }

func (e *partialDepthError) Error() string {
	return fmt.Sprintf("%s: partials nested more than %d deep (does it include itself?)", e.file, maxPartialDepth)
}

// get returns a set for one render; put gives it back.
func (ls *layoutSet) get() (*execSet, error) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if n := len(ls.free); n > 0 {
		es := ls.free[n-1]
		ls.free = ls.free[:n-1]
		return es, nil
	}
	t, err := ls.master.Clone()
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", ls.entry, err)
	}
	es := &execSet{t: t}
	t.Funcs(template.FuncMap{"partial": es.partialFunc(ls.partials)})
	return es, nil
}

func (ls *layoutSet) put(es *execSet) {
	ls.mu.Lock()
	ls.free = append(ls.free, es)
	ls.mu.Unlock()
}

// funcState is what the template functions need that only exists once the
// build has its data.
type funcState struct {
	site *Site
	data *DataView
}

// Names of templates are the files' display paths, so that parse and
// execution errors name the file: "themes/x/layouts/home.html:12:5".
func loadTemplates(th *theme) (*templates, error) {
	files, err := layerFiles(th.layouts)
	if err != nil {
		return nil, err
	}
	state := &funcState{}
	base := template.New("").Funcs(baseFuncs(state))
	partials := map[string]string{}
	var layouts []themeFile
	var baseof string
	for _, f := range files {
		if dir, _, ok := strings.Cut(f.rel, "/"); ok && dir != "_partials" {
			return nil, subfolderError(f, dir)
		}
		if !strings.HasSuffix(f.rel, ".html") {
			continue
		}
		switch {
		case strings.HasPrefix(f.rel, "_partials/"):
			if err := parseInto(base, f); err != nil {
				return nil, err
			}
			partials[strings.TrimPrefix(f.rel, "_partials/")] = f.display
		case f.rel == "baseof.html":
			if err := parseInto(base, f); err != nil {
				return nil, err
			}
			baseof = f.display
		default:
			layouts = append(layouts, f)
		}
	}
	tp := &templates{sets: map[string]*layoutSet{}, state: state}
	for _, f := range layouts {
		set, err := base.Clone()
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", f.display, err)
		}
		src, err := fs.ReadFile(f.fsys, f.rel)
		if err != nil {
			return nil, fmt.Errorf("read template %s: %w", f.display, err)
		}
		definesMain, err := defines(f.display, string(src), "main")
		if err != nil {
			return nil, err
		}
		if _, err := set.New(f.display).Parse(string(src)); err != nil {
			return nil, err // "template: FILE:LINE: …" already
		}
		entry := f.display
		if definesMain {
			if baseof == "" {
				// Used on its own, such a layout renders as nothing but
				// the text around its define: a blank page, built without
				// a word.
				return nil, fmt.Errorf("%s defines \"main\", but there is no baseof.html to wrap it in (%s)", f.display, th.lookedIn())
			}
			entry = baseof
		}
		tp.sets[f.rel] = &layoutSet{master: set, entry: entry, partials: partials}
	}
	for _, need := range []string{"home.html", "page.html", "live.html", "404.html"} {
		if tp.sets[need] == nil {
			return nil, fmt.Errorf("theme %q has no layout %s (%s)", th.name, need, th.lookedIn())
		}
	}
	return tp, nil
}

// lookedIn says where layouts were looked for, for messages.
func (th *theme) lookedIn() string {
	var n []string
	for _, l := range th.layouts {
		n = append(n, l.name)
	}
	var parts []string
	if len(n) > 0 {
		parts = append(parts, "looked in "+strings.Join(n, ", "))
	}
	if th.missingLayouts != "" {
		parts = append(parts, "there is no "+th.missingLayouts)
	}
	if len(parts) == 0 {
		return "there is no layouts directory"
	}
	return strings.Join(parts, "; ")
}

// subfolderError refuses a folder of layouts/ other than _partials. Hugo
// looks in some (partials/, _default/), so a theme ported from Hugo had
// its files there ignored without a word and the embedded ones used, or
// a layout reported missing that was right there.
func subfolderError(f themeFile, dir string) error {
	display := strings.TrimSuffix(f.display, f.rel) + dir
	if dir == "partials" {
		return fmt.Errorf("%s: partials go in layouts/_partials", display)
	}
	return fmt.Errorf("%s: layouts are files directly in layouts/ (home.html, page.html, live.html, 404.html, baseof.html, or a name given by front matter layout), and partials go in layouts/_partials", display)
}

func parseInto(t *template.Template, f themeFile) error {
	src, err := fs.ReadFile(f.fsys, f.rel)
	if err != nil {
		return fmt.Errorf("read template %s: %w", f.display, err)
	}
	if _, err := t.New(f.display).Parse(string(src)); err != nil {
		return err // "template: FILE:LINE: …" already
	}
	return nil
}

// defines reports whether the template text defines the named block, which
// is how a layout says "wrap me in baseof.html".
func defines(name, src, block string) (bool, error) {
	trees := map[string]*parse.Tree{}
	t := parse.New(name)
	t.Mode = parse.SkipFuncCheck
	if _, err := t.Parse(src, "", "", trees); err != nil {
		return false, err // "template: FILE:LINE: …" already
	}
	_, ok := trees[block]
	return ok, nil
}

func (es *execSet) partialFunc(partials map[string]string) func(string, ...any) (template.HTML, error) {
	return func(name string, ctx ...any) (template.HTML, error) {
		name = strings.TrimPrefix(strings.TrimPrefix(name, "_partials/"), "partials/")
		if !strings.HasSuffix(name, ".html") {
			name += ".html"
		}
		full, ok := partials[name]
		if !ok {
			return "", fmt.Errorf("no partial %s in _partials/", name)
		}
		if es.depth >= maxPartialDepth {
			return "", &partialDepthError{file: full}
		}
		es.depth++
		defer func() { es.depth-- }()
		var dot any
		if len(ctx) > 0 {
			dot = ctx[0]
		}
		var buf bytes.Buffer
		if err := es.t.ExecuteTemplate(&buf, full, dot); err != nil {
			if deep, ok := errors.AsType[*partialDepthError](err); ok {
				return "", deep
			}
			return "", err
		}
		// The partial was escaped as HTML by html/template itself.
		return template.HTML(buf.String()), nil
	}
}

func baseFuncs(st *funcState) template.FuncMap {
	return template.FuncMap{
		"partial": func(string, ...any) (template.HTML, error) { return "", nil }, // replaced per set
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
		"relURL":      func(p string) string { return st.site.RelURL(p) },
		"absURL":      func(p string) string { return st.site.AbsURL(p) },
		"instanceURL": instanceURL,
		"formatInt":   formatInt,
		"date":        func(t time.Time) string { return dateOnly(t) },
		"dateTime":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
		"isoTime":     func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"duration":    humanDuration,
		"truncate":    truncate,
		"lower":       strings.ToLower,
		"upper":       strings.ToUpper,
		"add":         add,
		"sub":         sub,
		"percent":     percent,
		"deref":       deref,
		"default": func(def, v any) any {
			if isZero(v) {
				return def
			}
			return v
		},
		"dict": func(kv ...any) (map[string]any, error) {
			if len(kv)%2 != 0 {
				return nil, fmt.Errorf("dict: odd number of arguments")
			}
			m := make(map[string]any, len(kv)/2)
			for i := 0; i < len(kv); i += 2 {
				k, ok := kv[i].(string)
				if !ok {
					return nil, fmt.Errorf("dict: key %v is not text", kv[i])
				}
				m[k] = kv[i+1]
			}
			return m, nil
		},
		"liveChart": func(days []observer.DayCount) template.HTML { return chartSVG(days, seriesLive) },
		"newChart":  func(days []observer.DayCount) template.HTML { return chartSVG(days, seriesNew) },
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

func truncate(n int, s string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n])) + "…"
}

func add(a, b any) (int64, error) {
	x, y, err := wholeNumbers("add", a, b)
	if err != nil {
		return 0, err
	}
	r := x + y
	if (x^r)&(y^r) < 0 { // both signs differ from the result's: it wrapped
		return 0, fmt.Errorf("add: %d + %d is out of range", x, y)
	}
	return r, nil
}

func sub(a, b any) (int64, error) {
	x, y, err := wholeNumbers("sub", a, b)
	if err != nil {
		return 0, err
	}
	r := x - y
	if (x^y)&(x^r) < 0 { // operands of unlike signs, and the result's sign not x's
		return 0, fmt.Errorf("sub: %d - %d is out of range", x, y)
	}
	return r, nil
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

func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case int:
		return x == 0
	case int64:
		return x == 0
	case float64:
		return x == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

type renderJob struct {
	page   *Page
	layout string
	rel    string
}

// render executes the layouts in parallel. Any error fails the whole build.
func (b *builder) render(ctx context.Context, dv *DataView, jobs []renderJob) error {
	b.tpl.state.site = b.site
	b.tpl.state.data = dv
	g, gctx := errgroup.WithContext(ctx)
	// Writing many small files waits on the file system more than on the
	// CPU (a directory and a file per page), so run more than one job per core.
	g.SetLimit(4 * runtime.GOMAXPROCS(0))
	for _, j := range jobs {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			ls := b.tpl.sets[j.layout]
			if ls == nil {
				// pageLayout checked the pages' layouts; this is a bug.
				return fmt.Errorf("render %s: no layout %s", j.rel, j.layout)
			}
			es, err := ls.get()
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			buf.Grow(16 << 10)
			err = es.t.ExecuteTemplate(&buf, ls.entry, &Context{Page: j.page, Site: b.site, Data: dv})
			ls.put(es)
			if err != nil {
				if j.page.File != "" {
					return fmt.Errorf("render content/%s: %w", j.page.File, err)
				}
				return fmt.Errorf("render %s: %w", j.rel, err)
			}
			if err := dv.failed(); err != nil {
				return err
			}
			source := "the generated page " + j.rel
			if j.page.File != "" {
				source = "content/" + j.page.File
			}
			return b.out.writeFile(j.rel, source, buf.Bytes())
		})
	}
	return g.Wait()
}
