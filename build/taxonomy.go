package build

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Taxonomy is one taxonomy of .Site.Taxonomies: its terms (lower-cased,
// as Hugo keys them) and their pages.
type Taxonomy map[string]WeightedPages

// WeightedPage is a page in a taxonomy, with its weight there.
type WeightedPage struct {
	Weight int
	*Page
	owner *Page // the term's page
}

// WeightedPages are a term's pages, in Hugo's default order.
type WeightedPages []WeightedPage

// Pages is the term's pages as a plain list.
func (w WeightedPages) Pages() Pages {
	out := make(Pages, len(w))
	for i, wp := range w {
		out[i] = wp.Page
	}
	return out
}

// Page is the term's page (nil for no pages), as Hugo gives it.
func (w WeightedPages) Page() *Page {
	if len(w) == 0 {
		return nil
	}
	return w[0].owner
}

func (w WeightedPages) Count() int { return len(w) }
func (w WeightedPages) Len() int   { return len(w) }

// OrderedTaxonomyEntry is one term in a sorted taxonomy.
type OrderedTaxonomyEntry struct {
	Name          string
	WeightedPages WeightedPages
}

func (e OrderedTaxonomyEntry) Count() int   { return len(e.WeightedPages) }
func (e OrderedTaxonomyEntry) Pages() Pages { return e.WeightedPages.Pages() }
func (e OrderedTaxonomyEntry) Term() string { return e.Name }

// Alphabetical lists the terms by name.
func (t Taxonomy) Alphabetical() []OrderedTaxonomyEntry {
	out := t.entries()
	slices.SortFunc(out, func(a, b OrderedTaxonomyEntry) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// ByCount lists the terms with the most pages first, then by name.
func (t Taxonomy) ByCount() []OrderedTaxonomyEntry {
	out := t.entries()
	slices.SortFunc(out, func(a, b OrderedTaxonomyEntry) int {
		return cmp.Or(cmp.Compare(len(b.WeightedPages), len(a.WeightedPages)), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// Count is the number of terms.
func (t Taxonomy) Count() int { return len(t) }

func (t Taxonomy) entries() []OrderedTaxonomyEntry {
	out := make([]OrderedTaxonomyEntry, 0, len(t))
	for k, v := range t {
		out = append(out, OrderedTaxonomyEntry{Name: k, WeightedPages: v})
	}
	return out
}

// urlize makes a term or a title into a path element as Hugo does: lower
// case, spaces as hyphens, and only characters safe in a path kept.
func urlize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_', r == '.':
			b.WriteRune(r)
		case unicode.IsSpace(r):
			b.WriteByte('-')
		}
	}
	return b.String()
}

// titleCase capitalises the first letter of each word, which is what
// Hugo does to the names of sections and terms that have no title of
// their own.
func titleCase(s string) string {
	words := strings.Fields(strings.ReplaceAll(s, "-", " "))
	for i, w := range words {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}

// buildTaxonomies makes the taxonomy and term pages from the pages'
// terms: /tags/ lists the terms, /tags/go/ the pages tagged go. A
// taxonomy without terms has no pages.
func (s *Site) buildTaxonomies(pages Pages) ([]*Page, error) {
	s.Taxonomies = map[string]Taxonomy{}
	s.terms = map[string]map[string]*Page{}
	var out []*Page
	for _, tx := range s.taxonomyList {
		plural := tx.plural
		terms := Taxonomy{}
		names := map[string]string{} // key -> first spelling seen
		for _, p := range pages {
			for _, t := range p.terms[plural] {
				key := strings.ToLower(t)
				if _, ok := names[key]; !ok {
					names[key] = t
				}
				terms[key] = append(terms[key], WeightedPage{Weight: p.weight, Page: p})
			}
		}
		s.Taxonomies[plural] = terms
		if len(terms) == 0 {
			continue
		}
		tp := &Page{kind: "taxonomy", title: titleCase(plural), typ: plural, section: plural, site: s,
			params: map[string]any{}, relPath: plural + "/"}
		tp.data = &pageData{Terms: terms, Singular: tx.singular, Plural: plural}
		s.terms[plural] = map[string]*Page{}
		seen := map[string]string{} // url element -> term, two terms may urlize alike
		for _, key := range slicesSortedKeys(terms) {
			el := urlize(key)
			if el == "" {
				return nil, fmt.Errorf("%s term %q: nothing of it can be a URL", plural, names[key])
			}
			if other, dup := seen[el]; dup {
				return nil, fmt.Errorf("%s terms %q and %q would both be at /%s/%s/", plural, names[other], names[key], plural, el)
			}
			seen[el] = key
			wp := terms[key]
			slices.SortStableFunc(wp, func(a, b WeightedPage) int { return defaultOrder(a.Page, b.Page) })
			term := &Page{kind: "term", title: titleCase(names[key]), typ: plural, section: plural, site: s,
				params: map[string]any{}, relPath: plural + "/" + el + "/", parent: tp, pages: wp.Pages()}
			for i := range wp {
				wp[i].owner = term
			}
			term.data = &pageData{Pages: term.pages, Singular: tx.singular, Plural: plural, Term: key}
			for _, p := range term.pages {
				// A list's date is its newest page's, as in Hugo.
				if p.date.After(term.date) {
					term.date = p.date
				}
			}
			if term.date.After(tp.date) {
				tp.date = term.date
			}
			s.terms[plural][key] = term
			tp.pages = append(tp.pages, term)
			out = append(out, term)
		}
		slices.SortStableFunc(tp.pages, defaultOrder)
		tp.data.Pages = tp.pages
		out = append(out, tp)
	}
	return out, nil
}

func slicesSortedKeys(t Taxonomy) []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// termPage is the page of a term, nil if there is none.
func (s *Site) termPage(taxonomy, term string) *Page {
	return s.terms[strings.ToLower(taxonomy)][strings.ToLower(term)]
}
