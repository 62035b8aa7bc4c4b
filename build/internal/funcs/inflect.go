package funcs

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Inflect is the inflect namespace: English words made readable, plural
// or singular.
type Inflect struct{}

// Humanize turns an identifier into words ("my-first-post" and
// "myFirstPost" both give "My first post") and a number into an ordinal
// ("52" gives "52nd").
func (*Inflect) Humanize(v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("humanize: %w", err)
	}
	if s == "" {
		return "", nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return s + ordinalSuffix(n), nil
	}
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '-' || r == '_' || unicode.IsSpace(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	out := strings.Join(words, " ")
	if out == "" {
		return "", nil
	}
	r := []rune(out)
	r[0] = unicode.ToUpper(r[0])
	return string(r), nil
}

func ordinalSuffix(n int64) string {
	if n < 0 {
		n = -n
	}
	switch n % 100 {
	case 11, 12, 13:
		return "th"
	}
	switch n % 10 {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}

var (
	irregularPlural = map[string]string{
		"person": "people", "man": "men", "woman": "women", "child": "children",
		"tooth": "teeth", "foot": "feet", "mouse": "mice", "goose": "geese",
		"ox": "oxen", "leaf": "leaves", "life": "lives", "knife": "knives",
		"wife": "wives", "half": "halves", "self": "selves", "elf": "elves",
		"wolf": "wolves", "shelf": "shelves", "calf": "calves", "loaf": "loaves",
		"thief": "thieves", "criterion": "criteria", "phenomenon": "phenomena",
		"datum": "data", "medium": "media", "index": "indices", "matrix": "matrices",
		"vertex": "vertices", "analysis": "analyses", "thesis": "theses",
		"crisis": "crises", "axis": "axes", "quiz": "quizzes", "octopus": "octopi",
		"virus": "viruses", "cactus": "cacti", "focus": "foci", "radius": "radii",
		"alumnus": "alumni", "syllabus": "syllabi", "potato": "potatoes",
		"tomato": "tomatoes", "hero": "heroes", "echo": "echoes", "move": "moves",
	}
	irregularSingular = func() map[string]string {
		m := map[string]string{}
		for s, p := range irregularPlural {
			m[p] = s
		}
		return m
	}()
	uncountable = map[string]bool{
		"equipment": true, "information": true, "rice": true, "money": true,
		"species": true, "series": true, "fish": true, "sheep": true, "deer": true,
		"news": true, "jeans": true, "police": true, "moose": true, "aircraft": true,
	}
)

// matchCase gives w the case of model: all upper, first upper or as is.
func matchCase(model, w string) string {
	switch {
	case model == strings.ToUpper(model) && len(model) > 1:
		return strings.ToUpper(w)
	case model != "" && unicode.IsUpper([]rune(model)[0]):
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		return string(r)
	}
	return w
}

// Pluralize gives the plural of an English word.
func (*Inflect) Pluralize(v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("pluralize: %w", err)
	}
	w := strings.ToLower(s)
	if w == "" || uncountable[w] {
		return s, nil
	}
	if p, ok := irregularPlural[w]; ok {
		return matchCase(s, p), nil
	}
	if _, ok := irregularSingular[w]; ok {
		return s, nil
	}
	var p string
	switch {
	case hasAnySuffix(w, "s", "x", "z", "ch", "sh"):
		p = w + "es"
	case strings.HasSuffix(w, "y") && len(w) > 1 && !strings.ContainsRune("aeiou", rune(w[len(w)-2])):
		p = w[:len(w)-1] + "ies"
	default:
		p = w + "s"
	}
	return matchCase(s, p), nil
}

// Singularize gives the singular of an English word.
func (*Inflect) Singularize(v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("singularize: %w", err)
	}
	w := strings.ToLower(s)
	if w == "" || uncountable[w] {
		return s, nil
	}
	if p, ok := irregularSingular[w]; ok {
		return matchCase(s, p), nil
	}
	if _, ok := irregularPlural[w]; ok {
		return s, nil
	}
	var p string
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 3:
		p = w[:len(w)-3] + "y"
	case hasAnySuffix(w, "sses", "xes", "zzes", "ches", "shes"):
		p = w[:len(w)-2]
	case strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") || strings.HasSuffix(w, "is"):
		p = w
	case strings.HasSuffix(w, "s"):
		p = w[:len(w)-1]
	default:
		p = w
	}
	return matchCase(s, p), nil
}

func hasAnySuffix(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}
