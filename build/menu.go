package build

import (
	"cmp"
	"fmt"
	"html/template"
	"slices"
	"strings"
)

// MenuEntry is one entry of a menu, with Hugo's fields.
type MenuEntry struct {
	Name, URL, Identifier, Parent, Title, PageRef string
	Pre, Post                                     template.HTML
	Weight                                        int
	Params                                        map[string]any
	Children                                      Menu
	// Page is the page the entry links to, nil for a config entry with a
	// url.
	Page *Page
	Menu string
}

// HasChildren reports whether entries name this one as their parent.
func (m *MenuEntry) HasChildren() bool { return len(m.Children) > 0 }

// KeyName is the identifier, else the name.
func (m *MenuEntry) KeyName() string { return cmp.Or(m.Identifier, m.Name) }

// Menu is one menu, in Hugo's order: by weight (unweighted last), then name.
type Menu []*MenuEntry

func (m Menu) ByWeight() Menu { return m }
func (m Menu) ByName() Menu {
	out := slices.Clone(m)
	slices.SortStableFunc(out, func(a, b *MenuEntry) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
func (m Menu) Reverse() Menu {
	out := slices.Clone(m)
	slices.Reverse(out)
	return out
}

// Menus are the site's menus by name.
type Menus map[string]Menu

func menuOrder(a, b *MenuEntry) int {
	if (a.Weight == 0) != (b.Weight == 0) {
		if a.Weight == 0 {
			return 1
		}
		return -1
	}
	return cmp.Or(cmp.Compare(a.Weight, b.Weight), cmp.Compare(a.Name, b.Name), cmp.Compare(a.URL, b.URL))
}

// buildMenus gathers the menus of the config and of the pages' front
// matter, nests the entries that name a parent, and sorts them.
func (s *Site) buildMenus(cfg map[string][]MenuSetting, pages Pages) error {
	flat := map[string][]*MenuEntry{}
	for name, entries := range cfg {
		for _, e := range entries {
			me := &MenuEntry{Name: e.Name, URL: e.URL, Identifier: e.Identifier, Parent: e.Parent, Title: e.Title,
				PageRef: e.PageRef, Pre: template.HTML(e.Pre), Post: template.HTML(e.Post), Weight: e.Weight, Params: lowerKeys(e.Params), Menu: name}
			if e.PageRef != "" {
				p := s.GetPage(e.PageRef)
				if p == nil {
					return fmt.Errorf("menus.%s: pageRef %q: no such page", name, e.PageRef)
				}
				me.Page, me.URL = p, p.rel
				me.Name = cmp.Or(me.Name, p.LinkTitle())
			} else if e.URL != "" && !isAbsURL(e.URL) {
				me.URL = s.RelURL(e.URL)
			}
			flat[name] = append(flat[name], me)
		}
	}
	for _, p := range pages {
		entries, err := pageMenus(p)
		if err != nil {
			return err
		}
		flat = mergeMenus(flat, entries)
	}
	s.Menus = Menus{}
	for name, entries := range flat {
		byID := map[string]*MenuEntry{}
		for _, e := range entries {
			if e.Identifier == "" {
				e.Identifier = e.Name
			}
			byID[e.Identifier] = e
		}
		var top Menu
		for _, e := range entries {
			if parent := byID[e.Parent]; e.Parent != "" && parent != nil && parent != e {
				parent.Children = append(parent.Children, e)
			} else {
				top = append(top, e)
			}
		}
		for _, e := range entries {
			slices.SortStableFunc(e.Children, menuOrder)
		}
		slices.SortStableFunc(top, menuOrder)
		s.Menus[name] = top
	}
	return nil
}

func mergeMenus(dst map[string][]*MenuEntry, add []*MenuEntry) map[string][]*MenuEntry {
	for _, e := range add {
		dst[e.Menu] = append(dst[e.Menu], e)
	}
	return dst
}

// pageMenus reads the forms Hugo accepts for a page's menu: a menu's
// name ("main"), a list of names ([main, footer]), or a table keyed by
// name whose values may give name, weight, parent, identifier, pre, post
// and title.
func pageMenus(p *Page) ([]*MenuEntry, error) {
	entry := func(menu string) *MenuEntry {
		return &MenuEntry{Menu: menu, Name: p.LinkTitle(), URL: p.rel, Page: p, Weight: p.weight}
	}
	switch m := p.rawMenus.(type) {
	case nil:
		return nil, nil
	case string:
		return []*MenuEntry{entry(m)}, nil
	case []any:
		var out []*MenuEntry
		for _, v := range m {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("content/%s: front matter menu: want menu names, got %s", p.file, shown(v))
			}
			out = append(out, entry(s))
		}
		return out, nil
	case map[string]any:
		var out []*MenuEntry
		for _, name := range slices.Sorted(mapKeys(m)) {
			e := entry(name)
			if t, ok := m[name].(map[string]any); ok {
				for k, v := range t {
					var err error
					switch strings.ToLower(k) {
					case "name":
						e.Name, err = asString("menu."+name+".name", v)
					case "weight":
						e.Weight, err = asInt("menu."+name+".weight", v)
					case "parent":
						e.Parent, err = asString("menu."+name+".parent", v)
					case "identifier":
						e.Identifier, err = asString("menu."+name+".identifier", v)
					case "title":
						e.Title, err = asString("menu."+name+".title", v)
					case "pre":
						var s string
						s, err = asString("menu."+name+".pre", v)
						e.Pre = template.HTML(s)
					case "post":
						var s string
						s, err = asString("menu."+name+".post", v)
						e.Post = template.HTML(s)
					case "params":
						pm, _ := v.(map[string]any)
						e.Params = lowerKeys(pm)
					}
					if err != nil {
						return nil, fmt.Errorf("content/%s: %w", p.file, err)
					}
				}
			}
			out = append(out, e)
		}
		return out, nil
	}
	return nil, fmt.Errorf("content/%s: front matter menu: want a menu name such as main, a list such as [main] or a table such as {main: {weight: 1}}, got %s", p.file, shown(p.rawMenus))
}
