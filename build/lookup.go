package build

import "strings"

// layoutCandidates are the layouts a page may render with, best first,
// after Hugo's lookup order: a folder for the page's type (or taxonomy),
// then the kind's own folder (section/, taxonomy/), then _default/, then
// the top of layouts/ (Hugo's current layout, which names the top-level
// files home.html, page.html, section.html, taxonomy.html, term.html);
// within a folder, the front matter layout, then the names for the kind.
// ext is "html", or "rss.xml" for a list page's feed.
func layoutCandidates(p *Page, ext string) []string {
	var dirs, names []string
	singular := ""
	if p.data != nil {
		singular = p.data.Singular
	}
	switch p.kind {
	case "home":
		dirs = []string{"", "_default"}
		names = []string{"index", "home", "list", "all"}
	case "page":
		dirs = []string{p.typ, "_default", ""}
		names = []string{"single", "page", "all"}
	case "section":
		dirs = []string{p.typ, "section", "_default", ""}
		names = []string{p.section, "section", "list", "all"}
	case "taxonomy":
		dirs = []string{p.typ, "taxonomy", "_default", ""}
		names = []string{singular + ".terms", "terms", "taxonomy", "list", "all"}
	case "term":
		dirs = []string{p.typ, "taxonomy", "_default", ""}
		names = []string{"term", singular, "taxonomy", "list", "all"}
	default: // the observer's own pages: live, 404
		dirs = []string{"", "_default"}
		names = []string{p.kind}
	}
	if ext == "rss.xml" {
		// A feed's layout is NAME.rss.xml, or rss.xml for any list page.
		names = append(names[:len(names):len(names)], "rss")
	}
	if l := strings.TrimSuffix(p.layout, ".html"); l != "" {
		names = append([]string{l}, names...)
	}
	var out []string
	seen := map[string]bool{}
	for _, d := range dirs {
		for _, n := range names {
			if n == "" || n == "." {
				continue
			}
			file := n + "." + ext
			if n == "rss" && ext == "rss.xml" {
				file = "rss.xml"
			}
			c := file
			if d != "" {
				c = d + "/" + file
			}
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}
