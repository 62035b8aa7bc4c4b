package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	yamlast "github.com/goccy/go-yaml/ast"
	yamlparser "github.com/goccy/go-yaml/parser"
	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"golang.org/x/sync/errgroup"
)

// asset is a non-Markdown file in content/, copied as it is.
type asset struct{ rel, src string }

// loadContent reads content/ and assembles the site's pages (see
// assemble). Other files are copied as they are. A missing content/ is an
// empty site.
func loadContent(ctx context.Context, dir string, site *Site) ([]asset, error) {
	dir, err := contentRoot(dir)
	if err != nil {
		return nil, err
	}
	files, assets, err := walkContent(dir)
	if err != nil {
		return nil, err
	}
	co := contentOpts{md: newMarkdown(site.unsafeHTML), summaryLen: site.summaryLen, taxonomies: site.taxonomyList}
	pages, err := parsePages(ctx, dir, files, co)
	if err != nil {
		return nil, err
	}
	return assets, site.assemble(pages)
}

// contentRoot returns the directory to walk for content/ at dir: dir
// itself, or, when it is a symbolic link, what it links to. A content/
// that is not there is left to walkContent, which takes it for an empty
// site.
func contentRoot(dir string) (string, error) {
	// A content that is there but is not a directory is an error: a
	// regular file was walked as the site's one asset, named ".", which
	// failed as an "invalid output path".
	present, err := inputDir(dir, "content")
	if err != nil || !present {
		return dir, err
	}
	// WalkDir does not follow a root that is a link, which would make
	// a linked content/ an empty site without a word; links inside it
	// are refused by walkContent, as in static/.
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("content: %w", err)
	}
	return real, nil
}

// markdownExts are the extensions Markdown goes by. content/ renders only
// .md; the others are refused rather than published as they are.
var markdownExts = map[string]bool{".md": true, ".markdown": true, ".mdown": true, ".mkd": true, ".mkdn": true}

// walkContent lists the Markdown files (paths relative to dir, with
// slashes) and the assets under dir, in lexical order. Hidden files and
// directories are skipped; links and other non-regular files are errors,
// and so is Markdown under another extension than .md.
func walkContent(dir string) ([]string, []asset, error) {
	var files []string
	var assets []asset
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll // no content/: an empty site
			}
			return fmt.Errorf("read content: %w", err)
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return notFollowed("content/" + rel)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("content/%s: not a regular file", rel)
		}
		if ext := path.Ext(rel); ext != ".md" && markdownExts[strings.ToLower(ext)] {
			// Copied as an asset, its source (a draft's too) would be
			// published as is.
			return fmt.Errorf("content/%s: Markdown pages must end in .md (lower case): rename it, or it would be published as it is", rel)
		}
		if strings.HasSuffix(rel, ".md") {
			files = append(files, rel)
		} else {
			assets = append(assets, asset{rel: rel, src: p})
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return files, assets, nil
}

// parsePages reads and parses the Markdown files under dir, GOMAXPROCS at
// a time. The pages are in the order of files, whatever order they finish
// in. The first error is the one returned, and files not yet started then
// are not read.
func parsePages(ctx context.Context, dir string, files []string, co contentOpts) ([]*Page, error) {
	pages := make([]*Page, len(files))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, rel := range files {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
			if err != nil {
				return fmt.Errorf("read content: %w", err)
			}
			p, err := parsePage(rel, src, co)
			if le, ok := errors.AsType[*lineError](err); ok {
				return fmt.Errorf("content/%s:%d: %w", rel, le.line, le.err)
			}
			if err != nil {
				return fmt.Errorf("content/%s: %w", rel, err)
			}
			pages[i] = p
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return pages, nil
}

func newMarkdown(unsafe bool) goldmark.Markdown {
	ropts := []goldmark.Option{
		goldmark.WithExtensions(extension.GFM, extension.Footnote),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
	}
	if unsafe {
		ropts = append(ropts, goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	}
	return goldmark.New(ropts...)
}

// contentOpts is what parsing a page needs from the site's config.
type contentOpts struct {
	md         goldmark.Markdown
	summaryLen int
	taxonomies []taxonomyDef
}

// moreDivider ends a hand-made summary, as in Hugo.
var moreDivider = []byte("<!--more-->")

func parsePage(rel string, src []byte, co contentOpts) (*Page, error) {
	fm, body, err := splitFrontMatter(src)
	if err != nil {
		return nil, err
	}
	p := &Page{file: rel, params: map[string]any{}, terms: map[string][]string{}}
	if key, err := p.applyFrontMatter(fm, co.taxonomies); err != nil {
		if line := keyLine(src, key); line > 0 {
			return nil, &lineError{line: line, err: err}
		}
		return nil, err
	}
	// The Markdown is the site owner's; raw HTML in it was already dropped by
	// goldmark unless site.unsafe_html allows it.
	render := func(md []byte) (template.HTML, error) {
		var buf bytes.Buffer
		if err := co.md.Convert(md, &buf); err != nil {
			return "", fmt.Errorf("markdown: %w", err)
		}
		return template.HTML(buf.String()), nil
	}
	before, after, hasMore := bytes.Cut(body, moreDivider)
	if hasMore {
		body = append(append([]byte{}, before...), after...)
	}
	if p.content, err = render(body); err != nil {
		return nil, err
	}
	switch sum, _ := p.params["summary"].(string); {
	case hasMore:
		if p.summary, err = render(before); err != nil {
			return nil, err
		}
		p.truncated = len(bytes.TrimSpace(after)) > 0
	case sum != "":
		if p.summary, err = render([]byte(sum)); err != nil {
			return nil, err
		}
		p.truncated = true
	default:
		text, cut := wholeSentences(stripTags(string(p.content)), co.summaryLen)
		p.summary, p.truncated = template.HTML(text), cut
	}
	return p, nil
}

// stripTags is the text of HTML, entities left as they are (so that it
// is still HTML), every run of white space and every tag one space, so
// that words do not run together.
func stripTags(s string) string {
	var b strings.Builder
	b.Grow(len(s) / 2)
	inTag, space := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '<':
			inTag, space = true, true
		case c == '>' && inTag:
			inTag = false
		case inTag:
		case c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f':
			space = true
		default:
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteByte(c)
		}
	}
	return b.String()
}

// wholeSentences is Hugo's automatic summary: the first n words of text
// (words separated by single spaces, as stripTags gives), then on to the
// end of the sentence they stop in; cut says text was left out.
func wholeSentences(text string, n int) (string, bool) {
	words, end := 0, 0
	for end < len(text) {
		next := strings.IndexByte(text[end:], ' ')
		if next < 0 {
			next = len(text) - end
		}
		word := text[end : end+next]
		end += next
		words++
		if words >= n && word != "" && strings.ContainsAny(word[len(word)-1:], ".!?") {
			break
		}
		if end < len(text) {
			end++ // the space
		}
	}
	out := strings.TrimRight(text[:end], " ")
	return out, len(strings.TrimSpace(text[end:])) > 0
}

// splitFrontMatter separates YAML (---) or TOML (+++) front matter from the
// Markdown body and decodes it. No front matter is an empty map.
func splitFrontMatter(src []byte) (map[string]any, []byte, error) {
	delim, fmText, body, err := cutFrontMatter(src)
	if err != nil || delim == "" {
		return map[string]any{}, body, err
	}
	m := map[string]any{}
	if len(bytes.TrimSpace(fmText)) > 0 {
		var err error
		if delim == "---" {
			err = yaml.Unmarshal(fmText, &m)
		} else {
			err = toml.Unmarshal(fmText, &m)
		}
		if err != nil {
			return nil, nil, frontMatterError(err)
		}
		if m == nil {
			m = map[string]any{}
		}
	}
	return m, body, nil
}

// cutFrontMatter finds the front matter: its delimiter ("" when there is
// none), its text, which starts on the second line of src, and the body.
func cutFrontMatter(src []byte) (delim string, fmText, body []byte, err error) {
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	switch {
	case hasDelimLine(src, "---"):
		delim = "---"
	case hasDelimLine(src, "+++"):
		delim = "+++"
	default:
		return "", nil, src, nil
	}
	rest := src[len(delim):]
	rest = bytes.TrimPrefix(rest, []byte("\r"))
	rest = bytes.TrimPrefix(rest, []byte("\n"))
	for i := 0; i <= len(rest); {
		end := bytes.IndexByte(rest[i:], '\n')
		var line []byte
		next := len(rest) + 1
		if end < 0 {
			line = rest[i:]
		} else {
			line = rest[i : i+end]
			next = i + end + 1
		}
		if string(bytes.TrimRight(line, " \t\r")) == delim {
			if next <= len(rest) {
				body = rest[next:]
			}
			return delim, rest[:i], body, nil
		}
		i = next
	}
	return "", nil, nil, fmt.Errorf("front matter: no closing %s line", delim)
}

// keyLine is the line of src on which the top-level front matter key is,
// 0 if it cannot be found. The decoders give positions only for syntax
// errors; a value of the wrong type is found after decoding, so the front
// matter is parsed again, only then, for the key's position. Lines count
// as in frontMatterError.
func keyLine(src []byte, key string) int {
	delim, fmText, _, err := cutFrontMatter(src)
	if err != nil || key == "" {
		return 0
	}
	switch delim {
	case "---":
		f, err := yamlparser.ParseBytes(fmText, 0)
		if err != nil || len(f.Docs) == 0 {
			return 0
		}
		var values []*yamlast.MappingValueNode
		switch n := f.Docs[0].Body.(type) {
		case *yamlast.MappingNode:
			values = n.Values
		case *yamlast.MappingValueNode:
			values = []*yamlast.MappingValueNode{n}
		}
		for _, v := range values {
			if tok := v.Key.GetToken(); tok != nil && tok.Value == key && tok.Position != nil {
				return tok.Position.Line + 1
			}
		}
	case "+++":
		var p unstable.Parser
		p.Reset(fmText)
		for p.NextExpression() {
			e := p.Expression()
			if e.Kind != unstable.KeyValue {
				if e.Kind == unstable.Table || e.Kind == unstable.ArrayTable {
					return 0 // the top-level keys are all before
				}
				continue
			}
			k := e.Key()
			if !k.Next() {
				continue
			}
			if first := k.Node(); string(first.Data) == key && !k.Next() {
				return p.Shape(first.Raw).Start.Line + 1
			}
		}
	}
	return 0
}

// lineError is an error at a line of a content file, which loadContent
// reports as "content/x.md:LINE: ...", the form editors and terminals jump
// to.
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %v", e.line, e.err) }
func (e *lineError) Unwrap() error { return e.err }

// frontMatterError turns a YAML or TOML decoding error into one line
// naming the line of the content file. Both decoders count lines from the
// start of the text they were given, which begins after the opening
// delimiter line, hence the +1. Their own messages carry a multi-line
// excerpt of the source (YAML) or no line at all (TOML's Error).
func frontMatterError(err error) error {
	if ye, ok := errors.AsType[yaml.Error](err); ok {
		msg := yamlPos.ReplaceAllStringFunc(oneLine(ye.GetMessage()), func(m string) string {
			n, _ := strconv.Atoi(yamlPos.FindStringSubmatch(m)[1])
			return fmt.Sprintf("line %d", n+1)
		})
		if tok := ye.GetToken(); tok != nil && tok.Position != nil && tok.Position.Line > 0 {
			return &lineError{line: tok.Position.Line + 1, err: fmt.Errorf("front matter: %s", msg)}
		}
		return fmt.Errorf("front matter: %s", msg)
	}
	if te, ok := errors.AsType[*toml.DecodeError](err); ok {
		msg := oneLine(strings.TrimPrefix(te.Error(), "toml: "))
		if row, _ := te.Position(); row > 0 {
			return &lineError{line: row + 1, err: fmt.Errorf("front matter: %s", msg)}
		}
		return fmt.Errorf("front matter: %s", msg)
	}
	return fmt.Errorf("front matter: %s", oneLine(err.Error()))
}

// yamlPos is a position go-yaml writes into a message ("mapping key
// \"title\" already defined at [1:1]"), counted as its error's line is.
var yamlPos = regexp.MustCompile(`\[(\d+):\d+\]`)

// oneLine is the first line of a decoder's message: the rest, where there
// is any, is an excerpt of the source, which the line number replaces.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

func hasDelimLine(src []byte, delim string) bool {
	if !bytes.HasPrefix(src, []byte(delim)) {
		return false
	}
	rest := src[len(delim):]
	return len(rest) == 0 || rest[0] == '\n' || (rest[0] == '\r' && len(rest) > 1 && rest[1] == '\n')
}

// applyFrontMatter returns, with an error, the key it is about. Every key
// lands in .Params lower-cased, as in Hugo, a params table's keys at the
// top; the keys Hugo gives a meaning are also read into the page.
func (p *Page) applyFrontMatter(fm map[string]any, taxonomies []taxonomyDef) (string, error) {
	// Sorted, so that which error is reported does not depend on map order;
	// the keys are case-insensitive, so two spellings of one would
	// otherwise race (a "Draft: false" beside "draft: true" published the
	// page at random).
	known := map[string]string{}
	isTaxonomy := map[string]bool{}
	for _, t := range taxonomies {
		isTaxonomy[t.plural] = true
	}
	for _, k := range slices.Sorted(maps.Keys(fm)) {
		v := fm[k]
		var err error
		lower := strings.ToLower(k)
		if other, ok := known[lower]; ok {
			return k, fmt.Errorf("front matter has both %s and %s: keys are case-insensitive", other, k)
		}
		known[lower] = k
		if lower != "params" {
			p.params[lower] = lowerValue(v)
		}
		switch lower {
		case "title":
			p.title, err = asString(k, v)
		case "linktitle":
			p.linkTitle, err = asString(k, v)
		case "description":
			p.description, err = asString(k, v)
		case "date":
			p.date, err = asTime(k, v)
			p.params[lower] = p.date // a time, as Hugo gives it
		case "lastmod", "modified":
			p.lastmod, err = asTime(k, v)
			p.params[lower] = p.lastmod // a time, as Hugo gives it
		case "publishdate", "pubdate", "published":
			p.publishDate, err = asTime(k, v)
			p.params[lower] = p.publishDate // a time, as Hugo gives it
		case "expirydate", "unpublishdate":
			p.expiryDate, err = asTime(k, v)
			p.params[lower] = p.expiryDate // a time, as Hugo gives it
		case "draft":
			b, ok := v.(bool)
			if !ok {
				err = fmt.Errorf("front matter %s: want true or false, got %s", k, shown(v))
			}
			p.draft = b
		case "weight":
			p.weight, err = asInt(k, v)
		case "layout":
			if p.layout, err = asString(k, v); err != nil {
				err = fmt.Errorf("front matter %s: want the name of a layout such as wide.html, got %s", k, shown(v))
			}
		case "type":
			p.typ, err = asString(k, v)
		case "slug":
			p.slug, err = asString(k, v)
			if err == nil && (strings.Contains(p.slug, "/") || p.slug == "." || p.slug == "..") {
				err = fmt.Errorf("front matter %s: want one path element, got %s", k, shown(v))
			}
		case "url":
			p.url, err = asString(k, v)
		case "aliases":
			p.aliases, err = asStrings(k, v)
		case "summary":
			var sum string
			if sum, err = asString(k, v); err == nil {
				p.params["summary"] = sum
			}
		case "menu", "menus":
			p.rawMenus = v
			switch v.(type) {
			case nil, string, []any, map[string]any:
			default:
				err = fmt.Errorf("front matter %s: want a menu name such as main, a list such as [main] or a table such as {main: {}}, got %s", k, shown(v))
			}
		case "params":
			m, ok := v.(map[string]any)
			if !ok {
				err = fmt.Errorf("front matter %s: want a table, got %s", k, shown(v))
			}
			for pk, pv := range lowerKeys(m) {
				if _, set := p.params[pk]; !set {
					p.params[pk] = pv
				}
			}
		default:
			if isTaxonomy[lower] {
				var terms []string
				if terms, err = asStrings(k, v); err == nil {
					p.terms[lower] = terms
				}
			}
		}
		if err != nil {
			return k, err
		}
	}
	return "", nil
}

// asStrings takes one text or a list of texts.
func asStrings(k string, v any) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		if x == "" {
			return nil, nil
		}
		return []string{x}, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("front matter %s: want a list of texts, got %s in it", k, shown(e))
			}
			if s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("front matter %s: want a text or a list of texts, got %s", k, shown(v))
}

// shown is a front matter value in a message, text quoted: `weight: "10"`
// read "want a whole number, got 10".
func shown(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

func asString(k string, v any) (string, error) {
	switch s := v.(type) {
	case string:
		return s, nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("front matter %s: want text, got %s", k, shown(v))
}

func asInt(k string, v any) (int, error) {
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case uint64:
		if n <= 1<<31 {
			return int(n), nil
		}
	case float64:
		if n == float64(int(n)) {
			return int(n), nil
		}
	}
	return 0, fmt.Errorf("front matter %s: want a whole number, got %s", k, shown(v))
}

func asTime(k string, v any) (time.Time, error) {
	switch t := v.(type) {
	case time.Time:
		return t.UTC(), nil
	case toml.LocalDate:
		return time.Date(t.Year, time.Month(t.Month), t.Day, 0, 0, 0, 0, time.UTC), nil
	case toml.LocalDateTime:
		return t.AsTime(time.UTC), nil
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
			if tm, err := time.Parse(layout, t); err == nil {
				return tm.UTC(), nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("front matter %s: want a date such as 2024-05-01 or 2024-05-01T10:00:00Z, got %s", k, shown(v))
}
