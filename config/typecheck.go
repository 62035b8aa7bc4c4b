package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// checkTypes refuses a value whose TOML type does not fit its setting, naming
// the setting's key and what it takes. It runs before go-toml decodes, for two
// reasons: go-toml stores a bare integer in a Duration (an int64 underneath,
// so that callers convert to and from time.Duration) as nanoseconds, so
// check_timeout = 5 would time out every check; and go-toml's own type errors
// name Go struct fields (config.Crawl.Concurrency) that users never see.
// Unknown keys and syntax errors are left to the decoder, which reports them.
// It also refuses a setting given twice under keys that differ only in case
// (Concurrency and concurrency): TOML holds them as two keys, go-toml
// fills the one setting from both, and one value would be lost unsaid.
func checkTypes(data []byte) error {
	var p unstable.Parser
	p.Reset(data)
	c := checker{p: &p, seen: map[string]given{}}
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyParts(e.Key())
			if err := checkTable(&p, table, e.Key()); err != nil {
				return err
			}
		case unstable.KeyValue:
			if err := c.checkValue(append(slices.Clip(table), keyParts(e.Key())...), e.Value()); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkTable checks that a [table] header names a table setting, which the
// key-values below it would not show when there are none.
func checkTable(p *unstable.Parser, path []string, key unstable.Iterator) error {
	t, name, n := lookup(path)
	if t == nil {
		return nil
	}
	if kind, _ := wanted(t); kind == unstable.InlineTable || kind == unstable.Invalid {
		return nil
	}
	for range n {
		key.Next()
	}
	return mismatch(p, key.Node(), name, t, "a table")
}

// checker holds what checkValue needs across key-values: the parser (for
// positions) and where each setting was given.
type checker struct {
	p    *unstable.Parser
	seen map[string]given
}

// given is a setting's key as written and the line it is on.
type given struct {
	key  string
	line int
}

// checkValue checks the value of the key-value at path, and those nested in
// it if it is an inline table.
func (c checker) checkValue(path []string, v *unstable.Node) error {
	p := c.p
	t, name, n := lookup(path)
	switch {
	case t == nil:
		return nil
	case n < len(path):
		// A dotted key goes on below this setting.
		if isFree(t) {
			return nil
		}
		if kind, _ := wanted(t); kind == unstable.Invalid {
			return nil
		}
		return mismatch(p, v, name, t, "a table")
	case v.Kind == unstable.InlineTable && t.Kind() == reflect.Struct:
		it := v.Children()
		for it.Next() {
			kv := it.Node()
			if kv.Kind != unstable.KeyValue {
				continue
			}
			if err := c.checkValue(append(slices.Clip(path), keyParts(kv.Key())...), kv.Value()); err != nil {
				return err
			}
		}
		return nil
	}
	line, key := p.Shape(v.Raw).Start.Line, strings.Join(path, ".")
	// The very same key twice is go-toml's to report.
	if first, ok := c.seen[name]; ok && first.key != key {
		return fmt.Errorf("line %d: %s is set twice, as %s and on line %d as %s (keys differing only in case name the same setting)",
			line, name, key, first.line, first.key)
	}
	c.seen[name] = given{key, line}
	if kind, _ := wanted(t); kind == unstable.Invalid || kind == v.Kind {
		return nil
	}
	return mismatch(p, v, name, t, describe(v))
}

func mismatch(p *unstable.Parser, at *unstable.Node, name string, t reflect.Type, got string) error {
	_, want := wanted(t)
	pos := p.Shape(at.Raw).Start
	return fmt.Errorf("line %d, column %d: %s must be %s, got %s", pos.Line, pos.Column, name, want, got)
}

var durationType = reflect.TypeFor[Duration]()

// wanted is the TOML kind a setting of type t takes (InlineTable standing for
// any table), and its name in an error. Invalid means the type is not
// checked here, and go-toml's own error stands.
func wanted(t reflect.Type) (unstable.Kind, string) {
	if t == durationType {
		return unstable.String, `a duration in quotes, such as "90s", "29h" or "7d"`
	}
	switch t.Kind() {
	case reflect.String:
		return unstable.String, "a string"
	case reflect.Bool:
		return unstable.Bool, "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return unstable.Integer, "an integer"
	case reflect.Struct, reflect.Map:
		return unstable.InlineTable, "a table"
	}
	return unstable.Invalid, ""
}

// describe names a value in an error, with its text when it is short.
func describe(v *unstable.Node) string {
	switch v.Kind {
	case unstable.String:
		return fmt.Sprintf("the string %q", v.Data)
	case unstable.Integer, unstable.Float:
		return "the number " + string(v.Data)
	case unstable.Bool:
		return string(v.Data)
	case unstable.Array:
		return "an array"
	case unstable.InlineTable:
		return "a table"
	}
	return "the date " + string(v.Data)
}

// isFree reports whether anything may go below a setting of type t, as
// below site.params.
func isFree(t reflect.Type) bool {
	return t.Kind() == reflect.Map || t.Kind() == reflect.Interface
}

// lookup follows path down from Config as go-toml does: a part matches a
// field's toml tag exactly or, failing that, ignoring case. It returns the
// type the first n parts lead to and their key as documented (the tags); n
// is short of len(path) when the path goes on below a field that is not a
// struct. t is nil when a part names no field.
func lookup(path []string) (t reflect.Type, name string, n int) {
	t = reflect.TypeFor[Config]()
	var names []string
	for n = 0; n < len(path) && t.Kind() == reflect.Struct; n++ {
		f, ok := fieldByKey(t, path[n])
		if !ok {
			return nil, "", n
		}
		t = f.Type
		names = append(names, tagName(f))
	}
	return t, strings.Join(names, "."), n
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for _, exact := range []bool{true, false} {
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || f.Tag.Get("toml") == "-" {
				continue
			}
			if name := tagName(f); name == key || !exact && strings.EqualFold(name, key) {
				return f, true
			}
		}
	}
	return reflect.StructField{}, false
}

func tagName(f reflect.StructField) string {
	if name, _, _ := strings.Cut(f.Tag.Get("toml"), ","); name != "" {
		return name
	}
	return f.Name
}

// canonicalKey is key as documented, for keys go-toml reports as written.
func canonicalKey(key []string) string {
	t, name, n := lookup(key)
	if t == nil || name == "" {
		return strings.Join(key, ".")
	}
	return strings.Join(append([]string{name}, key[n:]...), ".")
}

func keyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}
