package build

import (
	"bytes"
	"cmp"
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
	"github.com/yuin/goldmark/renderer/html"
	"golang.org/x/sync/errgroup"

	"github.com/fediverse-observer/observer/config"
)

// asset is a non-Markdown file in content/, copied as it is.
type asset struct{ rel, src string }

// loadContent reads content/: _index.md becomes the home page, every other
// Markdown file a page at /NAME/ (pretty URLs), other files are copied.
// Drafts are left out. A missing content/ is an empty site.
func loadContent(ctx context.Context, dir string, cfg config.Site, site *Site) (*Page, []*Page, []asset, error) {
	home := &Page{Kind: "home", Title: cfg.Title, Description: cfg.Description,
		RelPermalink: site.relPath(""), Permalink: site.absPath(""), Params: map[string]any{}}
	dir, err := contentRoot(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	files, assets, err := walkContent(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	pages, err := parsePages(ctx, dir, files, newMarkdown(cfg.UnsafeHTML))
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := placePages(pages, home, site)
	if err != nil {
		return nil, nil, nil, err
	}
	sortPages(out)
	return home, out, assets, nil
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
func parsePages(ctx context.Context, dir string, files []string, md goldmark.Markdown) ([]*Page, error) {
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
			p, err := parsePage(rel, src, md)
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

// placePages gives each page other than drafts its URL and output path,
// and returns them. content/_index.md is not a page of its own: it fills
// in home.
func placePages(pages []*Page, home *Page, site *Site) ([]*Page, error) {
	var out []*Page
	for _, p := range pages {
		if p.Draft {
			continue
		}
		if p.File == "_index.md" {
			fillHome(home, p)
			continue
		}
		dirPart, name := path.Split(strings.TrimSuffix(p.File, ".md"))
		var sitePath string
		if name == "_index" || name == "index" {
			// A directory's index page lives at the directory's URL.
			sitePath = dirPart
		} else {
			sitePath = dirPart + name + "/"
		}
		if sitePath == "" {
			return nil, fmt.Errorf("content/%s: would replace the home page; use content/_index.md", p.File)
		}
		p.Kind = "page"
		p.RelPermalink = site.relPath(sitePath)
		p.Permalink = site.absPath(sitePath)
		p.outPath = sitePath + "index.html"
		if p.Title == "" {
			// Untitled, a page is named after its file, and a
			// directory's index page after its directory, not "_index".
			p.Title = path.Base(strings.TrimSuffix(sitePath, "/"))
		}
		out = append(out, p)
	}
	return out, nil
}

// fillHome puts what content/_index.md says into the home page. Its title
// and description override the [site] ones only when it has them; its URL
// stays the home page's.
func fillHome(home, index *Page) {
	home.Content = index.Content
	if index.Title != "" {
		home.Title = index.Title
	}
	if index.Description != "" {
		home.Description = index.Description
	}
	home.Date, home.Params, home.File, home.layout = index.Date, index.Params, index.File, index.layout
}

// sortPages puts pages in Hugo's order: weighted pages first by weight,
// then the rest, each by title and then by file. The file makes the order
// total, so the unstable sort gives the same order on every build.
func sortPages(pages []*Page) {
	slices.SortFunc(pages, func(a, b *Page) int {
		aw, bw := a.Weight == 0, b.Weight == 0
		if aw != bw {
			if aw {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.Weight, b.Weight), cmp.Compare(a.Title, b.Title), cmp.Compare(a.File, b.File))
	})
}

func newMarkdown(unsafe bool) goldmark.Markdown {
	ropts := []goldmark.Option{
		goldmark.WithExtensions(extension.GFM, extension.Footnote),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
	}
	if unsafe {
		ropts = append(ropts, goldmark.WithRendererOptions(html.WithUnsafe()))
	}
	return goldmark.New(ropts...)
}

func parsePage(rel string, src []byte, md goldmark.Markdown) (*Page, error) {
	fm, body, err := splitFrontMatter(src)
	if err != nil {
		return nil, err
	}
	p := &Page{File: rel, Params: map[string]any{}}
	if key, err := p.applyFrontMatter(fm); err != nil {
		if line := keyLine(src, key); line > 0 {
			return nil, &lineError{line: line, err: err}
		}
		return nil, err
	}
	var buf bytes.Buffer
	if err := md.Convert(body, &buf); err != nil {
		return nil, fmt.Errorf("markdown: %w", err)
	}
	// The Markdown is the site owner's; raw HTML in it was already dropped by
	// goldmark unless site.unsafe_html allows it.
	p.Content = template.HTML(buf.String())
	return p, nil
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

// applyFrontMatter returns, with an error, the key it is about.
func (p *Page) applyFrontMatter(fm map[string]any) (string, error) {
	// Sorted, so that which error is reported does not depend on map order;
	// the known keys are case-insensitive, so two spellings of one would
	// otherwise race (a "Draft: false" beside "draft: true" published the
	// page at random).
	known := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(fm)) {
		v := fm[k]
		var err error
		lower := strings.ToLower(k)
		switch lower {
		case "title", "description", "date", "draft", "weight", "layout", "menu":
			if other, ok := known[lower]; ok {
				return k, fmt.Errorf("front matter has both %s and %s: keys are case-insensitive", other, k)
			}
			known[lower] = k
		}
		switch lower {
		case "title":
			p.Title, err = asString(k, v)
		case "description":
			p.Description, err = asString(k, v)
		case "date":
			p.Date, err = asTime(k, v)
		case "draft":
			b, ok := v.(bool)
			if !ok {
				err = fmt.Errorf("front matter %s: want true or false, got %s", k, shown(v))
			}
			p.Draft = b
		case "weight":
			p.Weight, err = asInt(k, v)
		case "layout":
			// Checked here because anything but text used to be ignored
			// without a word, rendering the page with page.html; whether
			// the layout exists is checked once the templates are loaded.
			if p.layout, err = asString(k, v); err == nil {
				p.Params[k] = v
			} else {
				err = fmt.Errorf("front matter %s: want the name of a layout such as wide.html, got %s", k, shown(v))
			}
		case "menu":
			p.Params[k] = v
			p.inMenu, err = inMainMenu(k, v)
		default:
			p.Params[k] = v
		}
		if err != nil {
			return k, err
		}
	}
	return "", nil
}

// inMainMenu reads the forms Hugo accepts for menu: a menu's name
// ("main"), a list of names ([main]), or a table keyed by name ({main:
// {weight: 1}}, TOML's [menu.main]). Only "main" has a menu here; what a
// table says about the entry is not used. Only the first form used to
// count, so the others left the page out of the menu without a word.
func inMainMenu(k string, v any) (bool, error) {
	switch m := v.(type) {
	case string:
		return m == "main", nil
	case []any:
		for _, name := range m {
			if s, ok := name.(string); ok && s == "main" {
				return true, nil
			}
		}
		return false, nil
	case map[string]any:
		_, ok := m["main"]
		return ok, nil
	case nil:
		return false, nil
	}
	return false, fmt.Errorf("front matter %s: want a menu name such as main, a list such as [main] or a table such as {main: {}}, got %s", k, shown(v))
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
