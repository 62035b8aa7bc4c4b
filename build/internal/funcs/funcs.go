// Package funcs is Hugo's template function library for the site builder:
// the functions Hugo themes call, under Hugo's names, in Hugo's namespaces
// and with Hugo's aliases (collections.Where and where, strings.Replace and
// replace, safe.HTML and safeHTML, ...), with Hugo's semantics. It knows
// nothing of pages or of the observer's data: what a function needs from
// the build (the base URL, a Markdown renderer, the clock, the files) comes
// in through Options, so that the builder wires it in one place.
//
// The functions that belong to the template engine itself (partial,
// partialCached, templates.Exists) and to the site model (site, .Site) are
// the builder's; return is here, with Returned to read it back.
package funcs

import (
	"html/template"
	"io/fs"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Options is what the functions need from the build. Every field may be
// left zero; a function that needs a missing one fails with an error that
// says so, rather than guessing.
type Options struct {
	// BaseURL is the site's base URL (https://example.org/sub/), which
	// relURL and absURL resolve against. Empty means "/".
	BaseURL string
	// Markdown renders Markdown to HTML, for markdownify.
	Markdown func(src string) (string, error)
	// Now is the clock of now; nil means time.Now. A build passes its own
	// start time so that every page of one build agrees.
	Now func() time.Time
	// Location is the time zone of dates parsed from text (time,
	// dateFormat); nil means UTC.
	Location *time.Location
	// Files is the site's directory, which readFile, readDir and
	// fileExists read (Hugo's working directory). Nil refuses them.
	Files fs.FS
	// Assets is the assets directory (the site's over the theme's), which
	// resources.Get reads. Nil means no assets.
	Assets fs.FS
	// Publish writes a file of a resource into the output directory, at
	// the path rel (no leading slash), the first time a template asks for
	// its link. Nil refuses resources' links.
	Publish func(rel string, data []byte) error
	// I18n holds translation tables by language code, as LoadI18n reads
	// them; Language is the site's language (languageCode, "en" when
	// empty), DefaultLanguage the one to fall back to.
	I18n            Translations
	Language        string
	DefaultLanguage string
	// Logger receives warnf's warnings; nil means slog.Default().
	Logger *slog.Logger
	// Environment is hugo.Environment: "production" for a build,
	// "development" for a preview server. Empty means "production".
	Environment string
	// Server is hugo.IsServer.
	Server bool
	// ExecuteTemplate runs template text against data, for
	// resources.ExecuteAsTemplate. Nil runs it as a text/template with
	// these functions.
	ExecuteTemplate func(name, text string, data any) (string, error)
}

// HugoVersion is what hugo.Version reports: the Hugo release whose
// template features the builder follows, so that themes that test the
// version (`if ge hugo.Version "0.120"`) take the paths they would take in
// that Hugo.
const HugoVersion = "0.146.0"

// env is the state every namespace shares.
type env struct {
	opts    Options
	base    *url.URL // with a path that ends in "/"
	baseRaw string   // BaseURL as given, for the prefix test in relURL
	log     *slog.Logger
	regexps sync.Map // expression -> *regexp.Regexp
	warned  sync.Map // warnf messages already logged
	funcs   map[string]any
}

func (e *env) now() time.Time {
	if e.opts.Now != nil {
		return e.opts.Now()
	}
	return time.Now()
}

func (e *env) loc() *time.Location {
	if e.opts.Location != nil {
		return e.opts.Location
	}
	return time.UTC
}

// New returns the functions, for html/template's Funcs. A BaseURL that
// does not parse is an error.
func New(opts Options) (template.FuncMap, error) {
	e := &env{opts: opts, log: opts.Logger}
	if e.log == nil {
		e.log = slog.Default()
	}
	raw := opts.BaseURL
	if raw == "" {
		raw = "/"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	e.base = u
	e.baseRaw = u.String()

	coll := &Collections{e: e}
	cmp := &Compare{e: e}
	str := &Strings{e: e}
	mth := &Math{}
	sf := &Safe{}
	urls := &URLs{e: e}
	tm := &Time{e: e}
	tr := &Transform{e: e}
	inf := &Inflect{}
	fm := &Fmt{e: e}
	enc := &Encoding{}
	cr := &Crypto{}
	pth := &Path{}
	rf := &Reflect{}
	hg := &Hugo{e: e}
	cs := &Cast{}
	ln := &Lang{e: e}
	osn := &OS{e: e}
	res := newResources(e)
	dbg := &Debug{}
	hsh := &Hash{}
	jsn := &JS{}
	cssn := &CSS{}

	m := template.FuncMap{
		// namespaces
		"collections": func() *Collections { return coll },
		"compare":     func() *Compare { return cmp },
		"strings":     func() *Strings { return str },
		"math":        func() *Math { return mth },
		"safe":        func() *Safe { return sf },
		"urls":        func() *URLs { return urls },
		"time":        tm.AsTimeOrNamespace,
		"transform":   func() *Transform { return tr },
		"inflect":     func() *Inflect { return inf },
		"fmt":         func() *Fmt { return fm },
		"encoding":    func() *Encoding { return enc },
		"crypto":      func() *Crypto { return cr },
		"path":        func() *Path { return pth },
		"reflect":     func() *Reflect { return rf },
		"hugo":        func() *Hugo { return hg },
		"cast":        func() *Cast { return cs },
		"lang":        func() *Lang { return ln },
		"os":          func() *OS { return osn },
		"resources":   func() *Resources { return res },
		"debug":       func() *Debug { return dbg },
		"hash":        func() *Hash { return hsh },
		"js":          func() *JS { return jsn },
		"css":         func() *CSS { return cssn },

		// collections
		"after":      coll.After,
		"append":     coll.Append,
		"apply":      coll.Apply,
		"complement": coll.Complement,
		"delimit":    coll.Delimit,
		"dict":       coll.Dictionary,
		"first":      coll.First,
		"in":         coll.In,
		"index":      coll.Index,
		"intersect":  coll.Intersect,
		"isset":      coll.IsSet,
		"isSet":      coll.IsSet,
		"keyVals":    coll.KeyVals,
		"last":       coll.Last,
		"merge":      coll.Merge,
		"newScratch": coll.NewScratch,
		"querify":    coll.Querify,
		"seq":        coll.Seq,
		"shuffle":    coll.Shuffle,
		"slice":      coll.Slice,
		"sort":       coll.Sort,
		"symdiff":    coll.SymDiff,
		"union":      coll.Union,
		"uniq":       coll.Uniq,
		"where":      coll.Where,

		// compare
		"cond":    cmp.Conditional,
		"default": cmp.Default,
		"eq":      cmp.Eq,
		"ne":      cmp.Ne,
		"lt":      cmp.Lt,
		"le":      cmp.Le,
		"gt":      cmp.Gt,
		"ge":      cmp.Ge,

		// strings
		"chomp":          str.Chomp,
		"countrunes":     str.CountRunes,
		"countwords":     str.CountWords,
		"findRE":         str.FindRE,
		"findRESubmatch": str.FindRESubmatch,
		"hasPrefix":      str.HasPrefix,
		"hasSuffix":      str.HasSuffix,
		"lower":          str.ToLower,
		"replace":        str.Replace,
		"replaceRE":      str.ReplaceRE,
		"slicestr":       str.SliceString,
		"split":          str.Split,
		"substr":         str.Substr,
		"title":          str.Title,
		"trim":           str.Trim,
		"truncate":       str.Truncate,
		"upper":          str.ToUpper,

		// math
		"add":     mth.Add,
		"sub":     mth.Sub,
		"mul":     mth.Mul,
		"div":     mth.Div,
		"mod":     mth.Mod,
		"modBool": mth.ModBool,
		"pow":     mth.Pow,

		// safe
		"safeCSS":      sf.CSS,
		"safeHTML":     sf.HTML,
		"safeHTMLAttr": sf.HTMLAttr,
		"safeJS":       sf.JS,
		"safeJSStr":    sf.JSStr,
		"safeURL":      sf.URL,

		// urls
		"absLangURL": urls.AbsLangURL,
		"absURL":     urls.AbsURL,
		"anchorize":  urls.Anchorize,
		"relLangURL": urls.RelLangURL,
		"relURL":     urls.RelURL,
		"urlize":     urls.URLize,

		// time
		"dateFormat": tm.Format,
		"duration":   tm.Duration,
		"now":        tm.Now,

		// transform
		"emojify":      tr.Emojify,
		"highlight":    tr.Highlight,
		"htmlEscape":   tr.HTMLEscape,
		"htmlUnescape": tr.HTMLUnescape,
		"markdownify":  tr.Markdownify,
		"plainify":     tr.Plainify,
		"unmarshal":    tr.Unmarshal,

		// inflect
		"humanize":    inf.Humanize,
		"pluralize":   inf.Pluralize,
		"singularize": inf.Singularize,

		// fmt
		"errorf":   fm.Errorf,
		"erroridf": fm.Erroridf,
		"warnidf":  fm.Warnidf,
		"print":    fm.Print,
		"printf":   fm.Printf,
		"println":  fm.Println,
		"warnf":    fm.Warnf,

		// encoding
		"base64Decode": enc.Base64Decode,
		"base64Encode": enc.Base64Encode,
		"jsonify":      enc.Jsonify,

		// crypto
		"md5":    cr.MD5,
		"sha1":   cr.SHA1,
		"sha256": cr.SHA256,
		"hmac":   cr.HMAC,

		// cast
		"float":  cs.ToFloat,
		"int":    cs.ToInt,
		"string": cs.ToString,

		// lang
		"i18n": ln.Translate,
		"T":    ln.Translate,

		// os
		"fileExists": osn.FileExists,
		"getenv":     osn.Getenv,
		"readDir":    osn.ReadDir,
		"readFile":   osn.ReadFile,

		// resources
		"fingerprint": res.Fingerprint,
		"minify":      res.Minify,
		"toCSS":       res.ToCSS,
		"postCSS":     res.PostCSS,
		"babel":       res.Babel,

		// templates
		"return": Return,
	}
	coll.funcs = m
	e.funcs = m
	return m, nil
}
