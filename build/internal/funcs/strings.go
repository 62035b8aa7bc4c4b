package funcs

import (
	"errors"
	"fmt"
	"html"
	"html/template"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Strings is the strings namespace. Arguments are converted to text as
// Hugo does, so numbers and safe HTML are accepted where text is.
type Strings struct{ e *env }

func str2(fn string, a, b any) (string, string, error) {
	x, err := toString(a)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", fn, err)
	}
	y, err := toString(b)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", fn, err)
	}
	return x, y, nil
}

// Chomp removes trailing newlines (\n and \r\n).
func (*Strings) Chomp(s any) (any, error) {
	t, err := toString(s)
	if err != nil {
		return "", fmt.Errorf("chomp: %w", err)
	}
	out := strings.TrimRight(t, "\r\n")
	if _, ok := s.(template.HTML); ok {
		return template.HTML(out), nil
	}
	return out, nil
}

// Contains reports whether s contains sub.
func (*Strings) Contains(s, sub any) (bool, error) {
	a, b, err := str2("strings.Contains", s, sub)
	return strings.Contains(a, b), err
}

// ContainsAny reports whether s contains any of the characters in chars.
func (*Strings) ContainsAny(s, chars any) (bool, error) {
	a, b, err := str2("strings.ContainsAny", s, chars)
	return strings.ContainsAny(a, b), err
}

// ContainsNonSpace reports whether s has a character that is not space.
func (*Strings) ContainsNonSpace(s any) (bool, error) {
	t, err := toString(s)
	return strings.IndexFunc(t, func(r rune) bool { return !unicode.IsSpace(r) }) >= 0, err
}

// Count counts the non-overlapping occurrences of sub in s.
func (*Strings) Count(sub, s any) (int, error) {
	a, b, err := str2("strings.Count", sub, s)
	return strings.Count(b, a), err
}

// CountRunes counts the characters of s that are not space (HTML tags
// removed).
func (*Strings) CountRunes(s any) (int, error) {
	t, err := toString(s)
	if err != nil {
		return 0, fmt.Errorf("countrunes: %w", err)
	}
	n := 0
	for _, r := range stripHTML(t) {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n, nil
}

// RuneCount counts the characters of s.
func (*Strings) RuneCount(s any) (int, error) {
	t, err := toString(s)
	return utf8.RuneCountInString(t), err
}

// CountWords counts the words of s (HTML tags removed).
func (*Strings) CountWords(s any) (int, error) {
	t, err := toString(s)
	if err != nil {
		return 0, fmt.Errorf("countwords: %w", err)
	}
	return len(strings.Fields(stripHTML(t))), nil
}

// FindRE returns the matches of the regular expression in s, at most
// limit of them when limit is given and not negative.
func (ns *Strings) FindRE(expr string, s any, limit ...any) ([]string, error) {
	re, err := ns.e.compileRE(expr)
	if err != nil {
		return nil, fmt.Errorf("findRE: %w", err)
	}
	t, err := toString(s)
	if err != nil {
		return nil, fmt.Errorf("findRE: %w", err)
	}
	n := -1
	if len(limit) > 0 {
		if n, err = toInt(limit[0]); err != nil {
			return nil, fmt.Errorf("findRE: %w", err)
		}
	}
	out := re.FindAllString(t, n)
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// FindRESubmatch returns the matches and their groups.
func (ns *Strings) FindRESubmatch(expr string, s any, limit ...any) ([][]string, error) {
	re, err := ns.e.compileRE(expr)
	if err != nil {
		return nil, fmt.Errorf("findRESubmatch: %w", err)
	}
	t, err := toString(s)
	if err != nil {
		return nil, fmt.Errorf("findRESubmatch: %w", err)
	}
	n := -1
	if len(limit) > 0 {
		if n, err = toInt(limit[0]); err != nil {
			return nil, fmt.Errorf("findRESubmatch: %w", err)
		}
	}
	out := re.FindAllStringSubmatch(t, n)
	if out == nil {
		out = [][]string{}
	}
	return out, nil
}

// FirstUpper makes the first character upper case.
func (*Strings) FirstUpper(s any) (string, error) {
	t, err := toString(s)
	if err != nil || t == "" {
		return t, err
	}
	r, n := utf8.DecodeRuneInString(t)
	return string(unicode.ToUpper(r)) + t[n:], nil
}

// HasPrefix reports whether s begins with prefix.
func (*Strings) HasPrefix(s, prefix any) (bool, error) {
	a, b, err := str2("hasPrefix", s, prefix)
	return strings.HasPrefix(a, b), err
}

// HasSuffix reports whether s ends with suffix.
func (*Strings) HasSuffix(s, suffix any) (bool, error) {
	a, b, err := str2("hasSuffix", s, suffix)
	return strings.HasSuffix(a, b), err
}

// Repeat repeats s n times.
func (*Strings) Repeat(n, s any) (string, error) {
	t, err := toString(s)
	if err != nil {
		return "", fmt.Errorf("strings.Repeat: %w", err)
	}
	k, err := toInt(n)
	if err != nil {
		return "", fmt.Errorf("strings.Repeat: %w", err)
	}
	if k < 0 {
		return "", errors.New("strings.Repeat: the count must not be negative")
	}
	if len(t)*k > 1<<24 {
		return "", errors.New("strings.Repeat: the result would be over 16 MiB")
	}
	return strings.Repeat(t, k), nil
}

// Replace replaces old by new in s, all of them or the first limit.
func (*Strings) Replace(s, old, new any, limit ...any) (string, error) {
	t, err := toString(s)
	if err != nil {
		return "", fmt.Errorf("replace: %w", err)
	}
	o, n, err := str2("replace", old, new)
	if err != nil {
		return "", err
	}
	k := -1
	if len(limit) > 0 {
		if k, err = toInt(limit[0]); err != nil {
			return "", fmt.Errorf("replace: %w", err)
		}
	}
	return strings.Replace(t, o, n, k), nil
}

// ReplacePairs replaces each old of old, new pairs by its new, in one pass.
func (*Strings) ReplacePairs(args ...any) (string, error) {
	if len(args) < 2 {
		return "", errors.New("strings.ReplacePairs: want pairs and a text")
	}
	s, err := toString(args[len(args)-1])
	if err != nil {
		return "", fmt.Errorf("strings.ReplacePairs: %w", err)
	}
	pairs, err := toStringSlice(args[:len(args)-1])
	if len(args) == 2 {
		pairs, err = toStringSlice(args[0])
	}
	if err != nil {
		return "", fmt.Errorf("strings.ReplacePairs: %w", err)
	}
	if len(pairs)%2 != 0 {
		return "", errors.New("strings.ReplacePairs: an odd number of replacements")
	}
	return strings.NewReplacer(pairs...).Replace(s), nil
}

// ReplaceRE replaces the matches of the regular expression in s by repl,
// in which $1 names a group; all of them or the first limit.
func (ns *Strings) ReplaceRE(expr, repl, s any, limit ...any) (string, error) {
	p, r, err := str2("replaceRE", expr, repl)
	if err != nil {
		return "", err
	}
	t, err := toString(s)
	if err != nil {
		return "", fmt.Errorf("replaceRE: %w", err)
	}
	re, err := ns.e.compileRE(p)
	if err != nil {
		return "", fmt.Errorf("replaceRE: %w", err)
	}
	k := -1
	if len(limit) > 0 {
		if k, err = toInt(limit[0]); err != nil {
			return "", fmt.Errorf("replaceRE: %w", err)
		}
	}
	var b []byte
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(t, k) {
		b = append(b, t[last:m[0]]...)
		b = re.ExpandString(b, r, t, m)
		last = m[1]
	}
	return string(append(b, t[last:]...)), nil
}

// SliceString returns the characters of s from start up to end.
func (*Strings) SliceString(s any, bounds ...any) (string, error) {
	t, err := toString(s)
	if err != nil {
		return "", fmt.Errorf("slicestr: %w", err)
	}
	if len(bounds) > 2 {
		return "", errors.New("slicestr: too many arguments")
	}
	r := []rune(t)
	start, end := 0, len(r)
	if len(bounds) > 0 {
		if start, err = toInt(bounds[0]); err != nil {
			return "", fmt.Errorf("slicestr: %w", err)
		}
	}
	if len(bounds) > 1 {
		if end, err = toInt(bounds[1]); err != nil {
			return "", fmt.Errorf("slicestr: %w", err)
		}
	}
	if start < 0 || end > len(r) || start > end {
		return "", errors.New("slicestr: slice bounds out of range")
	}
	return string(r[start:end]), nil
}

// Split splits s at each sep.
func (*Strings) Split(s, sep any) ([]string, error) {
	a, b, err := str2("split", s, sep)
	if err != nil {
		return nil, err
	}
	return strings.Split(a, b), nil
}

// Substr returns length characters of s from start; a negative start
// counts from the end, a negative length stops that many from the end.
func (*Strings) Substr(s any, nums ...any) (string, error) {
	t, err := toString(s)
	if err != nil {
		return "", fmt.Errorf("substr: %w", err)
	}
	r := []rune(t)
	n := len(r)
	start, length := 0, n
	if len(nums) > 2 {
		return "", errors.New("substr: too many arguments")
	}
	if len(nums) > 0 {
		if start, err = toInt(nums[0]); err != nil {
			return "", fmt.Errorf("substr: %w", err)
		}
	}
	if len(nums) > 1 {
		if length, err = toInt(nums[1]); err != nil {
			return "", fmt.Errorf("substr: %w", err)
		}
	}
	if start < 0 {
		start = max(n+start, 0)
	}
	if start >= n {
		return "", nil
	}
	end := start + length
	if length < 0 {
		end = n + length
	}
	end = min(end, n)
	if end <= start {
		return "", nil
	}
	return string(r[start:end]), nil
}

// smallWords stay lower case inside a title, in the Associated Press
// style that Hugo's title uses by default.
var smallWords = map[string]bool{
	"a": true, "an": true, "and": true, "as": true, "at": true, "but": true, "by": true,
	"en": true, "for": true, "if": true, "in": true, "nor": true, "of": true, "on": true,
	"or": true, "per": true, "so": true, "the": true, "to": true, "up": true, "via": true,
	"vs": true, "vs.": true, "yet": true,
}

// Title converts s to title case in the AP style: every word capitalized
// but the small ones (a, and, of, the, ...) that are neither first nor
// last.
func (*Strings) Title(s any) (string, error) {
	t, err := toString(s)
	if err != nil {
		return "", fmt.Errorf("title: %w", err)
	}
	words := strings.Fields(t)
	if len(words) == 0 {
		return t, nil
	}
	// Keep the original spacing: rewrite each word in place.
	var b strings.Builder
	wi := 0
	i := 0
	for i < len(t) {
		r, n := utf8.DecodeRuneInString(t[i:])
		if unicode.IsSpace(r) {
			b.WriteString(t[i : i+n])
			i += n
			continue
		}
		j := i
		for j < len(t) {
			r2, n2 := utf8.DecodeRuneInString(t[j:])
			if unicode.IsSpace(r2) {
				break
			}
			j += n2
		}
		w := t[i:j]
		if wi > 0 && wi < len(words)-1 && smallWords[strings.ToLower(w)] {
			b.WriteString(strings.ToLower(w))
		} else {
			b.WriteString(capitalize(w))
		}
		wi++
		i = j
	}
	return b.String(), nil
}

// capitalize upper-cases the first letter of each hyphenated part.
func capitalize(w string) string {
	parts := strings.Split(w, "-")
	for i, p := range parts {
		for j, r := range p {
			if unicode.IsLetter(r) {
				parts[i] = p[:j] + string(unicode.ToUpper(r)) + p[j+utf8.RuneLen(r):]
				break
			}
			if unicode.IsDigit(r) {
				break
			}
		}
	}
	return strings.Join(parts, "-")
}

// ToLower lower-cases s.
func (*Strings) ToLower(s any) (string, error) {
	t, err := toString(s)
	return strings.ToLower(t), err
}

// ToUpper upper-cases s.
func (*Strings) ToUpper(s any) (string, error) {
	t, err := toString(s)
	return strings.ToUpper(t), err
}

// Trim removes the characters of cutset from both ends of s.
func (*Strings) Trim(s, cutset any) (string, error) {
	a, b, err := str2("trim", s, cutset)
	return strings.Trim(a, b), err
}

// TrimLeft removes the characters of cutset from the start of s.
func (*Strings) TrimLeft(cutset, s any) (string, error) {
	a, b, err := str2("strings.TrimLeft", cutset, s)
	return strings.TrimLeft(b, a), err
}

// TrimRight removes the characters of cutset from the end of s.
func (*Strings) TrimRight(cutset, s any) (string, error) {
	a, b, err := str2("strings.TrimRight", cutset, s)
	return strings.TrimRight(b, a), err
}

// TrimPrefix removes prefix from the start of s, once.
func (*Strings) TrimPrefix(prefix, s any) (string, error) {
	a, b, err := str2("strings.TrimPrefix", prefix, s)
	return strings.TrimPrefix(b, a), err
}

// TrimSuffix removes suffix from the end of s, once.
func (*Strings) TrimSuffix(suffix, s any) (string, error) {
	a, b, err := str2("strings.TrimSuffix", suffix, s)
	return strings.TrimSuffix(b, a), err
}

// TrimSpace removes white space from both ends of s.
func (*Strings) TrimSpace(s any) (string, error) {
	t, err := toString(s)
	return strings.TrimSpace(t), err
}

// Truncate shortens s to at most n characters, cutting at a word's end
// and adding the ellipsis (" …" unless given). HTML (safeHTML) is cut in
// its text only, and the tags left open are closed. The result is HTML:
// plain text is escaped.
func (*Strings) Truncate(n any, args ...any) (template.HTML, error) {
	length, err := toInt(n)
	if err != nil {
		return "", fmt.Errorf("truncate: %w", err)
	}
	var in any
	ellipsis := " …"
	switch len(args) {
	case 0:
		return "", errors.New("truncate: want a length and a text")
	case 1:
		in = args[0]
	case 2:
		in = args[1]
		e, err := toString(args[0])
		if err != nil {
			return "", errors.New("truncate: the ellipsis must be text")
		}
		ellipsis = e
		if _, ok := args[0].(template.HTML); !ok {
			ellipsis = html.EscapeString(e)
		}
	default:
		return "", errors.New("truncate: too many arguments")
	}
	text, err := toString(in)
	if err != nil {
		return "", errors.New("truncate: the text must be text")
	}
	_, isHTML := in.(template.HTML)
	escape := func(s string) string {
		if isHTML {
			return s
		}
		return html.EscapeString(s)
	}
	if utf8.RuneCountInString(text) <= length {
		return template.HTML(escape(text)), nil
	}
	type tag struct {
		name string
		open bool
		pos  int
	}
	var tags []tag
	count := 0
	wordEnd := 0  // where the text may be cut: after the last whole word
	lastChar := 0 // just after the last character that is not space
	for i := 0; i < len(text); {
		if isHTML && text[i] == '<' {
			if m := tagRE.FindStringSubmatchIndex(text[i:]); m != nil {
				name := strings.Fields(text[i+m[4] : i+m[5]])[0]
				wordEnd = lastChar
				selfClosing := m[6] >= 0
				if !voidElements[name] && !selfClosing {
					tags = append(tags, tag{name: name, open: m[2] < 0, pos: i})
				}
				i += m[1]
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		count++
		switch {
		case unicode.IsSpace(r):
			wordEnd = lastChar
		case unicode.In(r, unicode.Han, unicode.Hangul, unicode.Hiragana, unicode.Katakana):
			// Each of these characters is a word of its own.
			wordEnd = lastChar
			lastChar = i + size
			if count <= length {
				wordEnd = lastChar
			}
		default:
			lastChar = i + size
		}
		if count > length {
			end := wordEnd
			if end == 0 {
				end = i
			}
			if !isHTML {
				return template.HTML(html.EscapeString(text[:end]) + ellipsis), nil
			}
			var b strings.Builder
			b.WriteString(text[:end])
			b.WriteString(ellipsis)
			// Close, innermost first, the tags opened before the cut
			// and not closed before it.
			var open []string
			for _, t := range tags {
				if t.pos >= end {
					break
				}
				if t.open {
					open = append(open, t.name)
				} else if k := lastIndex(open, t.name); k >= 0 {
					open = append(open[:k], open[k+1:]...)
				}
			}
			for k := len(open) - 1; k >= 0; k-- {
				b.WriteString("</" + open[k] + ">")
			}
			return template.HTML(b.String()), nil
		}
		i += size
	}
	return template.HTML(escape(text)), nil
}

func lastIndex(list []string, s string) int {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i] == s {
			return i
		}
	}
	return -1
}

var (
	tagRE         = regexp.MustCompile(`^<(/)?([^ >]+?)(?:(\s*/)| [^>]*?)?>`)
	voidElements  = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true, "input": true, "link": true, "meta": true, "param": true, "source": true, "track": true, "wbr": true}
	errRETooLarge = errors.New("regular expression too long")
)

// compileRE compiles a regular expression once per build; themes call
// replaceRE with one expression on every page.
func (e *env) compileRE(expr string) (*regexp.Regexp, error) {
	if re, ok := e.regexps.Load(expr); ok {
		return re.(*regexp.Regexp), nil
	}
	if len(expr) > 1<<16 {
		return nil, errRETooLarge
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	e.regexps.Store(expr, re)
	return re, nil
}
