package build

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"
	"text/template/parse"
	"unicode"

	"github.com/fediverse-observer/observer/build/internal/funcs"
)

// templates finds and compiles layouts as Hugo does. Files come from two
// tiers: the site's layouts/ over the theme's (file by file), then the
// built-in default theme, which supplies what the first tier lacks. Each
// page is rendered with the first of its candidate layouts (lookup.go)
// found in the first tier, else in the built-in theme; a layout that
// starts with a define is framed by the nearest baseof.html.
type templates struct {
	user    map[string]themeFile // by path under layouts/, site over theme
	builtin map[string]themeFile
	// builtinFrames says the built-in baseof.html may frame the first
	// tier's layouts: the theme is the default one, of which the site's
	// layouts/ are overrides.
	builtinFrames bool
	partials      map[string]string // partial name ("head.html") -> template name
	master        *template.Template
	state         *funcState
	cache         *partialCache
	themeName     string
	lookedIn      string

	mu   sync.Mutex
	sets map[string]*layoutSet // by layout and frame
}

// layoutSet is one compiled layout (with its baseof and every partial).
type layoutSet struct {
	// master is never executed, so that it can still be cloned: html/template
	// refuses to clone a set once it has run.
	master   *template.Template
	entry    string // name of the template to execute
	file     string // the layout's display path, for messages
	partials map[string]string
	cache    *partialCache
	mu       sync.Mutex
	free     []*execSet
}

// execSet is a clone of a layout's templates that one render uses at a
// time. Its partial function counts how deeply partials are nested in that
// render: a template function is told nothing about the execution calling
// it, and renders run in parallel, so the count needs a set of its own per
// render. Sets are reused, so a build clones (and escapes) a layout about
// once per concurrent render, not once per page.
type execSet struct {
	t     *template.Template
	depth int
}

// maxPartialDepth bounds the nesting of partials. A partial that includes
// itself, directly or through others, would otherwise recurse until the Go
// stack overflows, which kills the process (observer serve with it) instead
// of failing the build. A real site nests a few deep.
const maxPartialDepth = 100

// partialDepthError is returned by the innermost partial call over the
// bound; the calls around it pass it up as it is, so that the message names
// the partial once instead of 100 nested "error calling partial" prefixes.
type partialDepthError struct{ file string }

func (e *partialDepthError) Error() string {
	return fmt.Sprintf("%s: partials nested more than %d deep (does it include itself?)", e.file, maxPartialDepth)
}

// get returns a set for one render; put gives it back.
func (ls *layoutSet) get() (*execSet, error) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if n := len(ls.free); n > 0 {
		es := ls.free[n-1]
		ls.free = ls.free[:n-1]
		return es, nil
	}
	t, err := ls.master.Clone()
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", ls.file, err)
	}
	es := &execSet{t: t}
	t.Funcs(template.FuncMap{
		"partial":       es.partialFunc(ls.partials, nil),
		"partialCached": es.partialFunc(ls.partials, ls.cache),
	})
	return es, nil
}

func (ls *layoutSet) put(es *execSet) {
	ls.mu.Lock()
	ls.free = append(ls.free, es)
	ls.mu.Unlock()
}

// funcState is what the template functions need that only exists once the
// build has its data.
type funcState struct {
	out       *output // where resources are published, once the build has one
	site      *Site
	data      *DataView
	templates *templatesNS
}

// templatesNS is Hugo's templates namespace.
type templatesNS struct{ tp *templates }

// Exists reports whether a layout or partial of that path (under
// layouts/, in any tier) exists: templates.Exists "partials/x.html".
func (ns *templatesNS) Exists(name string) bool {
	if ns == nil || ns.tp == nil {
		return false
	}
	name = strings.TrimPrefix(name, "/")
	if _, ok := ns.tp.user[name]; ok {
		return true
	}
	if _, ok := ns.tp.builtin[name]; ok {
		return true
	}
	for _, dir := range []string{"partials/", "_partials/"} {
		if p, ok := strings.CutPrefix(name, dir); ok {
			if _, ok := ns.tp.partials[p]; ok {
				return true
			}
		}
	}
	return false
}

// partialCache holds partialCached's results for one build.
type partialCache struct {
	mu sync.Mutex
	m  map[string]any
}

// internalTemplates stand in for Hugo's embedded templates that themes
// call with {{ template "_internal/…" . }}: the services they load
// (analytics, comments) are not part of an observer site, which makes no
// requests to third parties; the metadata ones print the basic tags.
var internalTemplates = map[string]string{
	"_internal/google_analytics.html":       "",
	"_internal/google_analytics_async.html": "",
	"_internal/disqus.html":                 "",
	"_internal/opengraph.html": `<meta property="og:title" content="{{ .Title }}">
<meta property="og:description" content="{{ with .Description }}{{ . }}{{ else }}{{ .Site.Description }}{{ end }}">
<meta property="og:type" content="{{ if .IsPage }}article{{ else }}website{{ end }}">
<meta property="og:url" content="{{ .Permalink }}">`,
	"_internal/twitter_cards.html": `<meta name="twitter:card" content="summary">
<meta name="twitter:title" content="{{ .Title }}">`,
	"_internal/schema.html": `<meta itemprop="name" content="{{ .Title }}">`,
}

// loadTemplates lists the layouts of every tier and parses them all, so
// that an error in any (an unknown function, a syntax error) stops the
// build at once, naming the file and line, whether or not a page uses it.
func loadTemplates(th *theme, fm template.FuncMap, st *funcState) (*templates, error) {
	tp := &templates{user: map[string]themeFile{}, builtin: map[string]themeFile{}, partials: map[string]string{},
		state: st, cache: &partialCache{m: map[string]any{}}, sets: map[string]*layoutSet{},
		builtinFrames: th.builtinFrames, themeName: th.name, lookedIn: th.lookedIn()}
	st.templates = &templatesNS{tp: tp}
	for _, tier := range []struct {
		layers []layer
		into   map[string]themeFile
	}{{th.layouts, tp.user}, {th.builtin, tp.builtin}} {
		files, err := layerFiles(tier.layers)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			tier.into[f.rel] = f
		}
	}
	tp.master = template.New("").Funcs(fm)
	for name, src := range internalTemplates {
		if _, err := tp.master.New(name).Parse(src); err != nil {
			return nil, fmt.Errorf("internal template %s: %w", name, err)
		}
	}
	// Partials: _partials/ (Hugo's current name) before partials/ (the
	// classic one), the first tier before the built-in theme.
	for _, tier := range []map[string]themeFile{tp.user, tp.builtin} {
		for _, dir := range []string{"_partials/", "partials/"} {
			for rel, f := range tier {
				name, ok := strings.CutPrefix(rel, dir)
				if !ok || !isTemplateFile(rel) {
					continue
				}
				if _, dup := tp.partials[name]; dup {
					continue
				}
				if err := parseInto(tp.master, f); err != nil {
					return nil, err
				}
				tp.partials[name] = f.display
			}
		}
	}
	for name, display := range tp.partials {
		// {{ template "partials/x.html" . }} works in Hugo too.
		t := tp.master.Lookup(display)
		for _, alias := range []string{"partials/" + name, "_partials/" + name} {
			if tp.master.Lookup(alias) == nil {
				if _, err := tp.master.AddParseTree(alias, t.Tree); err != nil {
					return nil, fmt.Errorf("template %s: %w", display, err)
				}
			}
		}
	}
	// Every other template file is parsed once on its own, for its errors.
	for _, tier := range []map[string]themeFile{tp.user, tp.builtin} {
		for rel, f := range tier {
			if !isTemplateFile(rel) || isPartial(rel) || isShortcode(rel) {
				continue
			}
			src, err := fs.ReadFile(f.fsys, f.rel)
			if err != nil {
				return nil, fmt.Errorf("read template %s: %w", f.display, err)
			}
			if _, err := template.New(f.display).Funcs(fm).Parse(string(src)); err != nil {
				return nil, err // "template: FILE:LINE: …" already
			}
		}
	}
	return tp, nil
}

func isTemplateFile(rel string) bool {
	return strings.HasSuffix(rel, ".html") || strings.HasSuffix(rel, ".xml")
}

func isPartial(rel string) bool {
	return strings.HasPrefix(rel, "_partials/") || strings.HasPrefix(rel, "partials/")
}

// isShortcode: shortcodes are not supported (docs/theming.md), so a
// theme's are left unread.
func isShortcode(rel string) bool {
	return strings.HasPrefix(rel, "_shortcodes/") || strings.HasPrefix(rel, "shortcodes/")
}

// errNoLayout says no candidate layout exists in any tier.
var errNoLayout = errors.New("no layout")

// find returns the first candidate in the first tier, else in the
// built-in theme; fromBuiltin says which.
func (tp *templates) find(cands []string, builtinToo bool) (f themeFile, fromBuiltin bool, err error) {
	for _, c := range cands {
		if f, ok := tp.user[c]; ok {
			return f, false, nil
		}
	}
	if builtinToo {
		for _, c := range cands {
			if f, ok := tp.builtin[c]; ok {
				return f, true, nil
			}
		}
	}
	return themeFile{}, false, errNoLayout
}

// set returns the compiled layout for a page's candidates.
func (tp *templates) set(cands []string, builtinToo bool) (*layoutSet, error) {
	f, fromBuiltin, err := tp.find(cands, builtinToo)
	if err != nil {
		return nil, err
	}
	src, err := fs.ReadFile(f.fsys, f.rel)
	if err != nil {
		return nil, fmt.Errorf("read template %s: %w", f.display, err)
	}
	var frame *themeFile
	if needsBaseof(string(src)) {
		fr, err := tp.baseof(f, fromBuiltin)
		if err != nil {
			return nil, err
		}
		frame = &fr
	}
	key := f.display
	if frame != nil {
		key += "\x00" + frame.display
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if ls := tp.sets[key]; ls != nil {
		return ls, nil
	}
	set, err := tp.master.Clone()
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", f.display, err)
	}
	entry := f.display
	if frame != nil {
		if err := parseInto(set, *frame); err != nil {
			return nil, err
		}
		entry = frame.display
	}
	if _, err := set.New(f.display).Parse(string(src)); err != nil {
		return nil, err
	}
	lowerParamKeys(set)
	ls := &layoutSet{master: set, entry: entry, file: f.display, partials: tp.partials, cache: tp.cache}
	tp.sets[key] = ls
	return ls, nil
}

// baseof finds the frame of a layout: baseof.html in the layout's own
// folder, then in _default/, then at the top, as Hugo looks. A layout of
// the built-in theme goes in the theme's frame when the theme has one
// with a "main" block, so that the observer's pages look like the rest of
// the site, else in the built-in frame.
func (tp *templates) baseof(layout themeFile, fromBuiltin bool) (themeFile, error) {
	dir := path.Dir(layout.rel)
	var cands []string
	if dir != "." {
		cands = append(cands, dir+"/baseof.html")
	}
	cands = append(cands, "_default/baseof.html", "baseof.html")
	for _, c := range cands {
		f, ok := tp.user[c]
		if !ok {
			continue
		}
		if !fromBuiltin {
			return f, nil
		}
		if src, err := fs.ReadFile(f.fsys, f.rel); err == nil && mainBlock.Match(src) {
			return f, nil
		}
	}
	if fromBuiltin || tp.builtinFrames {
		for _, c := range cands {
			if f, ok := tp.builtin[c]; ok {
				return f, nil
			}
		}
	}
	// Used on its own, such a layout renders as nothing but the text
	// around its defines: a blank page, built without a word.
	return themeFile{}, fmt.Errorf("%s starts with a define, but there is no baseof.html to frame it (%s)", layout.display, tp.lookedIn)
}

// mainBlock finds where a baseof puts a layout's "main".
var mainBlock = regexp.MustCompile(`\{\{-?\s*(block|template)\s+"main"`)

// needsBaseof is Hugo's rule: a layout whose first action (after
// comments and white space) is a define fills in a baseof.
func needsBaseof(src string) bool {
	s := src
	for {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		if c, ok := cutComment(s); ok {
			s = c
			continue
		}
		break
	}
	return defineStart.MatchString(s)
}

var defineStart = regexp.MustCompile(`^\{\{-?\s*define\s`)

var commentStart = regexp.MustCompile(`^\{\{-?\s*/\*`)

func cutComment(s string) (string, bool) {
	if !commentStart.MatchString(s) {
		return s, false
	}
	_, rest, ok := strings.Cut(s, "*/")
	if !ok {
		return s, false
	}
	_, rest, ok = strings.Cut(rest, "}}")
	return rest, ok
}

// lowerParamKeys lower-cases the names after .Params in the set's trees
// (.Params.myKey, .Site.Params.Author.Name, $p.Params.X): Hugo keeps
// params keys lower-cased and looks them up in any case, which Go's
// templates do not do for maps, so the names are folded where they are
// written instead.
func lowerParamKeys(t *template.Template) bool {
	changed := false
	for _, tt := range t.Templates() {
		if tt.Tree != nil && tt.Tree.Root != nil {
			walkNodes(tt.Tree.Root, func(n parse.Node) {
				switch x := n.(type) {
				case *parse.FieldNode:
					changed = foldAfterParams(x.Ident) || changed
				case *parse.ChainNode:
					changed = foldAfterParams(x.Field) || changed
				case *parse.VariableNode:
					changed = foldAfterParams(x.Ident) || changed
				}
			})
		}
	}
	return changed
}

func foldAfterParams(idents []string) bool {
	changed := false
	for i := 0; i+1 < len(idents); i++ {
		if idents[i] == "Params" {
			for j := i + 1; j < len(idents); j++ {
				if l := strings.ToLower(idents[j]); l != idents[j] {
					idents[j], changed = l, true
				}
			}
			break
		}
	}
	return changed
}

func walkNodes(n parse.Node, f func(parse.Node)) {
	if n == nil {
		return
	}
	f(n)
	switch x := n.(type) {
	case *parse.ListNode:
		if x == nil {
			return
		}
		for _, c := range x.Nodes {
			walkNodes(c, f)
		}
	case *parse.ActionNode:
		walkNodes(x.Pipe, f)
	case *parse.PipeNode:
		if x == nil {
			return
		}
		for _, c := range x.Cmds {
			walkNodes(c, f)
		}
	case *parse.CommandNode:
		for _, a := range x.Args {
			walkNodes(a, f)
		}
	case *parse.ChainNode:
		walkNodes(x.Node, f)
	case *parse.IfNode:
		walkBranch(&x.BranchNode, f)
	case *parse.RangeNode:
		walkBranch(&x.BranchNode, f)
	case *parse.WithNode:
		walkBranch(&x.BranchNode, f)
	case *parse.TemplateNode:
		walkNodes(x.Pipe, f)
	}
}

func walkBranch(b *parse.BranchNode, f func(parse.Node)) {
	walkNodes(b.Pipe, f)
	if b.List != nil {
		walkNodes(b.List, f)
	}
	if b.ElseList != nil {
		walkNodes(b.ElseList, f)
	}
}

func parseInto(t *template.Template, f themeFile) error {
	src, err := fs.ReadFile(f.fsys, f.rel)
	if err != nil {
		return fmt.Errorf("read template %s: %w", f.display, err)
	}
	if _, err := t.New(f.display).Parse(string(src)); err != nil {
		return err // "template: FILE:LINE: …" already
	}
	return nil
}

// partialFunc is partial, or partialCached with a cache: a partial found
// by its name under _partials/ or partials/ ("head.html", "head", and
// "partials/head.html" all name it), rendered with the given dot.
// partialCached renders a name (and variant keys) once per build.
func (es *execSet) partialFunc(partials map[string]string, cache *partialCache) func(string, ...any) (any, error) {
	return func(name string, args ...any) (any, error) {
		name = strings.TrimPrefix(strings.TrimPrefix(name, "_partials/"), "partials/")
		if path.Ext(name) == "" {
			name += ".html"
		}
		full, ok := partials[name]
		if !ok {
			return "", fmt.Errorf("no partial %s in layouts/_partials or layouts/partials", name)
		}
		var key string
		if cache != nil {
			key = name
			for _, v := range args[min(1, len(args)):] {
				key += "\x00" + fmt.Sprint(v)
			}
			cache.mu.Lock()
			out, hit := cache.m[key]
			cache.mu.Unlock()
			if hit {
				return out, nil
			}
		}
		if es.depth >= maxPartialDepth {
			return "", &partialDepthError{file: full}
		}
		es.depth++
		defer func() { es.depth-- }()
		var dot any
		if len(args) > 0 {
			dot = args[0]
		}
		var buf bytes.Buffer
		var out any
		if err := es.t.ExecuteTemplate(&buf, full, dot); err != nil {
			if deep, ok := errors.AsType[*partialDepthError](err); ok {
				return "", deep
			}
			v, returned := funcs.Returned(err)
			if !returned {
				return "", err
			}
			// {{ return VALUE }} gives the value, not the text.
			out = v
		} else {
			// The partial was escaped as HTML by html/template itself.
			out = template.HTML(buf.String())
		}
		if cache != nil {
			cache.mu.Lock()
			cache.m[key] = out
			cache.mu.Unlock()
		}
		return out, nil
	}
}
