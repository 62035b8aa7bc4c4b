package funcs

import (
	"errors"
	"fmt"
	"math"
	"reflect"
)

// Math is the math namespace. add, sub, mul and div keep whole numbers
// whole (div 7 2 is 3) and turn to floating point as soon as one operand
// is a float (div 7 2.0 is 3.5), as Hugo does; add also joins two texts.
type Math struct{}

// Add adds its arguments, left to right.
func (*Math) Add(a, b any, more ...any) (any, error) { return fold('+', a, b, more) }

// Sub subtracts its arguments, left to right.
func (*Math) Sub(a, b any, more ...any) (any, error) { return fold('-', a, b, more) }

// Mul multiplies its arguments.
func (*Math) Mul(a, b any, more ...any) (any, error) { return fold('*', a, b, more) }

// Div divides its arguments, left to right.
func (*Math) Div(a, b any, more ...any) (any, error) { return fold('/', a, b, more) }

func fold(op rune, a, b any, more []any) (any, error) {
	r, err := arith(op, a, b)
	for _, m := range more {
		if err != nil {
			break
		}
		r, err = arith(op, r, m)
	}
	return r, err
}

var opNames = map[rune]string{'+': "add", '-': "sub", '*': "mul", '/': "div"}

// arith applies op to two numbers: int64 when both are signed integers,
// uint64 when both are unsigned, float64 when either is a float.
func arith(op rune, a, b any) (any, error) {
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	if !av.IsValid() || !bv.IsValid() {
		return nil, fmt.Errorf("%s: cannot apply the operator to nil", opNames[op])
	}
	ak, bk := av.Kind(), bv.Kind()
	switch {
	case ak == reflect.String && bk == reflect.String && op == '+':
		return av.String() + bv.String(), nil
	case isIntKind(ak) && isIntKind(bk):
		x, y := av.Int(), bv.Int()
		switch op {
		case '+':
			r := x + y
			if (x^r)&(y^r) < 0 {
				return nil, fmt.Errorf("add: %d + %d overflows", x, y)
			}
			return r, nil
		case '-':
			r := x - y
			if (x^y)&(x^r) < 0 {
				return nil, fmt.Errorf("sub: %d - %d overflows", x, y)
			}
			return r, nil
		case '*':
			if x != 0 && ((x*y)/x != y || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64)) {
				return nil, fmt.Errorf("mul: %d * %d overflows", x, y)
			}
			return x * y, nil
		case '/':
			if y == 0 {
				return nil, errors.New("div: cannot divide by 0")
			}
			return x / y, nil
		}
	case isUintKind(ak) && isUintKind(bk):
		x, y := av.Uint(), bv.Uint()
		switch op {
		case '+':
			return x + y, nil
		case '-':
			if y > x {
				return int64(x) - int64(y), nil
			}
			return x - y, nil
		case '*':
			return x * y, nil
		case '/':
			if y == 0 {
				return nil, errors.New("div: cannot divide by 0")
			}
			return x / y, nil
		}
	case isNumberKind(ak) && isNumberKind(bk):
		if isIntKind(ak) && isUintKind(bk) || isUintKind(ak) && isIntKind(bk) {
			// Mixed signedness: as signed, as Hugo does.
			x, err1 := toInt64(a)
			y, err2 := toInt64(b)
			if err1 == nil && err2 == nil {
				return arith(op, x, y)
			}
		}
		x, _ := toFloat(a)
		y, _ := toFloat(b)
		switch op {
		case '+':
			return x + y, nil
		case '-':
			return x - y, nil
		case '*':
			return x * y, nil
		case '/':
			if y == 0 {
				return nil, errors.New("div: cannot divide by 0")
			}
			return x / y, nil
		}
	}
	return nil, fmt.Errorf("%s: cannot apply the operator to %v (%T) and %v (%T)", opNames[op], a, a, b, b)
}

// Mod is a modulo b, both taken as whole numbers.
func (*Math) Mod(a, b any) (int64, error) {
	x, err := toInt64(a)
	if err != nil {
		return 0, fmt.Errorf("mod: %w", err)
	}
	y, err := toInt64(b)
	if err != nil {
		return 0, fmt.Errorf("mod: %w", err)
	}
	if y == 0 {
		return 0, errors.New("mod: cannot divide by 0")
	}
	return x % y, nil
}

// ModBool reports whether a modulo b is 0.
func (m *Math) ModBool(a, b any) (bool, error) {
	r, err := m.Mod(a, b)
	return r == 0, err
}

func float1(fn string, v any) (float64, error) {
	f, err := toFloat(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", fn, err)
	}
	return f, nil
}

// Abs is the absolute value.
func (*Math) Abs(v any) (float64, error) { f, err := float1("math.Abs", v); return math.Abs(f), err }

// Ceil rounds up.
func (*Math) Ceil(v any) (float64, error) { f, err := float1("math.Ceil", v); return math.Ceil(f), err }

// Floor rounds down.
func (*Math) Floor(v any) (float64, error) {
	f, err := float1("math.Floor", v)
	return math.Floor(f), err
}

// Round rounds half away from zero.
func (*Math) Round(v any) (float64, error) {
	f, err := float1("math.Round", v)
	return math.Round(f), err
}

// Sqrt is the square root.
func (*Math) Sqrt(v any) (float64, error) { f, err := float1("math.Sqrt", v); return math.Sqrt(f), err }

// Log is the natural logarithm.
func (*Math) Log(v any) (float64, error) { f, err := float1("math.Log", v); return math.Log(f), err }

// Pow is a to the power b.
func (*Math) Pow(a, b any) (float64, error) {
	x, err := float1("pow", a)
	if err != nil {
		return 0, err
	}
	y, err := float1("pow", b)
	return math.Pow(x, y), err
}

// Pi is π.
func (*Math) Pi() float64 { return math.Pi }

// MaxInt64 is the largest int64.
func (*Math) MaxInt64() int64 { return math.MaxInt64 }

// Max is the largest of its arguments (lists are taken item by item).
func (*Math) Max(args ...any) (float64, error) {
	return reduceFloats("math.Max", args, math.Inf(-1), math.Max)
}

// Min is the smallest of its arguments.
func (*Math) Min(args ...any) (float64, error) {
	return reduceFloats("math.Min", args, math.Inf(1), math.Min)
}

// Sum adds all its arguments.
func (*Math) Sum(args ...any) (float64, error) {
	return reduceFloats("math.Sum", args, 0, func(a, b float64) float64 { return a + b })
}

// Product multiplies all its arguments.
func (*Math) Product(args ...any) (float64, error) {
	return reduceFloats("math.Product", args, 1, func(a, b float64) float64 { return a * b })
}

func reduceFloats(fn string, args []any, start float64, f func(a, b float64) float64) (float64, error) {
	if len(args) == 0 {
		return 0, fmt.Errorf("%s: want at least one number", fn)
	}
	acc := start
	for _, a := range args {
		items := []any{a}
		if lv := reflect.ValueOf(a); isList(lv) {
			items = listValues(lv)
		}
		for _, it := range items {
			x, err := float1(fn, it)
			if err != nil {
				return 0, err
			}
			acc = f(acc, x)
		}
	}
	return acc, nil
}
