package funcs

import (
	"errors"
	"fmt"
)

// Debug is the debug namespace.
type Debug struct{}

// Dump prints a value with its structure, for a theme's author.
func (*Debug) Dump(v any) string { return fmt.Sprintf("%#v", v) }

// returnValue carries a partial's return value out of its template:
// Go's templates have no return, so return stops the execution with this
// error, which the partial function takes apart with Returned.
type returnValue struct{ v any }

func (returnValue) Error() string { return "return outside a partial" }

// Return ends a partial with its value: {{ return $x }}. The builder's
// partial function recovers the value with Returned.
func Return(v ...any) (string, error) {
	var val any
	if len(v) > 0 {
		val = v[0]
	}
	return "", returnValue{val}
}

// Returned reports whether err is the end of a partial by return, and with
// what value.
func Returned(err error) (any, bool) {
	var r returnValue
	if errors.As(err, &r) {
		return r.v, true
	}
	return nil, false
}
