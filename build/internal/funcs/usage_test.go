package funcs

import (
	"bufio"
	"os"
	"reflect"
	"strings"
	"testing"
)

// builtins are Go's own template functions, which html/template provides.
var builtins = map[string]bool{"and": true, "or": true, "not": true, "len": true, "html": true, "js": true, "urlquery": true, "call": true}

// engineFuncs belong to the builder, which knows the templates and the
// site: it adds them to this package's functions.
var engineFuncs = map[string]bool{"partial": true, "partialCached": true, "site": true, "templates.Exists": true}

// TestCoversThemeUsage checks that each of the 50 functions public themes
// use most (testdata/theme-usage.tsv) is here, under its name: a top-level
// function in the map, or a namespace whose value has the method.
func TestCoversThemeUsage(t *testing.T) {
	f, err := os.Open("testdata/theme-usage.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fm, err := New(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() && rows < 50 {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		rows++
		cols := strings.Split(line, "\t")
		if len(cols) != 3 {
			t.Fatalf("bad row %q", line)
		}
		name := cols[2]
		if builtins[name] || engineFuncs[name] {
			continue
		}
		ns, method, namespaced := strings.Cut(name, ".")
		fn, ok := fm[ns]
		if !ok {
			t.Errorf("%s (used by %s themes) is missing", name, cols[0])
			continue
		}
		if !namespaced {
			continue
		}
		out := reflect.ValueOf(fn).Call(nil)
		if len(out) == 0 || !out[0].IsValid() {
			t.Errorf("%s: the namespace %s gives nothing", name, ns)
			continue
		}
		v := out[0]
		if v.Kind() == reflect.Interface {
			v = v.Elem()
		}
		if !v.MethodByName(method).IsValid() {
			t.Errorf("%s (used by %s themes) is missing: %s has no %s", name, cols[0], v.Type(), method)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows != 50 {
		t.Fatalf("read %d rows, want 50", rows)
	}
}
