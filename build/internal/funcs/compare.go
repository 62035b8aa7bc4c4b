package funcs

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"time"
)

// Compare is the compare namespace: eq, ne, lt, le, gt, ge, cond and
// default. Unlike Go's own eq and lt, they compare numbers of any kinds
// with each other (eq 1 1.0 is true), text with its safe kinds, times by
// instant, and never fail on mismatched kinds: eq 1 "1" is false.
type Compare struct{ e *env }

// Default returns given when it is set and def when not. Set means
// non-zero for numbers and times, non-empty for text, lists and maps, any
// boolean or struct, and non-nil for anything else. given is variadic
// because a pipe of a missing key passes nothing:
// {{ index . "key" | default "foo" }}.
func (*Compare) Default(def any, given ...any) (any, error) {
	if len(given) == 0 {
		return def, nil
	}
	if len(given) != 1 {
		return nil, errors.New("default: want 2 arguments")
	}
	g := reflect.ValueOf(given[0])
	if !g.IsValid() {
		return def, nil
	}
	var set bool
	switch g.Kind() {
	case reflect.Bool:
		set = true
	case reflect.String, reflect.Array, reflect.Slice, reflect.Map:
		set = g.Len() != 0
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		set = g.Int() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		set = g.Uint() != 0
	case reflect.Float32, reflect.Float64:
		set = g.Float() != 0
	case reflect.Complex64, reflect.Complex128:
		set = g.Complex() != 0
	case reflect.Struct:
		if t, ok := given[0].(time.Time); ok {
			set = !t.IsZero()
		} else {
			set = true
		}
	default:
		set = !g.IsNil()
	}
	if set {
		return given[0], nil
	}
	return def, nil
}

// Conditional returns a when c is true by the template's rules, else b.
func (*Compare) Conditional(c, a, b any) any {
	if truth(c) {
		return a
	}
	return b
}

// Eq reports whether first equals any of others.
func (*Compare) Eq(first any, others ...any) (bool, error) {
	if len(others) == 0 {
		return false, errors.New("eq: missing arguments for comparison")
	}
	nf := normalizeForEq(first)
	for _, o := range others {
		if equal(first, nf, o) {
			return true, nil
		}
	}
	return false, nil
}

// eqer is a value that knows what equals it, such as a page.
type eqer interface{ Eq(other any) bool }

// equal reports whether a (whose normal form is na) equals b: by Eq when
// either has it, else by normal form; pointers by identity, lists and
// maps by content.
func equal(a, na, b any) bool {
	if e, ok := a.(eqer); ok {
		return e.Eq(b)
	}
	if e, ok := b.(eqer); ok {
		return e.Eq(a)
	}
	nb := normalizeForEq(b)
	if na == nil || nb == nil {
		return na == nil && nb == nil
	}
	ta, tb := reflect.TypeOf(na), reflect.TypeOf(nb)
	if ta != tb {
		return false
	}
	if reflect.ValueOf(na).Comparable() && reflect.ValueOf(nb).Comparable() {
		return na == nb
	}
	return reflect.DeepEqual(na, nb)
}

// Ne reports whether first equals none of others.
func (c *Compare) Ne(first any, others ...any) (bool, error) {
	eq, err := c.Eq(first, others...)
	return !eq, err
}

// Lt reports whether first is less than each of others.
func (*Compare) Lt(first any, others ...any) (bool, error) {
	return compareAll("lt", first, others, func(l, r float64) bool { return l < r })
}

// Le reports whether first is less than or equal to each of others.
func (*Compare) Le(first any, others ...any) (bool, error) {
	return compareAll("le", first, others, func(l, r float64) bool { return l <= r })
}

// Gt reports whether first is greater than each of others.
func (*Compare) Gt(first any, others ...any) (bool, error) {
	return compareAll("gt", first, others, func(l, r float64) bool { return l > r })
}

// Ge reports whether first is greater than or equal to each of others.
func (*Compare) Ge(first any, others ...any) (bool, error) {
	return compareAll("ge", first, others, func(l, r float64) bool { return l >= r })
}

func compareAll(name string, first any, others []any, ok func(l, r float64) bool) (bool, error) {
	if len(others) == 0 {
		return false, errors.New(name + ": missing arguments for comparison")
	}
	for _, o := range others {
		l, r := comparable2(first, o)
		if !ok(l, r) {
			return false, nil
		}
	}
	return true, nil
}

// normalizeForEq gives values that should compare equal the same Go
// representation: every integer an int64, every float a float64, text of
// any kind a string, a nil of any type nil, a time its instant.
func normalizeForEq(v any) any {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return nil
	}
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		if rv.IsNil() {
			return nil
		}
	}
	if t, ok := v.(time.Time); ok {
		return t.UnixNano()
	}
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if u := rv.Uint(); u <= math.MaxInt64 {
			return int64(u)
		}
		return rv.Uint()
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f) // so that eq 1 1.0
		}
		return f
	case reflect.String:
		return rv.String()
	}
	return v
}

// comparable2 maps a pair to two numbers whose order is the pair's: numbers
// as they are, text as numbers when both parse as such and by byte order
// otherwise, times by instant, lists and maps by length, booleans as 0 and
// 1. Values of no order give 0 and 0.
func comparable2(a, b any) (float64, float64) {
	if v, ok := a.(VersionString); ok {
		return intOrder(v.compare(b))
	}
	if v, ok := b.(VersionString); ok {
		l, r := intOrder(v.compare(a))
		return r, l
	}
	if as, ok := a.(string); ok {
		if bs, ok := b.(string); ok {
			return strOrder(as, bs)
		}
	}
	as, aText := textOf(a)
	bs, bText := textOf(b)
	if aText && bText {
		af, aErr := strconv.ParseFloat(as, 64)
		bf, bErr := strconv.ParseFloat(bs, 64)
		if aErr == nil && bErr == nil && !math.IsNaN(af) && !math.IsNaN(bf) {
			return af, bf
		}
		return strOrder(as, bs)
	}
	// Two unsigned integers, or one unsigned and one signed, compare
	// exactly even past 2^53.
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	if av.IsValid() && bv.IsValid() {
		switch {
		case isUintKind(av.Kind()) && isUintKind(bv.Kind()):
			return uintOrder(av.Uint(), bv.Uint())
		case isIntKind(av.Kind()) && isUintKind(bv.Kind()):
			if av.Int() < 0 {
				return 0, 1
			}
			return uintOrder(uint64(av.Int()), bv.Uint())
		case isUintKind(av.Kind()) && isIntKind(bv.Kind()):
			if bv.Int() < 0 {
				return 1, 0
			}
			return uintOrder(av.Uint(), uint64(bv.Int()))
		}
	}
	return orderNumber(a), orderNumber(b)
}

func textOf(v any) (string, bool) {
	rv := reflect.ValueOf(v)
	if rv.IsValid() && rv.Kind() == reflect.String {
		return rv.String(), true
	}
	return "", false
}

func strOrder(a, b string) (float64, float64) {
	switch {
	case a < b:
		return 0, 1
	case a > b:
		return 1, 0
	}
	return 0, 0
}

func intOrder(c int) (float64, float64) {
	switch {
	case c < 0:
		return 0, 1
	case c > 0:
		return 1, 0
	}
	return 0, 0
}

func uintOrder(a, b uint64) (float64, float64) {
	switch {
	case a < b:
		return 0, 1
	case a > b:
		return 1, 0
	}
	return 0, 0
}

func orderNumber(v any) float64 {
	if t, ok := v.(time.Time); ok {
		return float64(t.Unix())
	}
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return 0
	}
	switch rv.Kind() {
	case reflect.Array, reflect.Chan, reflect.Map, reflect.Slice:
		return float64(rv.Len())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint())
	case reflect.Float32, reflect.Float64:
		return rv.Float()
	case reflect.String:
		f, err := strconv.ParseFloat(rv.String(), 64)
		if err == nil {
			return f
		}
	case reflect.Bool:
		if rv.Bool() {
			return 1
		}
	}
	return 0
}

// less is the order sort uses: lt on the two values.
func less(a, b any) bool {
	l, r := comparable2(a, b)
	return l < r
}
