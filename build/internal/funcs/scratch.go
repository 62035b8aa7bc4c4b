package funcs

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Scratch is a map a template can write to, which newScratch makes (and
// the builder gives each page as .Scratch and .Store).
type Scratch struct {
	mu     sync.RWMutex
	values map[string]any
}

// NewScratch makes an empty Scratch.
func NewScratch() *Scratch { return &Scratch{values: map[string]any{}} }

// NewScratch makes an empty Scratch.
func (*Collections) NewScratch() *Scratch { return NewScratch() }

// Set stores a value under key and prints nothing.
func (s *Scratch) Set(key string, v any) string {
	s.mu.Lock()
	s.values[key] = v
	s.mu.Unlock()
	return ""
}

// Get returns the value under key, or nil.
func (s *Scratch) Get(key string) any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.values[key]
}

// Delete removes key.
func (s *Scratch) Delete(key string) string {
	s.mu.Lock()
	delete(s.values, key)
	s.mu.Unlock()
	return ""
}

// Values is the whole map.
func (s *Scratch) Values() map[string]any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.values
}

// Add adds v to the value under key: numbers are summed, texts joined, a
// list gets v appended (or v's items, when v is a list); an empty key is
// set to v.
func (s *Scratch) Add(key string, v any) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.values[key]
	if !ok || cur == nil {
		s.values[key] = v
		return "", nil
	}
	cv := reflect.ValueOf(cur)
	if cv.Kind() == reflect.Slice {
		var r any
		var err error
		if vv := reflect.ValueOf(v); vv.IsValid() && vv.Kind() == reflect.Slice {
			r, err = appendAll(cur, listValues(vv))
		} else {
			r, err = (&Collections{}).Append(v, cur)
		}
		if err != nil {
			return "", fmt.Errorf("Scratch.Add: %w", err)
		}
		s.values[key] = r
		return "", nil
	}
	r, err := arith('+', cur, v)
	if err != nil {
		return "", fmt.Errorf("Scratch.Add: %w", err)
	}
	s.values[key] = r
	return "", nil
}

func appendAll(list any, items []any) (any, error) {
	if len(items) == 0 {
		return list, nil
	}
	return (&Collections{}).Append(append(items, list)...)
}

// SetInMap stores v under mapKey in the map under key.
func (s *Scratch) SetInMap(key, mapKey string, v any) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.values[key].(map[string]any)
	if !ok {
		m = map[string]any{}
		s.values[key] = m
	}
	m[mapKey] = v
	return ""
}

// DeleteInMap removes mapKey from the map under key.
func (s *Scratch) DeleteInMap(key, mapKey string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.values[key].(map[string]any); ok {
		delete(m, mapKey)
	}
	return ""
}

// GetSortedMapValues returns the values of the map under key, by key.
func (s *Scratch) GetSortedMapValues(key string) any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.values[key].(map[string]any)
	if !ok {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// Apply calls the function named on each item of a list, the item taking
// the place of each "." among the arguments: apply (slice "a" "b") "upper" ".".
func (c *Collections) Apply(list any, fname string, args ...any) (any, error) {
	if strings.HasPrefix(fname, "apply") {
		return nil, fmt.Errorf("apply: %s is not allowed", fname)
	}
	fn, ok := c.funcs[fname]
	if !ok {
		return nil, fmt.Errorf("apply: no function %q", fname)
	}
	fv := reflect.ValueOf(fn)
	lv, isNil := indirect(reflect.ValueOf(list))
	if isNil || !isList(lv) {
		return nil, fmt.Errorf("apply: cannot apply to %T", list)
	}
	out := make([]any, 0, lv.Len())
	for i := range lv.Len() {
		item := lv.Index(i).Interface()
		callArgs := make([]any, len(args))
		for j, a := range args {
			if s, ok := a.(string); ok && s == "." {
				callArgs[j] = item
			} else {
				callArgs[j] = a
			}
		}
		r, err := callFunc(fv, callArgs)
		if err != nil {
			return nil, fmt.Errorf("apply %s: %w", fname, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// callFunc calls a template function as the template would.
func callFunc(fv reflect.Value, args []any) (any, error) {
	ft := fv.Type()
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		var want reflect.Type
		switch {
		case ft.IsVariadic() && i >= ft.NumIn()-1:
			want = ft.In(ft.NumIn() - 1).Elem()
		case i < ft.NumIn():
			want = ft.In(i)
		default:
			return nil, fmt.Errorf("too many arguments")
		}
		av := reflect.ValueOf(a)
		switch {
		case !av.IsValid():
			av = reflect.Zero(want)
		case !av.Type().AssignableTo(want):
			if !av.Type().ConvertibleTo(want) {
				return nil, fmt.Errorf("argument %d: %T is not %s", i+1, a, want)
			}
			av = av.Convert(want)
		}
		in[i] = av
	}
	if n := ft.NumIn(); len(in) < n && !(ft.IsVariadic() && len(in) == n-1) {
		return nil, fmt.Errorf("want %d arguments, got %d", n, len(in))
	}
	out := fv.Call(in)
	if len(out) == 2 && !out[1].IsNil() {
		return nil, out[1].Interface().(error)
	}
	return out[0].Interface(), nil
}
