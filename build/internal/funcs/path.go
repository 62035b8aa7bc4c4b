package funcs

import (
	"fmt"
	"path"
	"reflect"
	"strings"
)

// Path is the path namespace: slash-separated paths, as in URLs.
type Path struct{}

func pathArg(fn string, v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", fn, err)
	}
	return strings.ReplaceAll(s, "\\", "/"), nil
}

// Base is the last element of a path.
func (*Path) Base(v any) (string, error) {
	s, err := pathArg("path.Base", v)
	return path.Base(s), err
}

// BaseName is the last element without its extension.
func (*Path) BaseName(v any) (string, error) {
	s, err := pathArg("path.BaseName", v)
	b := path.Base(s)
	return strings.TrimSuffix(b, path.Ext(b)), err
}

// Clean is the shortest equivalent path.
func (*Path) Clean(v any) (string, error) {
	s, err := pathArg("path.Clean", v)
	return path.Clean(s), err
}

// Dir is all but the last element.
func (*Path) Dir(v any) (string, error) {
	s, err := pathArg("path.Dir", v)
	return path.Dir(s), err
}

// Ext is the extension, with its dot.
func (*Path) Ext(v any) (string, error) {
	s, err := pathArg("path.Ext", v)
	return path.Ext(s), err
}

// Join joins elements (and lists of them) with slashes.
func (*Path) Join(elements ...any) (string, error) {
	var parts []string
	for _, e := range elements {
		ss, err := toStringSlice(e)
		if err != nil {
			return "", fmt.Errorf("path.Join: %w", err)
		}
		parts = append(parts, ss...)
	}
	return path.Join(parts...), nil
}

// DirFile is a path split in its directory and file.
type DirFile struct{ Dir, File string }

func (df DirFile) String() string { return df.Dir + "|" + df.File }

// Split splits a path after its last slash.
func (*Path) Split(v any) (DirFile, error) {
	s, err := pathArg("path.Split", v)
	d, f := path.Split(s)
	return DirFile{Dir: d, File: f}, err
}

// Reflect is the reflect namespace.
type Reflect struct{}

// IsMap reports whether v is a map.
func (*Reflect) IsMap(v any) bool {
	rv, isNil := indirect(reflect.ValueOf(v))
	return !isNil && rv.IsValid() && rv.Kind() == reflect.Map
}

// IsSlice reports whether v is a list.
func (*Reflect) IsSlice(v any) bool {
	rv, isNil := indirect(reflect.ValueOf(v))
	return !isNil && isList(rv)
}
