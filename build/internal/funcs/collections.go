package funcs

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Collections is the collections namespace: where, first, sort, dict,
// slice and the other functions on lists and maps. Functions that return a
// part of a list return a list of the same type, so that what a theme
// filters from .Pages still has the methods of pages.
type Collections struct {
	e     *env
	funcs map[string]any // for apply
}

// maxSeq bounds seq, as Hugo does: a theme's typo (seq 1e12) should fail,
// not exhaust memory.
const maxSeq = 1_000_000

// After returns the items of list after the first n.
func (*Collections) After(n, list any) (any, error) {
	lv, k, err := listArgs("after", n, list)
	if err != nil {
		return nil, err
	}
	if k >= lv.Len() {
		return lv.Slice(0, 0).Interface(), nil
	}
	return lv.Slice(k, lv.Len()).Interface(), nil
}

// First returns the first n items of list (all of them if it has fewer).
func (*Collections) First(n, list any) (any, error) {
	lv, k, err := listArgs("first", n, list)
	if err != nil {
		return nil, err
	}
	return lv.Slice(0, min(k, lv.Len())).Interface(), nil
}

// Last returns the last n items of list.
func (*Collections) Last(n, list any) (any, error) {
	lv, k, err := listArgs("last", n, list)
	if err != nil {
		return nil, err
	}
	return lv.Slice(max(lv.Len()-k, 0), lv.Len()).Interface(), nil
}

func listArgs(fn string, n, list any) (reflect.Value, int, error) {
	if n == nil || list == nil {
		return reflect.Value{}, 0, fmt.Errorf("%s: both a count and a list must be given", fn)
	}
	k, err := toInt(n)
	if err != nil {
		return reflect.Value{}, 0, fmt.Errorf("%s: %w", fn, err)
	}
	if k < 0 {
		return reflect.Value{}, 0, fmt.Errorf("%s: the count %d is negative", fn, k)
	}
	lv, isNil := indirect(reflect.ValueOf(list))
	if isNil {
		return reflect.Value{}, 0, fmt.Errorf("%s: cannot iterate over nil", fn)
	}
	switch lv.Kind() {
	case reflect.Slice, reflect.String:
	case reflect.Array:
		// An array value cannot be sliced; a copy in a slice can.
		s := reflect.MakeSlice(reflect.SliceOf(lv.Type().Elem()), lv.Len(), lv.Len())
		reflect.Copy(s, lv)
		lv = s
	default:
		return reflect.Value{}, 0, fmt.Errorf("%s: cannot iterate over %T", fn, list)
	}
	return lv, k, nil
}

// Append adds items to the list given last: append 4 5 (slice 1 2 3).
// Appending one list to a list of its kind joins the two.
func (*Collections) Append(args ...any) (any, error) {
	if len(args) < 2 {
		return nil, errors.New("append: need at least 2 arguments")
	}
	to, from := args[len(args)-1], args[:len(args)-1]
	tov, toNil := indirect(reflect.ValueOf(to))
	if toNil || to == nil {
		if len(from) == 1 {
			if fv := reflect.ValueOf(from[0]); fv.IsValid() && fv.Kind() == reflect.Slice {
				return from[0], nil
			}
		}
		return sliceOf(from), nil
	}
	if tov.Kind() != reflect.Slice {
		return nil, fmt.Errorf("append: expected a list, got %T", to)
	}
	elem := tov.Type().Elem()
	out := reflect.MakeSlice(tov.Type(), tov.Len(), tov.Len()+len(from))
	reflect.Copy(out, tov)
	if len(from) == 1 {
		if fv := reflect.ValueOf(from[0]); fv.IsValid() && fv.Kind() == reflect.Slice && elem.Kind() != reflect.Slice {
			if tov.Len() == 0 {
				return from[0], nil
			}
			if fv.Type().Elem().AssignableTo(elem) {
				return reflect.AppendSlice(out, fv).Interface(), nil
			}
			return appendAny(tov, listValues(fv)...), nil
		}
	}
	for _, f := range from {
		fv := reflect.ValueOf(f)
		if !fv.IsValid() || !fv.Type().AssignableTo(elem) {
			return appendAny(tov, from...), nil
		}
		out = reflect.Append(out, fv)
	}
	return out.Interface(), nil
}

func appendAny(list reflect.Value, more ...any) []any {
	out := make([]any, 0, list.Len()+len(more))
	for i := range list.Len() {
		out = append(out, list.Index(i).Interface())
	}
	return append(out, more...)
}

func listValues(v reflect.Value) []any {
	out := make([]any, v.Len())
	for i := range out {
		out[i] = v.Index(i).Interface()
	}
	return out
}

// Slice makes a list of its arguments; of their type when they all have
// one type, else of anything.
func (*Collections) Slice(items ...any) any {
	return sliceOf(items)
}

func sliceOf(items []any) any {
	if len(items) == 0 {
		return []any{}
	}
	t := reflect.TypeOf(items[0])
	if t == nil {
		return items
	}
	for _, it := range items[1:] {
		if reflect.TypeOf(it) != t {
			return items
		}
	}
	out := reflect.MakeSlice(reflect.SliceOf(t), len(items), len(items))
	for i, it := range items {
		out.Index(i).Set(reflect.ValueOf(it))
	}
	return out.Interface()
}

// Dictionary makes a map of key, value pairs. A key may be a list of
// keys, which makes nested maps: dict (slice "a" "b") 1 is {a: {b: 1}}.
func (*Collections) Dictionary(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, errors.New("dict: invalid dictionary call: an odd number of arguments")
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		switch k := kv[i].(type) {
		case string:
			m[k] = kv[i+1]
		case []string:
			if len(k) == 0 {
				return nil, errors.New("dict: an empty list of keys")
			}
			cur := m
			for _, part := range k[:len(k)-1] {
				next, ok := cur[part].(map[string]any)
				if !ok {
					next = map[string]any{}
					cur[part] = next
				}
				cur = next
			}
			cur[k[len(k)-1]] = kv[i+1]
		default:
			if ks, err := toStringSlice(k); err == nil && reflect.ValueOf(k).Kind() == reflect.Slice {
				return (&Collections{}).Dictionary(append([]any{ks, kv[i+1]}, kv[i+2:]...)...)
			}
			s, err := toString(k)
			if err != nil || k == nil {
				return nil, fmt.Errorf("dict: key %v (%T) is not text", k, k)
			}
			m[s] = kv[i+1]
		}
	}
	return m, nil
}

// Delimit joins the items of a list (a map's values, in the order of its
// keys) with sep, and the last two with last when it is given.
func (*Collections) Delimit(list, sep any, last ...any) (string, error) {
	d, err := toString(sep)
	if err != nil {
		return "", fmt.Errorf("delimit: %w", err)
	}
	var dLast *string
	if len(last) > 0 {
		if s, err := toString(last[0]); err == nil {
			dLast = &s
		}
	}
	lv, isNil := indirect(reflect.ValueOf(list))
	if isNil || !lv.IsValid() {
		return "", errors.New("delimit: cannot iterate over nil")
	}
	var items []any
	switch lv.Kind() {
	case reflect.Map:
		keys := lv.MapKeys()
		sort.SliceStable(keys, func(i, j int) bool { return less(keys[i].Interface(), keys[j].Interface()) })
		for _, k := range keys {
			items = append(items, lv.MapIndex(k).Interface())
		}
	case reflect.Slice, reflect.Array:
		items = listValues(lv)
	case reflect.String:
		return lv.String(), nil
	default:
		return "", fmt.Errorf("delimit: cannot iterate over %T", list)
	}
	var b strings.Builder
	for i, it := range items {
		s, err := toString(it)
		if err != nil {
			continue
		}
		b.WriteString(s)
		switch {
		case i == len(items)-2 && dLast != nil:
			b.WriteString(*dLast)
		case i < len(items)-1:
			b.WriteString(d)
		}
	}
	return b.String(), nil
}

// In reports whether list holds v (by eq), or, when list is text, whether
// it contains v as text.
func (*Collections) In(list, v any) (bool, error) {
	if list == nil || v == nil {
		return false, nil
	}
	lv := reflect.ValueOf(list)
	switch lv.Kind() {
	case reflect.Slice, reflect.Array:
		nv := normalizeForEq(v)
		for i := range lv.Len() {
			item, isNil := indirect(lv.Index(i))
			if isNil || !item.IsValid() {
				continue
			}
			if equal(v, nv, item.Interface()) {
				return true, nil
			}
		}
		return false, nil
	}
	ls, err := toString(list)
	if err != nil {
		return false, nil
	}
	vs, err := toString(v)
	if err != nil {
		return false, nil
	}
	return strings.Contains(ls, vs), nil
}

// Index returns the item at the keys, one level each, as Go's index does,
// but the keys may come as one list, and a missing map key or a nil
// collection gives nil instead of an error.
func (*Collections) Index(item any, keys ...any) (any, error) {
	v := reflect.ValueOf(item)
	if len(keys) == 1 {
		if kl := reflect.ValueOf(keys[0]); kl.IsValid() && kl.Kind() == reflect.Slice {
			keys = listValues(kl)
		}
	}
	for _, k := range keys {
		var isNil bool
		v, isNil = indirect(v)
		if isNil || !v.IsValid() {
			return nil, nil
		}
		switch v.Kind() {
		case reflect.Slice, reflect.Array, reflect.String:
			i, err := toInt(k)
			if err != nil {
				return nil, fmt.Errorf("index: cannot index %s with %v", v.Type(), k)
			}
			if i < 0 || i >= v.Len() {
				return nil, fmt.Errorf("index: index out of range: %d", i)
			}
			v = v.Index(i)
		case reflect.Map:
			mv, err := mapIndex(v, k)
			if err != nil {
				return nil, fmt.Errorf("index: %w", err)
			}
			if !mv.IsValid() {
				return nil, nil
			}
			v = mv
		default:
			return nil, fmt.Errorf("index: cannot index %s", v.Type())
		}
	}
	if !v.IsValid() {
		return nil, nil
	}
	return v.Interface(), nil
}

// mapIndex looks a key up; text keys match the map's keys without regard
// to case when nothing matches exactly, as Hugo's params do.
func mapIndex(m reflect.Value, key any) (reflect.Value, error) {
	kt := m.Type().Key()
	kv := reflect.ValueOf(key)
	if !kv.IsValid() {
		return reflect.Value{}, nil
	}
	if !kv.Type().AssignableTo(kt) {
		if kv.Type().ConvertibleTo(kt) && kv.Kind() == kt.Kind() {
			kv = kv.Convert(kt)
		} else {
			return reflect.Value{}, fmt.Errorf("key %v (%T) does not fit map of %s", key, key, m.Type())
		}
	}
	if v := m.MapIndex(kv); v.IsValid() {
		return v, nil
	}
	if kt.Kind() == reflect.String {
		want := strings.ToLower(kv.String())
		if v := m.MapIndex(reflect.ValueOf(want).Convert(kt)); v.IsValid() {
			return v, nil
		}
		iter := m.MapRange()
		for iter.Next() {
			if strings.ToLower(iter.Key().String()) == want {
				return iter.Value(), nil
			}
		}
	}
	return reflect.Value{}, nil
}

// IsSet reports whether a map has the key (text keys without regard to
// case) or a list is longer than the index.
func (*Collections) IsSet(c, key any) (bool, error) {
	v, isNil := indirect(reflect.ValueOf(c))
	if isNil || !v.IsValid() {
		return false, nil
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Array, reflect.Chan:
		k, err := toInt(key)
		if err != nil {
			return false, fmt.Errorf("isset: cannot use a key of type %T as an index", key)
		}
		return k >= 0 && k < v.Len(), nil
	case reflect.Map:
		mv, err := mapIndex(v, key)
		if err != nil {
			return false, nil
		}
		return mv.IsValid(), nil
	}
	return false, nil
}

// Intersect returns the items of a that are also in b, in a's order.
func (*Collections) Intersect(a, b any) (any, error) {
	if a == nil || b == nil {
		return []any{}, nil
	}
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	if !isList(av) || !isList(bv) {
		return nil, fmt.Errorf("intersect: cannot intersect %T and %T", a, b)
	}
	seen := map[any]bool{}
	for i := range bv.Len() {
		seen[hashKey(bv.Index(i).Interface())] = true
	}
	out := reflect.MakeSlice(reflect.SliceOf(av.Type().Elem()), 0, 0)
	added := map[any]bool{}
	for i := range av.Len() {
		k := hashKey(av.Index(i).Interface())
		if seen[k] && !added[k] {
			added[k] = true
			out = reflect.Append(out, av.Index(i))
		}
	}
	return out.Interface(), nil
}

// Union returns the items of a, then those of b not in a, each once.
func (*Collections) Union(a, b any) (any, error) {
	if a == nil && b == nil {
		return []any{}, nil
	}
	if a == nil {
		return b, nil
	}
	if b == nil {
		return a, nil
	}
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	if !isList(av) || !isList(bv) {
		return nil, fmt.Errorf("union: cannot union %T and %T", a, b)
	}
	var out reflect.Value
	if av.Type().Elem() == bv.Type().Elem() {
		out = reflect.MakeSlice(reflect.SliceOf(av.Type().Elem()), 0, av.Len()+bv.Len())
	} else {
		out = reflect.ValueOf([]any{})
	}
	seen := map[any]bool{}
	for _, l := range []reflect.Value{av, bv} {
		for i := range l.Len() {
			it := l.Index(i)
			k := hashKey(it.Interface())
			if seen[k] {
				continue
			}
			seen[k] = true
			if out.Type().Elem().Kind() == reflect.Interface {
				out = reflect.Append(out, reflect.ValueOf(&[]any{it.Interface()}).Elem().Index(0))
			} else {
				out = reflect.Append(out, it)
			}
		}
	}
	return out.Interface(), nil
}

// Complement returns the items of the list given last that are in none of
// the lists before it.
func (*Collections) Complement(ls ...any) (any, error) {
	if len(ls) < 2 {
		return nil, errors.New("complement: need at least two arguments")
	}
	main := reflect.ValueOf(ls[len(ls)-1])
	if !isList(main) {
		return nil, fmt.Errorf("complement: %T is not a list", ls[len(ls)-1])
	}
	drop := map[any]bool{}
	for _, l := range ls[:len(ls)-1] {
		lv := reflect.ValueOf(l)
		if !isList(lv) {
			return nil, fmt.Errorf("complement: %T is not a list", l)
		}
		for i := range lv.Len() {
			drop[hashKey(lv.Index(i).Interface())] = true
		}
	}
	out := reflect.MakeSlice(reflect.SliceOf(main.Type().Elem()), 0, main.Len())
	for i := range main.Len() {
		if !drop[hashKey(main.Index(i).Interface())] {
			out = reflect.Append(out, main.Index(i))
		}
	}
	return out.Interface(), nil
}

// SymDiff returns the items in exactly one of the two lists.
func (c *Collections) SymDiff(a, b any) (any, error) {
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	if !isList(av) || !isList(bv) {
		return nil, fmt.Errorf("symdiff: cannot diff %T and %T", a, b)
	}
	inA, inB := map[any]bool{}, map[any]bool{}
	for i := range av.Len() {
		inA[hashKey(av.Index(i).Interface())] = true
	}
	for i := range bv.Len() {
		inB[hashKey(bv.Index(i).Interface())] = true
	}
	var out []any
	seen := map[any]bool{}
	for _, side := range []struct {
		l     reflect.Value
		other map[any]bool
	}{{bv, inA}, {av, inB}} {
		for i := range side.l.Len() {
			it := side.l.Index(i).Interface()
			k := hashKey(it)
			if !side.other[k] && !seen[k] {
				seen[k] = true
				out = append(out, it)
			}
		}
	}
	return sliceOf(out), nil
}

// Uniq returns the list without repeated items, first occurrences kept.
func (*Collections) Uniq(list any) (any, error) {
	if list == nil {
		return make([]any, 0), nil
	}
	lv := reflect.ValueOf(list)
	if !isList(lv) {
		return nil, fmt.Errorf("uniq: type %T not supported", list)
	}
	out := reflect.MakeSlice(reflect.SliceOf(lv.Type().Elem()), 0, lv.Len())
	seen := map[any]bool{}
	for i := range lv.Len() {
		k := hashKey(lv.Index(i).Interface())
		if !seen[k] {
			seen[k] = true
			out = reflect.Append(out, lv.Index(i))
		}
	}
	return out.Interface(), nil
}

func isList(v reflect.Value) bool {
	return v.IsValid() && (v.Kind() == reflect.Slice || v.Kind() == reflect.Array)
}

// hashKey is a map key under which eq-equal values meet; values that
// cannot be map keys are keyed by their printed form.
func hashKey(v any) any {
	n := normalizeForEq(v)
	if n == nil {
		return nil
	}
	if reflect.TypeOf(n).Comparable() {
		return n
	}
	return fmt.Sprintf("%T:%#v", n, n)
}

// KeyVals makes a key and its values, for related content.
type KeyValues struct {
	Key    any
	Values []any
}

func (kv KeyValues) String() string { return fmt.Sprintf("%v: %v", kv.Key, kv.Values) }

// KeyVals pairs a key with values: keyVals "key" "a" "b".
func (*Collections) KeyVals(key any, values ...any) (KeyValues, error) {
	return KeyValues{Key: key, Values: values}, nil
}

// Merge merges maps from left to right: a key of a later map replaces
// the same key (in any case) of an earlier one, and two maps under one
// key are merged in turn. The maps given are not changed.
func (*Collections) Merge(maps ...any) (any, error) {
	if len(maps) < 2 {
		return nil, errors.New("merge: need at least two maps")
	}
	out := map[string]any{}
	for _, m := range maps {
		mm, err := toStringMap(m)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		mergeInto(out, mm)
	}
	return out, nil
}

func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		key := k
		for dk := range dst {
			if strings.EqualFold(dk, k) {
				key = dk
				break
			}
		}
		if sm, err := toStringMap(v); err == nil && v != nil {
			if dm, err := toStringMap(dst[key]); err == nil && dst[key] != nil {
				merged := map[string]any{}
				mergeInto(merged, dm)
				mergeInto(merged, sm)
				dst[key] = merged
				continue
			}
		}
		dst[key] = v
	}
}

func toStringMap(m any) (map[string]any, error) {
	if mm, ok := m.(map[string]any); ok {
		return mm, nil
	}
	v, isNil := indirect(reflect.ValueOf(m))
	if isNil {
		return map[string]any{}, nil
	}
	if !v.IsValid() || v.Kind() != reflect.Map || v.Type().Key().Kind() != reflect.String {
		return nil, fmt.Errorf("%T is not a map with text keys", m)
	}
	out := make(map[string]any, v.Len())
	iter := v.MapRange()
	for iter.Next() {
		out[iter.Key().String()] = iter.Value().Interface()
	}
	return out, nil
}

// Querify makes a URL query string of key, value pairs (or of one list
// of them), keys sorted.
func (*Collections) Querify(params ...any) (string, error) {
	if len(params) == 1 {
		if lv := reflect.ValueOf(params[0]); isList(lv) {
			params = listValues(lv)
		} else if m, err := toStringMap(params[0]); err == nil {
			q := url.Values{}
			for k, v := range m {
				s, err := toString(v)
				if err != nil {
					return "", fmt.Errorf("querify: %w", err)
				}
				q.Set(k, s)
			}
			return q.Encode(), nil
		}
	}
	if len(params)%2 != 0 {
		return "", errors.New("querify: an odd number of arguments")
	}
	q := url.Values{}
	for i := 0; i < len(params); i += 2 {
		k, err := toString(params[i])
		if err != nil {
			return "", fmt.Errorf("querify: key: %w", err)
		}
		v, err := toString(params[i+1])
		if err != nil {
			return "", fmt.Errorf("querify: value: %w", err)
		}
		q.Add(k, v)
	}
	return q.Encode(), nil
}

// Seq returns the integers from 1 to last, from first to last, or from
// first to last by inc, as GNU seq does; counting down when last is less.
func (*Collections) Seq(args ...any) ([]int, error) {
	if len(args) < 1 || len(args) > 3 {
		return nil, errors.New("seq: want 1 to 3 arguments")
	}
	n := make([]int, len(args))
	for i, a := range args {
		v, err := toInt(a)
		if err != nil {
			return nil, fmt.Errorf("seq: %w", err)
		}
		n[i] = v
	}
	first, inc, last := 1, 1, 0
	switch len(n) {
	case 1:
		last = n[0]
		switch {
		case last == 0:
			return []int{}, nil
		case last < 0:
			first, inc = -1, -1
		}
	case 2:
		first, last = n[0], n[1]
		if last < first {
			inc = -1
		}
	case 3:
		first, inc, last = n[0], n[1], n[2]
		switch {
		case inc == 0:
			return nil, errors.New("seq: the increment must not be 0")
		case first < last && inc < 0:
			return nil, errors.New("seq: the increment must be > 0")
		case first > last && inc > 0:
			return nil, errors.New("seq: the increment must be < 0")
		}
	}
	size := (last-first)/inc + 1
	if size <= 0 || size > maxSeq {
		return nil, fmt.Errorf("seq: the size of the sequence must be between 1 and %d", maxSeq)
	}
	out := make([]int, size)
	for i := range out {
		out[i] = first + i*inc
	}
	return out, nil
}

// Shuffle returns the list in a random order.
func (*Collections) Shuffle(list any) (any, error) {
	lv, isNil := indirect(reflect.ValueOf(list))
	if isNil || !isList(lv) {
		return nil, fmt.Errorf("shuffle: cannot shuffle %T", list)
	}
	out := reflect.MakeSlice(reflect.SliceOf(lv.Type().Elem()), lv.Len(), lv.Len())
	reflect.Copy(out, lv)
	swap := reflect.Swapper(out.Interface())
	rand.Shuffle(out.Len(), swap)
	return out.Interface(), nil
}

// Reverse returns the list in reverse order.
func (*Collections) Reverse(list any) (any, error) {
	lv, isNil := indirect(reflect.ValueOf(list))
	if isNil || !isList(lv) {
		return nil, fmt.Errorf("reverse: cannot reverse %T", list)
	}
	out := reflect.MakeSlice(reflect.SliceOf(lv.Type().Elem()), lv.Len(), lv.Len())
	for i := range lv.Len() {
		out.Index(lv.Len() - 1 - i).Set(lv.Index(i))
	}
	return out.Interface(), nil
}

// Sort sorts a list, or a map's values, by the items themselves or by the
// field, method or key path given ("Date", "Params.weight"), ascending or
// ("desc") descending. The sort is stable; values compare as lt does.
func (*Collections) Sort(list any, args ...any) (any, error) {
	if list == nil {
		return nil, errors.New("sort: a list must be given")
	}
	lv, isNil := indirect(reflect.ValueOf(list))
	if isNil {
		return nil, errors.New("sort: cannot sort nil")
	}
	var by string
	asc := true
	for i, a := range args {
		s, err := toString(a)
		switch {
		case i == 0 && err == nil:
			by = s
		case i == 1 && err == nil && strings.EqualFold(s, "desc"):
			asc = false
		}
	}
	var path []string
	if by != "" && by != "value" {
		path = strings.Split(strings.Trim(by, "."), ".")
	}
	type pair struct{ key, value, mapKey reflect.Value }
	var pairs []pair
	var sliceType reflect.Type
	switch lv.Kind() {
	case reflect.Slice, reflect.Array:
		sliceType = reflect.SliceOf(lv.Type().Elem())
		if lv.Kind() == reflect.Slice {
			sliceType = lv.Type()
		}
		for i := range lv.Len() {
			it := lv.Index(i)
			k := it
			if path != nil {
				var err error
				if k, err = evalPath(it, path); err != nil {
					return nil, fmt.Errorf("sort: %w", err)
				}
			}
			pairs = append(pairs, pair{key: k, value: it})
		}
	case reflect.Map:
		sliceType = reflect.SliceOf(lv.Type().Elem())
		iter := lv.MapRange()
		for iter.Next() {
			k := iter.Key()
			switch {
			case by == "value":
				k = iter.Value()
			case path != nil:
				var err error
				if k, err = evalPath(iter.Value(), path); err != nil {
					return nil, fmt.Errorf("sort: %w", err)
				}
			}
			pairs = append(pairs, pair{k, iter.Value(), iter.Key()})
		}
		// Map order is random; order by map key first so that ties come
		// out the same in every build.
		slices.SortFunc(pairs, func(a, b pair) int {
			switch {
			case less(a.mapKey.Interface(), b.mapKey.Interface()):
				return -1
			case less(b.mapKey.Interface(), a.mapKey.Interface()):
				return 1
			}
			return 0
		})
	default:
		return nil, fmt.Errorf("sort: cannot sort %T", list)
	}
	iface := func(v reflect.Value) any {
		if !v.IsValid() {
			return nil
		}
		return v.Interface()
	}
	slices.SortStableFunc(pairs, func(a, b pair) int {
		x, y := iface(a.key), iface(b.key)
		if !asc {
			x, y = y, x
		}
		switch {
		case less(x, y):
			return -1
		case less(y, x):
			return 1
		}
		return 0
	})
	out := reflect.MakeSlice(sliceType, len(pairs), len(pairs))
	for i, p := range pairs {
		out.Index(i).Set(p.value)
	}
	return out.Interface(), nil
}

// Where returns the items of a list (or map) whose value at the key path
// ("Section", "Params.tags", ".Title") matches: where LIST KEY VALUE, or
// where LIST KEY OP VALUE with OP one of = == eq != <> ne >= ge > gt <= le
// < lt, in, not in, intersect and like (a regular expression). The result
// is a list of the same type.
func (c *Collections) Where(list, key any, args ...any) (any, error) {
	lv, isNil := indirect(reflect.ValueOf(list))
	if isNil || !lv.IsValid() {
		return nil, fmt.Errorf("where: cannot iterate over nil")
	}
	var op string
	var match any
	switch len(args) {
	case 1:
		match = args[0]
	case 2:
		s, ok := args[0].(string)
		if !ok {
			return nil, errors.New("where: the operator must be text")
		}
		op = strings.ToLower(strings.TrimSpace(s))
		match = args[1]
	default:
		return nil, errors.New("where: want a key and a value, or a key, an operator and a value")
	}
	if !knownOp(op) {
		return nil, fmt.Errorf("where: no such operator %q", op)
	}
	var path []string
	if ks, ok := key.(string); ok {
		path = strings.Split(strings.Trim(ks, "."), ".")
	}
	test := func(item reflect.Value) (bool, error) {
		v := item
		if path != nil {
			var err error
			if v, err = evalPath(item, path); err != nil {
				return false, err
			}
		} else if key != nil {
			// A non-text key indexes: where (slice (slice 1 2)) 0 1.
			iv, isNil := indirect(item)
			if isNil || !iv.IsValid() {
				return false, nil
			}
			switch iv.Kind() {
			case reflect.Map:
				mv, err := mapIndex(iv, key)
				if err != nil {
					return false, err
				}
				v = mv
			case reflect.Slice, reflect.Array:
				i, err := toInt(key)
				if err != nil || i < 0 || i >= iv.Len() {
					return false, nil
				}
				v = iv.Index(i)
			default:
				return false, nil
			}
		}
		return c.e.whereMatch(v, reflect.ValueOf(match), op)
	}
	switch lv.Kind() {
	case reflect.Slice, reflect.Array:
		out := reflect.MakeSlice(reflect.SliceOf(lv.Type().Elem()), 0, lv.Len())
		if lv.Kind() == reflect.Slice {
			out = reflect.MakeSlice(lv.Type(), 0, lv.Len())
		}
		for i := range lv.Len() {
			ok, err := test(lv.Index(i))
			if err != nil {
				return nil, fmt.Errorf("where: %w", err)
			}
			if ok {
				out = reflect.Append(out, lv.Index(i))
			}
		}
		return out.Interface(), nil
	case reflect.Map:
		out := reflect.MakeMap(lv.Type())
		iter := lv.MapRange()
		for iter.Next() {
			ok, err := test(iter.Value())
			if err != nil {
				return nil, fmt.Errorf("where: %w", err)
			}
			if ok {
				out.SetMapIndex(iter.Key(), iter.Value())
			}
		}
		return out.Interface(), nil
	}
	return nil, fmt.Errorf("where: cannot iterate over %T", list)
}

func knownOp(op string) bool {
	switch op {
	case "", "=", "==", "eq", "!=", "<>", "ne", ">=", "ge", ">", "gt", "<=", "le", "<", "lt", "in", "not in", "intersect", "like":
		return true
	}
	return false
}

// evalPath follows a path of field, method and map key names from v. A
// nil on the way ends in an invalid value, which matches nothing (or
// nil), as in Hugo.
func evalPath(v reflect.Value, path []string) (reflect.Value, error) {
	for _, name := range path {
		if !v.IsValid() {
			return v, nil
		}
		var err error
		v, err = evalName(v, name)
		if err != nil {
			return reflect.Value{}, err
		}
	}
	return v, nil
}

var errorType = reflect.TypeFor[error]()

// evalName gives the value of one name on v: a method without arguments
// (on v or, when v is addressable, its pointer), a struct field, or a map
// key (matched without regard to case when nothing matches exactly).
func evalName(v reflect.Value, name string) (reflect.Value, error) {
	for v.Kind() == reflect.Interface {
		if v.IsNil() {
			return reflect.Value{}, nil
		}
		v = v.Elem()
	}
	recv := v
	if recv.Kind() != reflect.Pointer && recv.CanAddr() {
		recv = recv.Addr()
	}
	if m := recv.MethodByName(name); m.IsValid() {
		if recv.Kind() == reflect.Pointer && recv.IsNil() {
			return reflect.Value{}, nil
		}
		mt := m.Type()
		if mt.NumIn() != 0 {
			return reflect.Value{}, fmt.Errorf("%s is a method of %s that needs arguments", name, v.Type())
		}
		switch {
		case mt.NumOut() == 1 && !mt.Out(0).Implements(errorType):
			return m.Call(nil)[0], nil
		case mt.NumOut() == 2 && mt.Out(1).Implements(errorType):
			out := m.Call(nil)
			if !out[1].IsNil() {
				return reflect.Value{}, fmt.Errorf("calling %s: %w", name, out[1].Interface().(error))
			}
			return out[0], nil
		}
		return reflect.Value{}, fmt.Errorf("%s is a method of %s that returns no single value", name, v.Type())
	}
	v, isNil := indirect(v)
	if isNil {
		return reflect.Value{}, nil
	}
	switch v.Kind() {
	case reflect.Struct:
		f, ok := v.Type().FieldByName(name)
		if !ok {
			return reflect.Value{}, fmt.Errorf("%s is not a field or method of %s", name, v.Type())
		}
		if !f.IsExported() {
			return reflect.Value{}, fmt.Errorf("%s is an unexported field of %s", name, v.Type())
		}
		return v.FieldByIndex(f.Index), nil
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return reflect.Value{}, fmt.Errorf("%s is not a key of %s", name, v.Type())
		}
		return mapIndex(v, name)
	}
	return reflect.Value{}, fmt.Errorf("%s is neither a field, a method nor a map key of %s", name, v.Type())
}

// whereMatch applies where's operator to an item's value v and the value
// given, mv.
func (e *env) whereMatch(v, mv reflect.Value, op string) (bool, error) {
	var vNil, mvNil bool
	v, vNil = indirect(v)
	mv, mvNil = indirect(mv)
	vNil = vNil || !v.IsValid()
	mvNil = mvNil || !mv.IsValid()
	isEqOp := op == "" || op == "=" || op == "==" || op == "eq"
	isNeOp := op == "!=" || op == "<>" || op == "ne"
	if vNil || mvNil {
		switch {
		case isEqOp:
			return vNil == mvNil, nil
		case isNeOp:
			return vNil != mvNil, nil
		case op == "not in":
			return !vNil && mvNil, nil
		}
		return false, nil
	}
	a, b := v.Interface(), mv.Interface()
	switch {
	case isEqOp, isNeOp:
		if isList(v) || isList(mv) {
			eq := reflect.DeepEqual(a, b)
			return eq == isEqOp, nil
		}
		// Only like with like: a number never equals text.
		eq := equal(a, normalizeForEq(a), b)
		return eq == isEqOp, nil
	case op == "in" || op == "not in":
		var in bool
		if isList(mv) {
			in, _ = (&Collections{}).In(b, a)
		} else if mv.Kind() == reflect.String && v.Kind() == reflect.String {
			in = strings.Contains(mv.String(), v.String())
		}
		return in == (op == "in"), nil
	case op == "intersect":
		if !isList(v) || !isList(mv) {
			return false, nil
		}
		r, err := (&Collections{}).Intersect(a, b)
		if err != nil {
			return false, err
		}
		return reflect.ValueOf(r).Len() > 0, nil
	case op == "like":
		if v.Kind() != reflect.String || mv.Kind() != reflect.String {
			return false, nil
		}
		re, err := e.compileRE(mv.String())
		if err != nil {
			return false, err
		}
		return re.MatchString(v.String()), nil
	}
	// Ordering: numbers with numbers, text with text, times with times.
	switch {
	case isNumberKind(v.Kind()) && isNumberKind(mv.Kind()):
	case v.Kind() == reflect.String && mv.Kind() == reflect.String:
	case v.Type() == mv.Type() && v.Kind() == reflect.Struct:
	default:
		return false, nil
	}
	var l, r float64
	if v.Kind() == reflect.String {
		l, r = strOrder(v.String(), mv.String())
	} else {
		l, r = comparable2(a, b)
	}
	switch op {
	case ">=", "ge":
		return l >= r, nil
	case ">", "gt":
		return l > r, nil
	case "<=", "le":
		return l <= r, nil
	case "<", "lt":
		return l < r, nil
	}
	return false, nil
}
