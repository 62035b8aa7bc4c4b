package funcs

import (
	"fmt"
	"html/template"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Cast is the cast namespace: int, float and string, converting as Hugo
// does.
type Cast struct{}

// ToInt converts v to an int: numbers (floats truncated), numeric text,
// booleans (1 or 0) and nil (0).
func (*Cast) ToInt(v any) (int, error) { return toInt(v) }

// ToFloat converts v to a float64.
func (*Cast) ToFloat(v any) (float64, error) { return toFloat(v) }

// ToString converts v to text.
func (*Cast) ToString(v any) (string, error) { return toString(v) }

// indirect follows pointers and interfaces; isNil says whether it met a
// nil on the way.
func indirect(v reflect.Value) (rv reflect.Value, isNil bool) {
	for ; v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface; v = v.Elem() {
		if v.IsNil() {
			return v, true
		}
	}
	return v, false
}

// toString is Hugo's (spf13/cast's) notion of text: text and its safe
// kinds, numbers in their shortest form, booleans, nil as "", and anything
// with a String or Error method.
func toString(v any) (string, error) {
	switch s := v.(type) {
	case nil:
		return "", nil
	case string:
		return s, nil
	case template.HTML:
		return string(s), nil
	case template.URL:
		return string(s), nil
	case template.JS:
		return string(s), nil
	case template.JSStr:
		return string(s), nil
	case template.CSS:
		return string(s), nil
	case template.HTMLAttr:
		return string(s), nil
	case []byte:
		return string(s), nil
	case bool:
		return strconv.FormatBool(s), nil
	case float64:
		return strconv.FormatFloat(s, 'f', -1, 64), nil
	case float32:
		return strconv.FormatFloat(float64(s), 'f', -1, 32), nil
	case fmt.Stringer:
		return s.String(), nil
	case error:
		return s.Error(), nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10), nil
	case reflect.String:
		return rv.String(), nil
	case reflect.Pointer:
		if rv.IsNil() {
			return "", nil
		}
		return toString(rv.Elem().Interface())
	}
	return "", fmt.Errorf("unable to cast %#v of type %T to string", v, v)
}

func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case time.Weekday:
		return int64(x), nil
	case time.Month:
		return int64(x), nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return 0, fmt.Errorf("unable to cast %d to int: out of range", u)
		}
		return int64(u), nil
	case reflect.Float32, reflect.Float64:
		return int64(rv.Float()), nil
	case reflect.String:
		s := strings.TrimSpace(rv.String())
		// "3.0" is an integer to Hugo; "3.5" is not.
		if i := strings.IndexByte(s, '.'); i >= 0 && strings.Trim(s[i+1:], "0") == "" {
			s = s[:i]
		}
		n, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return 0, fmt.Errorf("unable to cast %q to int", rv.String())
		}
		return n, nil
	case reflect.Pointer:
		if rv.IsNil() {
			return 0, nil
		}
		return toInt64(rv.Elem().Interface())
	}
	if s, ok := v.(interface{ Float64() float64 }); ok {
		return int64(s.Float64()), nil
	}
	return 0, fmt.Errorf("unable to cast %#v of type %T to int", v, v)
}

func toInt(v any) (int, error) {
	n, err := toInt64(v)
	return int(n), err
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	case reflect.String:
		f, err := strconv.ParseFloat(strings.TrimSpace(rv.String()), 64)
		if err != nil {
			return 0, fmt.Errorf("unable to cast %q to float", rv.String())
		}
		return f, nil
	case reflect.Pointer:
		if rv.IsNil() {
			return 0, nil
		}
		return toFloat(rv.Elem().Interface())
	}
	if s, ok := v.(interface{ Float64() float64 }); ok {
		return s.Float64(), nil
	}
	return 0, fmt.Errorf("unable to cast %#v of type %T to float", v, v)
}

// toStringSlice takes a list (of anything text-like) or one text.
func toStringSlice(v any) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []string:
		return x, nil
	case string:
		return []string{x}, nil
	}
	rv, isNil := indirect(reflect.ValueOf(v))
	if isNil {
		return nil, nil
	}
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		s, err := toString(v)
		if err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
	out := make([]string, rv.Len())
	for i := range out {
		s, err := toString(rv.Index(i).Interface())
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// truth is the template's notion of true, which cond and where use.
func truth(v any) bool {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return false
	}
	if t, ok := v.(time.Time); ok {
		return !t.IsZero()
	}
	switch rv.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return rv.Len() > 0
	case reflect.Bool:
		return rv.Bool()
	case reflect.Complex64, reflect.Complex128:
		return rv.Complex() != 0
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.Interface:
		return !rv.IsNil()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() != 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint() != 0
	}
	return true
}

func isNumberKind(k reflect.Kind) bool {
	return isIntKind(k) || isUintKind(k) || k == reflect.Float32 || k == reflect.Float64
}

func isIntKind(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Int64
}

func isUintKind(k reflect.Kind) bool {
	return k >= reflect.Uint && k <= reflect.Uintptr
}
