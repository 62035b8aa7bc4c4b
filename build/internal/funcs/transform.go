package funcs

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"html/template"
	"strings"
	"unicode"

	"github.com/goccy/go-yaml"
	"github.com/pelletier/go-toml/v2"
)

// Transform is the transform namespace: Markdown to HTML, HTML to text,
// escaping, emoji and data.
type Transform struct{ e *env }

// Markdownify renders Markdown to HTML; a text of one paragraph comes out
// without its <p>, so that it fits inline (in a heading, a link).
func (t *Transform) Markdownify(v any) (template.HTML, error) {
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("markdownify: %w", err)
	}
	if t.e.opts.Markdown == nil {
		return "", errors.New("markdownify: the build has no Markdown renderer")
	}
	out, err := t.e.opts.Markdown(s)
	if err != nil {
		return "", fmt.Errorf("markdownify: %w", err)
	}
	return template.HTML(trimShortHTML(out)), nil
}

func trimShortHTML(s string) string {
	if strings.Count(s, "<p>") != 1 {
		return s
	}
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "<p>") && strings.HasSuffix(t, "</p>") {
		return strings.TrimSpace(t[len("<p>") : len(t)-len("</p>")])
	}
	return s
}

// Plainify removes the HTML tags from s. Entities stay as they are, so the
// result is HTML (text without tags).
func (*Transform) Plainify(v any) (template.HTML, error) {
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("plainify: %w", err)
	}
	return template.HTML(stripHTML(s)), nil
}

// stripHTML removes tags and comments, turns the ends of paragraphs and
// line breaks into newlines and other newlines into spaces, and folds
// runs of space into one, as Hugo's plainify does.
func stripHTML(s string) string {
	if !strings.ContainsAny(s, "<>") {
		return s
	}
	const nl = "\x00"
	s = strings.NewReplacer("\n", " ", "</p>", nl, "<br>", nl, "<br />", nl, "<br/>", nl).Replace(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c == '<' && i+1 < len(s) {
			next := s[i+1]
			if strings.HasPrefix(s[i:], "<!--") {
				end := strings.Index(s[i+4:], "-->")
				if end < 0 {
					break
				}
				i += 4 + end + 3
				continue
			}
			if next == '/' || next == '!' || next == '?' || isASCIILetter(next) {
				j := i + 1
				var quote byte
				for ; j < len(s); j++ {
					switch {
					case quote != 0:
						if s[j] == quote {
							quote = 0
						}
					case s[j] == '"' || s[j] == '\'':
						quote = s[j]
					case s[j] == '>':
						goto done
					}
				}
			done:
				i = j + 1
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	out := strings.ReplaceAll(b.String(), nl, "\n")
	var f strings.Builder
	wasSpace := false
	for _, r := range out {
		isSpace := unicode.IsSpace(r)
		if !(isSpace && wasSpace) {
			f.WriteRune(r)
		}
		wasSpace = isSpace
	}
	return f.String()
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// HTMLEscape escapes <, >, &, ' and ". The result is plain text, which
// the template escapes once more where it prints it, as in Hugo.
func (*Transform) HTMLEscape(v any) (string, error) {
	s, err := toString(v)
	return html.EscapeString(s), err
}

// HTMLUnescape turns entities into the characters they stand for.
func (*Transform) HTMLUnescape(v any) (string, error) {
	s, err := toString(v)
	return html.UnescapeString(s), err
}

// XMLEscape escapes text for XML, dropping the characters XML forbids.
func (*Transform) XMLEscape(v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", err
	}
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF {
			return r
		}
		return -1
	}, s)
	return html.EscapeString(s), nil
}

// Emojify replaces emoji codes (:smile:) by the emoji. Codes it does not
// know are left as they are.
func (*Transform) Emojify(v any) (template.HTML, error) {
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("emojify: %w", err)
	}
	if !strings.Contains(s, ":") {
		return template.HTML(s), nil
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, ':')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+1:], ':')
		if j < 0 {
			break
		}
		code := s[i+1 : i+1+j]
		if e, ok := emoji[code]; ok {
			b.WriteString(s[:i])
			b.WriteString(e)
			s = s[i+j+2:]
			continue
		}
		b.WriteString(s[:i+1])
		s = s[i+1:]
	}
	b.WriteString(s)
	return template.HTML(b.String()), nil
}

// Highlight prints code in Hugo's markup for highlighted code, without
// the colours: there is no highlighter. Options are accepted and ignored.
func (*Transform) Highlight(code any, args ...any) (template.HTML, error) {
	s, err := toString(code)
	if err != nil {
		return "", fmt.Errorf("highlight: %w", err)
	}
	lang := ""
	if len(args) > 0 {
		lang, _ = toString(args[0])
	}
	var b strings.Builder
	b.WriteString(`<div class="highlight"><pre tabindex="0"><code`)
	if lang != "" {
		b.WriteString(` class="language-` + html.EscapeString(lang) + `" data-lang="` + html.EscapeString(lang) + `"`)
	}
	b.WriteString(">")
	b.WriteString(html.EscapeString(s))
	b.WriteString("</code></pre></div>")
	return template.HTML(b.String()), nil
}

// Unmarshal parses JSON, TOML or YAML (a resource, or text whose format
// is guessed from its first characters) into maps and lists.
func (*Transform) Unmarshal(args ...any) (any, error) {
	if len(args) < 1 || len(args) > 2 {
		return nil, errors.New("unmarshal: want data and at most options")
	}
	data := args[len(args)-1]
	format := ""
	var src string
	if r, ok := data.(*Resource); ok {
		c, err := r.Content()
		if err != nil {
			return nil, fmt.Errorf("unmarshal: %w", err)
		}
		src = c
		format = strings.TrimPrefix(strings.ToLower(pathExt(r.name)), ".")
	} else {
		s, err := toString(data)
		if err != nil {
			return nil, fmt.Errorf("unmarshal: %w", err)
		}
		src = s
	}
	if format == "" {
		format = guessFormat(src)
	}
	var out any
	var err error
	switch format {
	case "json":
		d := json.NewDecoder(strings.NewReader(src))
		err = d.Decode(&out)
	case "toml":
		m := map[string]any{}
		err = toml.Unmarshal([]byte(src), &m)
		out = m
	case "yaml", "yml":
		err = yaml.Unmarshal([]byte(src), &out)
	default:
		return nil, fmt.Errorf("unmarshal: format %q is not supported", format)
	}
	if err != nil {
		return nil, fmt.Errorf("unmarshal: %s: %w", format, err)
	}
	return out, nil
}

func guessFormat(s string) string {
	t := strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(t, "{") || strings.HasPrefix(t, "["):
		if json.Valid([]byte(t)) {
			return "json"
		}
	}
	first, _, _ := strings.Cut(t, "\n")
	if strings.HasPrefix(first, "[") || strings.Contains(first, " = ") || strings.Contains(first, "=\"") {
		return "toml"
	}
	return "yaml"
}

func pathExt(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || strings.ContainsRune(name[i:], '/') {
		return ""
	}
	return name[i:]
}

// emoji are the codes emojify knows: the common ones of GitHub's list.
var emoji = map[string]string{
	"+1": "👍", "-1": "👎", "100": "💯", "beer": "🍺", "bug": "🐛", "heart": "❤️",
	"blush": "😊", "book": "📖", "books": "📚", "bulb": "💡", "calendar": "📆",
	"check": "✔️", "clap": "👏", "coffee": "☕", "cool": "🆒", "cry": "😢",
	"email": "📧", "eyes": "👀", "fire": "🔥", "gift": "🎁", "globe_with_meridians": "🌐",
	"grin": "😁", "grinning": "😀", "heavy_check_mark": "✔️", "house": "🏠",
	"hourglass": "⌛", "info": "ℹ️", "joy": "😂", "key": "🔑", "laughing": "😆",
	"link": "🔗", "lock": "🔒", "mag": "🔍", "memo": "📝", "moon": "🌔", "muscle": "💪",
	"ok_hand": "👌", "pencil": "📝", "pencil2": "✏️", "point_right": "👉", "pray": "🙏",
	"rainbow": "🌈", "rocket": "🚀", "see_no_evil": "🙈", "smile": "😄", "smiley": "😃",
	"sparkles": "✨", "star": "⭐", "sunny": "☀️", "sweat_smile": "😅", "tada": "🎉",
	"thinking": "🤔", "thumbsup": "👍", "thumbsdown": "👎", "warning": "⚠️",
	"wave": "👋", "white_check_mark": "✅", "wink": "😉", "x": "❌", "zap": "⚡",
	"earth_africa": "🌍", "earth_americas": "🌎", "earth_asia": "🌏", "computer": "💻",
	"construction": "🚧", "package": "📦", "wrench": "🔧", "hammer": "🔨", "bell": "🔔",
	"bookmark": "🔖", "chart_with_upwards_trend": "📈", "sun_with_face": "🌞",
	"slightly_smiling_face": "🙂", "heart_eyes": "😍", "sob": "😭", "cat": "🐱", "dog": "🐶",
}
