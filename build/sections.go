package build

import (
	"fmt"

	"github.com/fediverse-observer/observer/build/internal/funcs"
	"path"
	"slices"
	"strings"
)

// assemble turns the parsed content files into Hugo's page tree: the home
// page (content/_index.md), sections (every first-level folder, and any
// deeper folder with an _index.md), regular pages (every other .md, a
// folder's index.md being a leaf bundle at the folder's URL), taxonomies
// and their terms. Drafts, pages whose publishDate (or date) is after
// the build time and pages past their expiryDate are left out, as Hugo
// leaves them out by default.
func (s *Site) assemble(parsed []*Page) error {
	now := s.Now
	var pages []*Page
	for _, p := range parsed {
		switch {
		case p.draft:
		case !p.PublishDate().IsZero() && p.PublishDate().After(now):
		case !p.expiryDate.IsZero() && !p.expiryDate.After(now):
		default:
			pages = append(pages, p)
		}
	}
	home := &Page{kind: "home", title: s.Title, description: s.Description, params: map[string]any{}, terms: map[string][]string{}}
	sections := map[string]*Page{"": home}
	bundles := map[string]bool{}
	for _, p := range pages {
		dir, base := path.Split(p.file)
		dir = strings.TrimSuffix(dir, "/")
		switch base {
		case "_index.md":
			if dir == "" {
				fillHome(home, p)
				continue
			}
			p.kind = "section"
			p.dir = dir
			sections[dir] = p
		case "index.md":
			if dir == "" {
				return fmt.Errorf("content/%s: would replace the home page; use content/_index.md", p.file)
			}
			bundles[dir] = true
		}
	}
	// A first-level folder is a section even without an _index.md, unless
	// it is a leaf bundle.
	for _, p := range pages {
		first, _, nested := strings.Cut(p.file, "/")
		if nested && sections[first] == nil && !bundles[first] {
			sections[first] = &Page{kind: "section", dir: first, title: titleCase(first), params: map[string]any{}, terms: map[string][]string{}}
		}
	}
	// nearest is the section a folder is in: itself when it is one, else
	// the closest one above it.
	nearest := func(dir string) *Page {
		for {
			if sec := sections[dir]; sec != nil {
				return sec
			}
			if dir == "" {
				return home
			}
			dir = path.Dir(dir)
			if dir == "." {
				dir = ""
			}
		}
	}
	parentDir := func(dir string) string {
		d := path.Dir(dir)
		if d == "." {
			return ""
		}
		return d
	}
	var regular Pages
	var secList Pages
	for _, dir := range slices.Sorted(mapKeys(sections)) {
		sec := sections[dir]
		if dir == "" {
			continue
		}
		sec.parent = nearest(parentDir(dir))
		sec.relPath = dir + "/"
		if sec.title == "" {
			sec.title = titleCase(path.Base(dir))
		}
		secList = append(secList, sec)
	}
	for _, p := range pages {
		if p.kind == "section" || p.file == "_index.md" {
			continue
		}
		p.kind = "page"
		dir, base := path.Split(p.file)
		dir = strings.TrimSuffix(dir, "/")
		name := strings.TrimSuffix(base, ".md")
		if base == "index.md" {
			// A leaf bundle is at its folder's URL, in the section
			// above the folder.
			dir, name = parentDir(dir), path.Base(dir)
		}
		p.parent = nearest(dir)
		if p.slug != "" {
			name = p.slug
		}
		switch {
		case p.url != "":
			u := strings.TrimPrefix(path.Clean("/"+p.url), "/")
			if u == "" {
				return fmt.Errorf("content/%s: front matter url %q would replace the home page", p.file, p.url)
			}
			if path.Ext(u) == "" {
				u += "/"
			}
			p.relPath = u
		case dir == "":
			p.relPath = name + "/"
		default:
			p.relPath = dir + "/" + name + "/"
		}
		if p.title == "" {
			// Untitled, a page is named after its file, and a bundle
			// after its folder.
			p.title = name
		}
		regular = append(regular, p)
	}
	all := append(Pages{home}, secList...)
	for _, p := range all {
		p.site = s
	}
	for _, p := range regular {
		p.site = s
	}
	for _, p := range append(slices.Clone(all), regular...) {
		p.section = strings.SplitN(p.dirOrParent(), "/", 2)[0]
		if p.typ == "" {
			p.typ = p.section
		}
		if p.typ == "" {
			p.typ = "page"
		}
	}
	for _, p := range regular {
		p.parent.pages = append(p.parent.pages, p)
	}
	for _, sec := range secList {
		sec.parent.pages = append(sec.parent.pages, sec)
		sec.parent.sections = append(sec.parent.sections, sec)
	}
	for _, sec := range all {
		slices.SortStableFunc(sec.pages, defaultOrder)
		slices.SortStableFunc(sec.sections, defaultOrder)
	}
	slices.SortStableFunc(regular, defaultOrder)
	s.home, s.regular = home, regular
	taxo, err := s.buildTaxonomies(regular)
	if err != nil {
		return err
	}
	all = append(all, regular...)
	all = append(all, taxo...)
	listDates(all)
	s.byRef = map[string]*Page{}
	for _, p := range all {
		p.site = s
		p.scratch = funcs.NewScratch()
		p.rel, p.perma = s.relPath(p.relPath), s.absPath(p.relPath)
		p.outFile = p.relPath
		if p.outFile == "" || strings.HasSuffix(p.outFile, "/") {
			p.outFile += "index.html"
		}
		if p.params == nil {
			p.params = map[string]any{}
		}
		switch {
		case p.file != "":
			s.byRef[normRef(p.file)] = p
		case p.kind == "section":
			s.byRef[normRef(p.dir)] = p
		case p.kind == "taxonomy" || p.kind == "term":
			s.byRef[normRef(p.relPath)] = p
		}
	}
	s.byRef[""] = home
	s.all = all
	if _, set := s.Params["mainsections"]; !set {
		s.Params["mainsections"] = s.mainSections()
	}
	if err := s.buildMenus(s.menuConfig, all); err != nil {
		return err
	}
	return nil
}

// dirOrParent is the content folder that decides a page's section.
func (p *Page) dirOrParent() string {
	switch {
	case p.kind == "section":
		return p.dir
	case p.parent != nil:
		return p.parent.dir
	}
	return ""
}

// mainSections is Hugo's default params.mainSections: the section with
// the most regular pages.
func (s *Site) mainSections() []any {
	count := map[string]int{}
	for _, p := range s.regular {
		if p.section != "" {
			count[p.section]++
		}
	}
	best, n := "", 0
	for _, k := range slices.Sorted(mapKeys(count)) {
		if count[k] > n {
			best, n = k, count[k]
		}
	}
	if best == "" {
		return []any{}
	}
	return []any{best}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// fillHome puts what content/_index.md says into the home page. Its title
// and description override the [site] ones only when it has them; its URL
// stays the home page's.
func fillHome(home, index *Page) {
	if index.title == "" {
		index.title = home.title
	}
	if index.description == "" {
		index.description = home.description
	}
	*home = *index
	home.kind = "home"
}
