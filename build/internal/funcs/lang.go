package funcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/goccy/go-yaml"
	"github.com/pelletier/go-toml/v2"
)

// Translations are a site's i18n tables: by language code (lower case),
// by message id, by plural form ("one", "other", ...) the text, a Go
// template that may use .Count and the data passed to T.
type Translations map[string]map[string]map[string]string

// LoadI18n reads the i18n directories of a site, the first given winning
// message by message (the site's own, then its theme's): every
// LANG.toml, LANG.yaml, LANG.yml and LANG.json in each, in the forms Hugo
// reads (id = "text"; [id] one = "..." other = "..."; a list of {id,
// translation}).
func LoadI18n(dirs ...fs.FS) (Translations, error) {
	out := Translations{}
	for _, dir := range dirs {
		if dir == nil {
			continue
		}
		entries, err := fs.ReadDir(dir, ".")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("i18n: %w", err)
		}
		for _, e := range entries {
			ext := path.Ext(e.Name())
			if e.IsDir() || (ext != ".toml" && ext != ".yaml" && ext != ".yml" && ext != ".json") {
				continue
			}
			b, err := fs.ReadFile(dir, e.Name())
			if err != nil {
				return nil, fmt.Errorf("i18n: %w", err)
			}
			msgs, err := parseI18n(ext, b)
			if err != nil {
				return nil, fmt.Errorf("i18n/%s: %w", e.Name(), err)
			}
			lang := strings.ToLower(strings.TrimSuffix(e.Name(), ext))
			if out[lang] == nil {
				out[lang] = map[string]map[string]string{}
			}
			for id, forms := range msgs {
				if _, have := out[lang][id]; !have {
					out[lang][id] = forms
				}
			}
		}
	}
	return out, nil
}

func parseI18n(ext string, b []byte) (map[string]map[string]string, error) {
	var raw any
	var err error
	switch ext {
	case ".toml":
		m := map[string]any{}
		err = toml.Unmarshal(b, &m)
		raw = m
	case ".json":
		err = json.Unmarshal(b, &raw)
	default:
		err = yaml.Unmarshal(b, &raw)
	}
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	var add func(id string, v any) error
	add = func(id string, v any) error {
		switch x := v.(type) {
		case string:
			out[id] = map[string]string{"other": x}
		case map[string]any:
			if !isMessage(x) {
				// A table of messages: its keys extend the id, as
				// go-i18n reads [posts.title] as "posts.title".
				for k, sub := range x {
					if err := add(id+"."+strings.ToLower(k), sub); err != nil {
						return err
					}
				}
				return nil
			}
			forms := map[string]string{}
			for k, f := range x {
				k = strings.ToLower(k)
				if k == "translation" {
					if s, ok := f.(string); ok {
						forms["other"] = s
						continue
					}
					if m, ok := f.(map[string]any); ok {
						for pk, pv := range m {
							forms[strings.ToLower(pk)], _ = toString(pv)
						}
						continue
					}
				}
				if !pluralForms[k] {
					continue // id, description, hash
				}
				s, err := toString(f)
				if err != nil {
					return fmt.Errorf("message %q: %w", id, err)
				}
				forms[k] = s
			}
			out[id] = forms
		default:
			return fmt.Errorf("message %q: want text or a table of plural forms, got %T", id, v)
		}
		return nil
	}
	switch x := raw.(type) {
	case map[string]any:
		for id, v := range x {
			if err := add(strings.ToLower(id), v); err != nil {
				return nil, err
			}
		}
	case []any:
		for _, item := range x {
			m, ok := item.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("want a list of {id, translation}, got %T", item)
			}
			id, _ := m["id"].(string)
			if id == "" {
				return nil, errors.New("a message without an id")
			}
			if err := add(strings.ToLower(id), m); err != nil {
				return nil, err
			}
		}
	case nil:
	default:
		return nil, fmt.Errorf("want a table of messages, got %T", raw)
	}
	return out, nil
}

var pluralForms = map[string]bool{"zero": true, "one": true, "two": true, "few": true, "many": true, "other": true}

// isMessage tells a message (a table with plural forms or go-i18n's
// fields) from a table of messages.
func isMessage(m map[string]any) bool {
	for k := range m {
		switch strings.ToLower(k) {
		case "zero", "one", "two", "few", "many", "other", "translation", "id", "description", "hash":
			return true
		}
	}
	return false
}

// Lang is the lang namespace: translations (i18n, T) and numbers.
type Lang struct {
	e     *env
	cache sync.Map // message text -> *template.Template
}

// Translate returns the message id in the site's language (falling back
// to the default language), with the data given: a number is .Count (and
// chooses the plural form), a map is the dot. A message no table has is
// empty, as in Hugo.
func (l *Lang) Translate(id any, args ...any) (string, error) {
	key, err := toString(id)
	if err != nil {
		return "", fmt.Errorf("i18n: %w", err)
	}
	key = strings.ToLower(key)
	var data any
	if len(args) > 0 {
		data = args[0]
	}
	forms := l.lookup(key)
	if forms == nil {
		return "", nil
	}
	count, hasCount := countOf(data)
	form := "other"
	if hasCount {
		form = pluralForm(count)
	}
	text, ok := forms[form]
	if !ok {
		text = forms["other"]
	}
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	t, err := l.parse(text)
	if err != nil {
		return "", fmt.Errorf("i18n %q: %w", key, err)
	}
	dot := data
	if hasCount {
		if _, isMap := data.(map[string]any); !isMap {
			dot = map[string]any{"Count": data}
		}
	}
	var b bytes.Buffer
	if err := t.Execute(&b, dot); err != nil {
		return "", fmt.Errorf("i18n %q: %w", key, err)
	}
	return b.String(), nil
}

func (l *Lang) lookup(key string) map[string]string {
	tables := l.e.opts.I18n
	langs := []string{l.e.opts.Language, l.e.opts.DefaultLanguage, "en"}
	for _, lang := range langs {
		lang = strings.ToLower(lang)
		if lang == "" {
			continue
		}
		// "en-us" falls back to "en", as Hugo's language codes do.
		for _, code := range []string{lang, strings.SplitN(lang, "-", 2)[0]} {
			if f, ok := tables[code][key]; ok {
				return f
			}
		}
	}
	return nil
}

func (l *Lang) parse(text string) (*template.Template, error) {
	if t, ok := l.cache.Load(text); ok {
		return t.(*template.Template), nil
	}
	t, err := template.New("i18n").Option("missingkey=zero").Parse(text)
	if err != nil {
		return nil, err
	}
	l.cache.Store(text, t)
	return t, nil
}

// countOf gives the count a translation's data carries: the data itself
// when a number, its Count (or count) when a map.
func countOf(data any) (float64, bool) {
	switch x := data.(type) {
	case nil:
		return 0, false
	case map[string]any:
		for _, k := range []string{"Count", "count"} {
			if c, ok := x[k]; ok {
				f, err := toFloat(c)
				return f, err == nil
			}
		}
		return 0, false
	case string:
		f, err := toFloat(x)
		return f, err == nil
	}
	f, err := toFloat(data)
	return f, err == nil
}

// pluralForm is English's rule, which most sites' languages share: one
// for exactly 1, other otherwise.
func pluralForm(n float64) string {
	if n == 1 {
		return "one"
	}
	return "other"
}

// FormatNumber formats a number with the given decimals in the site's
// language, which is English here: 12,345.68.
func (l *Lang) FormatNumber(decimals, v any) (string, error) {
	return l.FormatNumberCustom(decimals, v)
}

// FormatPercent is FormatNumber with a percent sign: 12.50%.
func (l *Lang) FormatPercent(decimals, v any) (string, error) {
	s, err := l.FormatNumber(decimals, v)
	return s + "%", err
}

// FormatNumberCustom formats a number with the given decimals and, when
// given, options "MINUS DECIMAL GROUPING" (separated by spaces, or by
// the delimiter given last): lang.FormatNumberCustom 2 12345.6789 "- , ."
// is 12.345,68.
func (*Lang) FormatNumberCustom(decimals, v any, options ...any) (string, error) {
	d, err := toInt(decimals)
	if err != nil || d < 0 || d > 20 {
		return "", fmt.Errorf("lang.FormatNumberCustom: bad number of decimals %v", decimals)
	}
	f, err := toFloat(v)
	if err != nil {
		return "", fmt.Errorf("lang.FormatNumberCustom: %w", err)
	}
	minus, point, group := "-", ".", ","
	if len(options) > 0 {
		o, err := toString(options[0])
		if err != nil {
			return "", fmt.Errorf("lang.FormatNumberCustom: %w", err)
		}
		delim := " "
		if len(options) > 1 {
			if delim, err = toString(options[1]); err != nil {
				return "", fmt.Errorf("lang.FormatNumberCustom: %w", err)
			}
		}
		parts := strings.Split(o, delim)
		if len(parts) > 0 {
			minus = parts[0]
		}
		if len(parts) > 1 {
			point = parts[1]
		}
		group = ""
		if len(parts) > 2 {
			group = parts[2]
		}
	}
	s := strconv.FormatFloat(math.Abs(f), 'f', d, 64)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if f < 0 && strings.Trim(s, "0.") != "" {
		b.WriteString(minus)
	}
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteString(group)
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteString(point)
		b.WriteString(frac)
	}
	return b.String(), nil
}
