package funcs

import (
	"html/template"
	"strconv"
	"strings"
)

// Hugo is the hugo namespace: what a theme may ask of the generator.
type Hugo struct{ e *env }

// Generator is the generator meta tag.
func (*Hugo) Generator() template.HTML {
	return `<meta name="generator" content="observer (Hugo-compatible templates)">`
}

// Version is the Hugo version whose template features the builder follows.
func (*Hugo) Version() VersionString { return HugoVersion }

// Environment is "production" for a build, "development" for a preview.
func (h *Hugo) Environment() string {
	if h.e.opts.Environment == "" {
		return "production"
	}
	return h.e.opts.Environment
}

// IsProduction reports whether Environment is "production".
func (h *Hugo) IsProduction() bool { return h.Environment() == "production" }

// IsDevelopment reports whether Environment is "development".
func (h *Hugo) IsDevelopment() bool { return h.Environment() == "development" }

// IsServer reports whether the site is served by a preview server.
func (h *Hugo) IsServer() bool { return h.e.opts.Server }

// IsMultilingual is false: a site has one language.
func (*Hugo) IsMultilingual() bool { return false }

// IsMultihost is false.
func (*Hugo) IsMultihost() bool { return false }

// IsExtended is false: there is no Sass compiler.
func (*Hugo) IsExtended() bool { return false }

// VersionString is a version that compares with text by version order:
// eq, lt and ge with "0.80" compare 0.146 as later than 0.80.
type VersionString string

func (v VersionString) String() string { return string(v) }

// compare returns -1, 0 or 1 as v is before, at or after other.
func (v VersionString) compare(other any) int {
	o, err := toString(other)
	if err != nil {
		return 0
	}
	a, b := versionParts(string(v)), versionParts(o)
	for i := range max(len(a), len(b)) {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	}
	return 0
}

func versionParts(s string) []int {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	s, _, _ = strings.Cut(s, "-")
	var out []int
	for _, p := range strings.Split(s, ".") {
		n, _ := strconv.Atoi(p)
		out = append(out, n)
	}
	return out
}
