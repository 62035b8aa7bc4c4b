package funcs

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"mime"
	"path"
	"reflect"
	"strings"
	"sync"
	texttemplate "text/template"
)

// Resources is the resources namespace: files of the assets directory,
// published under their path the first time a template prints their link,
// and the transformations of them Hugo has without external tools:
// concatenation, fingerprints and templates. Minify publishes the file as
// it is (under Hugo's .min name); Sass (toCSS), PostCSS and JavaScript
// bundling are not available and fail naming the file.
type Resources struct {
	e     *env
	cache sync.Map // cache key -> *Resource
}

func newResources(e *env) *Resources { return &Resources{e: e} }

// Resource is one asset, or the result of transforming one.
type Resource struct {
	e       *env
	name    string // target path, relative, with slashes
	content []byte
	data    map[string]any
	once    sync.Once
	pubErr  error
}

// MediaType is a resource's type, printed as "text/css".
type MediaType struct {
	Type     string
	MainType string
	SubType  string
	Suffixes []string
}

func (m MediaType) String() string { return m.Type }

var mediaTypes = map[string]string{
	".css": "text/css", ".js": "text/javascript", ".mjs": "text/javascript",
	".json": "application/json", ".svg": "image/svg+xml", ".png": "image/png",
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".ico": "image/x-icon", ".html": "text/html", ".xml": "application/xml",
	".txt": "text/plain", ".woff": "font/woff", ".woff2": "font/woff2",
	".scss": "text/x-scss", ".sass": "text/x-sass", ".toml": "application/toml",
	".yaml": "application/yaml", ".yml": "application/yaml", ".csv": "text/csv",
}

func mediaTypeOf(name string) MediaType {
	ext := strings.ToLower(path.Ext(name))
	t, ok := mediaTypes[ext]
	if !ok {
		t, _, _ = strings.Cut(mime.TypeByExtension(ext), ";")
		if t == "" {
			t = "application/octet-stream"
		}
	}
	main, sub, _ := strings.Cut(t, "/")
	return MediaType{Type: t, MainType: main, SubType: sub, Suffixes: []string{strings.TrimPrefix(ext, ".")}}
}

// Name is the resource's path.
func (r *Resource) Name() string { return r.name }

// Title is the resource's path, as Hugo gives for an asset.
func (r *Resource) Title() string { return r.name }

// MediaType is the resource's media type.
func (r *Resource) MediaType() MediaType { return mediaTypeOf(r.name) }

// ResourceType is the main part of the media type ("text", "image").
func (r *Resource) ResourceType() string { return r.MediaType().MainType }

// Content is the resource's content, as text.
func (r *Resource) Content() (string, error) { return string(r.content), nil }

// Data holds what transformations add: Integrity after fingerprint.
func (r *Resource) Data() map[string]any {
	if r.data == nil {
		return map[string]any{}
	}
	return r.data
}

// Err is nil: a resource that could not be had is an error at once.
func (r *Resource) Err() error { return nil }

// RelPermalink publishes the resource and returns its link from the host.
func (r *Resource) RelPermalink() (string, error) {
	if err := r.publish(); err != nil {
		return "", err
	}
	return r.e.relURL(r.name), nil
}

// Permalink publishes the resource and returns its absolute link.
func (r *Resource) Permalink() (string, error) {
	if err := r.publish(); err != nil {
		return "", err
	}
	return r.e.absURL(r.name), nil
}

func (r *Resource) publish() error {
	r.once.Do(func() {
		if r.e.opts.Publish == nil {
			r.pubErr = fmt.Errorf("resource %s: the build cannot publish resources", r.name)
			return
		}
		r.pubErr = r.e.opts.Publish(r.name, r.content)
	})
	return r.pubErr
}

// cached returns the resource built under key, building it once.
func (rs *Resources) cached(key string, build func() (*Resource, error)) (*Resource, error) {
	if r, ok := rs.cache.Load(key); ok {
		return r.(*Resource), nil
	}
	r, err := build()
	if err != nil || r == nil {
		return r, err
	}
	actual, _ := rs.cache.LoadOrStore(key, r)
	return actual.(*Resource), nil
}

// Get returns the file of the assets directory at the path, or nil when
// there is none (so that a theme can test for it).
func (rs *Resources) Get(v any) (*Resource, error) {
	s, err := toString(v)
	if err != nil {
		return nil, fmt.Errorf("resources.Get: %w", err)
	}
	p, err := filePath("resources.Get", s)
	if err != nil {
		return nil, err
	}
	return rs.cached("get:"+p, func() (*Resource, error) {
		if rs.e.opts.Assets == nil {
			return nil, nil
		}
		b, err := fs.ReadFile(rs.e.opts.Assets, p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("resources.Get: %w", err)
		}
		return &Resource{e: rs.e, name: p, content: b}, nil
	})
}

// Match returns the assets whose paths match a glob pattern (path.Match,
// with ** matching any number of directories), by path.
func (rs *Resources) Match(pattern any) ([]*Resource, error) {
	pat, err := toString(pattern)
	if err != nil {
		return nil, fmt.Errorf("resources.Match: %w", err)
	}
	if rs.e.opts.Assets == nil {
		return nil, nil
	}
	var out []*Resource
	err = fs.WalkDir(rs.e.opts.Assets, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if globMatch(strings.TrimPrefix(pat, "/"), p) {
			r, err := rs.Get(p)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("resources.Match: %w", err)
	}
	return out, nil
}

// ByType returns the assets of a media main type ("image", "text").
func (rs *Resources) ByType(typ any) ([]*Resource, error) {
	t, err := toString(typ)
	if err != nil {
		return nil, fmt.Errorf("resources.ByType: %w", err)
	}
	all, err := rs.Match("**")
	if err != nil {
		return nil, err
	}
	var out []*Resource
	for _, r := range all {
		if r.ResourceType() == t {
			out = append(out, r)
		}
	}
	return out, nil
}

// GetMatch returns the first asset Match finds, or nil.
func (rs *Resources) GetMatch(pattern any) (*Resource, error) {
	m, err := rs.Match(pattern)
	if err != nil || len(m) == 0 {
		return nil, err
	}
	return m[0], nil
}

func globMatch(pattern, name string) bool {
	if !strings.Contains(pattern, "**") {
		ok, _ := path.Match(pattern, name)
		return ok
	}
	before, after, _ := strings.Cut(pattern, "**")
	if !strings.HasPrefix(name, before) {
		return false
	}
	rest := strings.TrimPrefix(name, before)
	after = strings.TrimPrefix(after, "/")
	for {
		if ok := globMatch(after, rest); ok {
			return true
		}
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return after == "" || globMatch(after, path.Base(rest))
		}
		rest = rest[i+1:]
	}
}

func resourceArg(fn string, v any) (*Resource, error) {
	r, ok := v.(*Resource)
	if ok && r == nil || v == nil {
		return nil, fmt.Errorf("%s: no resource (is the file missing from assets/?)", fn)
	}
	if !ok {
		return nil, fmt.Errorf("%s: want a resource, got %T", fn, v)
	}
	return r, nil
}

// FromString makes a resource of text at the target path.
func (rs *Resources) FromString(target, content any) (*Resource, error) {
	t, c, err := str2("resources.FromString", target, content)
	if err != nil {
		return nil, err
	}
	p, err := filePath("resources.FromString", t)
	if err != nil {
		return nil, err
	}
	return rs.cached("string:"+p+"\x00"+c, func() (*Resource, error) {
		return &Resource{e: rs.e, name: p, content: []byte(c)}, nil
	})
}

// Copy publishes a resource under another path.
func (rs *Resources) Copy(target, v any) (*Resource, error) {
	t, err := toString(target)
	if err != nil {
		return nil, fmt.Errorf("resources.Copy: %w", err)
	}
	r, err := resourceArg("resources.Copy", v)
	if err != nil {
		return nil, err
	}
	p, err := filePath("resources.Copy", t)
	if err != nil {
		return nil, err
	}
	return rs.cached("copy:"+p+"\x00"+r.name, func() (*Resource, error) {
		return &Resource{e: rs.e, name: p, content: r.content, data: r.data}, nil
	})
}

// Concat joins resources into one at the target path.
func (rs *Resources) Concat(target, list any) (*Resource, error) {
	t, err := toString(target)
	if err != nil {
		return nil, fmt.Errorf("resources.Concat: %w", err)
	}
	p, err := filePath("resources.Concat", t)
	if err != nil {
		return nil, err
	}
	lv := reflect.ValueOf(list)
	if !isList(lv) {
		return nil, fmt.Errorf("resources.Concat: want a list of resources, got %T", list)
	}
	var parts []*Resource
	key := "concat:" + p
	for _, it := range listValues(lv) {
		r, err := resourceArg("resources.Concat", it)
		if err != nil {
			return nil, err
		}
		parts = append(parts, r)
		key += "\x00" + r.name
	}
	return rs.cached(key, func() (*Resource, error) {
		var b []byte
		for i, r := range parts {
			if i > 0 && len(b) > 0 && b[len(b)-1] != '\n' {
				b = append(b, '\n')
			}
			b = append(b, r.content...)
		}
		return &Resource{e: rs.e, name: p, content: b}, nil
	})
}

// Minify publishes the resource under Hugo's name for a minified file
// (main.min.css). Its content is not changed: there is no minifier.
func (rs *Resources) Minify(v any) (*Resource, error) {
	r, err := resourceArg("minify", v)
	if err != nil {
		return nil, err
	}
	ext := path.Ext(r.name)
	name := strings.TrimSuffix(r.name, ext) + ".min" + ext
	return rs.cached("minify:"+r.name+"\x00"+string(r.content), func() (*Resource, error) {
		return &Resource{e: rs.e, name: name, content: r.content, data: r.data}, nil
	})
}

// Fingerprint publishes the resource under a name with the hash of its
// content (main.<sha256>.css) and sets .Data.Integrity for a link's
// integrity attribute. The hash is sha256 unless md5, sha384 or sha512
// is given first.
func (rs *Resources) Fingerprint(args ...any) (*Resource, error) {
	algo := "sha256"
	var v any
	switch len(args) {
	case 1:
		v = args[0]
	case 2:
		s, err := toString(args[0])
		if err != nil {
			return nil, fmt.Errorf("fingerprint: %w", err)
		}
		algo, v = s, args[1]
	default:
		return nil, errors.New("fingerprint: want a resource and at most a hash name")
	}
	r, err := resourceArg("fingerprint", v)
	if err != nil {
		return nil, err
	}
	var h hash.Hash
	var prefix string
	switch algo {
	case "md5":
		h, prefix = md5.New(), "md5"
	case "sha256":
		h, prefix = sha256.New(), "sha256"
	case "sha384":
		h, prefix = sha512.New384(), "sha384"
	case "sha512":
		h, prefix = sha512.New(), "sha512"
	default:
		return nil, fmt.Errorf("fingerprint: hash %q is not supported (md5, sha256, sha384, sha512)", algo)
	}
	h.Write(r.content)
	sum := h.Sum(nil)
	ext := path.Ext(r.name)
	name := strings.TrimSuffix(r.name, ext) + "." + hex.EncodeToString(sum) + ext
	return rs.cached("fingerprint:"+name, func() (*Resource, error) {
		data := map[string]any{}
		for k, v := range r.data {
			data[k] = v
		}
		data["Integrity"] = prefix + "-" + base64.StdEncoding.EncodeToString(sum)
		return &Resource{e: rs.e, name: name, content: r.content, data: data}, nil
	})
}

// ExecuteAsTemplate runs the resource as a template with the data and
// publishes the result at the target path.
func (rs *Resources) ExecuteAsTemplate(target, data, v any) (*Resource, error) {
	t, err := toString(target)
	if err != nil {
		return nil, fmt.Errorf("resources.ExecuteAsTemplate: %w", err)
	}
	r, err := resourceArg("resources.ExecuteAsTemplate", v)
	if err != nil {
		return nil, err
	}
	p, err := filePath("resources.ExecuteAsTemplate", t)
	if err != nil {
		return nil, err
	}
	execute := rs.e.opts.ExecuteTemplate
	if execute == nil {
		execute = rs.executeText
	}
	out, err := execute(r.name, string(r.content), data)
	if err != nil {
		return nil, fmt.Errorf("resources.ExecuteAsTemplate %s: %w", r.name, err)
	}
	// Keyed by the result, since the data can differ from page to page.
	return rs.cached("exec:"+p+"\x00"+out, func() (*Resource, error) {
		return &Resource{e: rs.e, name: p, content: []byte(out)}, nil
	})
}

// executeText runs a resource as a text template (CSS and JavaScript are
// not HTML: Hugo runs them with text/template too) with these functions.
func (rs *Resources) executeText(name, text string, data any) (string, error) {
	t, err := texttemplate.New(name).Funcs(texttemplate.FuncMap(rs.e.funcs)).Parse(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// ToCSS fails: there is no Sass compiler. A theme that needs one is
// refused with the file named, not published with its Sass uncompiled.
func (rs *Resources) ToCSS(args ...any) (*Resource, error) {
	name := "?"
	if len(args) > 0 {
		if r, ok := args[len(args)-1].(*Resource); ok && r != nil {
			name = r.name
		}
	}
	return nil, fmt.Errorf("toCSS: assets/%s: Sass is not available to the builder; commit the compiled CSS to assets/ and use resources.Get on it", name)
}

// GetRemote fails: a build fetches nothing from the network.
func (rs *Resources) GetRemote(args ...any) (*Resource, error) {
	return nil, errors.New("resources.GetRemote: a build fetches nothing from the network")
}
