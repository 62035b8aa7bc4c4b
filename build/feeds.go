package build

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"html"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/feeds"

	"github.com/fediverse-observer/observer"
)

// atomFeed is gorilla/feeds' AtomFeed with room for two links (the page the
// feed belongs to and the feed itself, rel="self", which Atom readers and
// validators expect); the entries are gorilla/feeds' own.
type atomFeed struct {
	XMLName  xml.Name           `xml:"feed"`
	Xmlns    string             `xml:"xmlns,attr"`
	Title    string             `xml:"title"`
	ID       string             `xml:"id"`
	Updated  string             `xml:"updated"`
	Subtitle string             `xml:"subtitle,omitempty"`
	Links    []feeds.AtomLink   `xml:"link"`
	Author   *feeds.AtomAuthor  `xml:"author,omitempty"`
	Entries  []*feeds.AtomEntry `xml:"entry"`
}

// softwareSlug turns a software name (untrusted) into a safe file name.
// Names that differ only in characters outside [a-z0-9._-] share a feed.
func softwareSlug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == '.' && b.Len() > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
		if b.Len() >= 64 {
			break
		}
	}
	slug := strings.Trim(b.String(), "-.")
	if slug == "" {
		return "unknown"
	}
	return slug
}

// maxSoftwareFeeds bounds the per-software feeds: each is a file, a link in
// the home page's head and a line in its list, and any host can report a
// software name of its own, so a farm of hosts each naming another would
// otherwise add a feed per host (20,000 made a 4.6 MB home page).
const maxSoftwareFeeds = 100

// softwareFeeds lists one feed per software family of the new list, sorted
// by slug. Names that share a slug share a feed, which is named after the
// name most of its hosts give (on a tie, the shortest, then the first in
// byte order): named after its newest host, one spam instance calling its
// software "mastodon ｂｕｙ ｐｉｌｌｓ" retitled the feed of every new
// Mastodon instance. A software with live hosts but none new keeps its feed,
// empty (Count 0): a feed that vanished whenever its software had a quiet
// month left its subscribers with a 404.
func softwareFeeds(list []observer.Instance, live []observer.SoftwareCount, site *Site) []FeedLink {
	idx := map[string]int{}
	var out []FeedLink
	names := map[string]map[string]int{}
	for _, inst := range list {
		slug := softwareSlug(inst.Software)
		name := inst.Software
		if name == "" {
			name = "unknown"
		}
		if names[slug] == nil {
			names[slug] = map[string]int{}
		}
		names[slug][name]++
		if i, ok := idx[slug]; ok {
			out[i].Count++
			continue
		}
		idx[slug] = len(out)
		file := "new/" + slug + ".atom"
		out = append(out, FeedLink{RelPermalink: site.relPath(file), Count: 1, file: file})
	}
	for slug, i := range idx {
		out[i].Software = mostGiven(names[slug])
	}
	quiet := map[string]map[string]int{} // slug -> name -> live hosts
	for _, sc := range live {
		slug := softwareSlug(sc.Software)
		if _, ok := idx[slug]; ok {
			continue
		}
		name := sc.Software
		if name == "" {
			name = "unknown"
		}
		if quiet[slug] == nil {
			quiet[slug] = map[string]int{}
		}
		quiet[slug][name] += int(sc.Live)
	}
	for slug, counts := range quiet {
		file := "new/" + slug + ".atom"
		out = append(out, FeedLink{RelPermalink: site.relPath(file), Software: mostGiven(counts), file: file})
	}
	if len(out) > maxSoftwareFeeds {
		// The families with the most live hosts keep their feeds, then
		// those with the most new ones: a name only one host gives is what
		// such a farm makes, and it cannot outrank a software many run.
		liveBySlug := map[string]int64{}
		for _, sc := range live {
			liveBySlug[softwareSlug(sc.Software)] += sc.Live
		}
		slices.SortFunc(out, func(a, b FeedLink) int {
			return cmp.Or(cmp.Compare(liveBySlug[b.slug()], liveBySlug[a.slug()]), cmp.Compare(b.Count, a.Count), strings.Compare(a.file, b.file))
		})
		out = out[:maxSoftwareFeeds]
	}
	slices.SortFunc(out, func(a, b FeedLink) int { return strings.Compare(a.file, b.file) })
	return out
}

// slug is the software slug the feed's file is named by.
func (f FeedLink) slug() string {
	return strings.TrimSuffix(strings.TrimPrefix(f.file, "new/"), ".atom")
}

// mostGiven is the name with the highest count; on a tie the shortest, then
// the first in byte order, so the choice does not depend on map order.
func mostGiven(counts map[string]int) string {
	best, bestN := "", 0
	for name, n := range counts {
		if n > bestN || n == bestN && (len(name) < len(best) || len(name) == len(best) && name < best) {
			best, bestN = name, n
		}
	}
	return best
}

func (b *builder) writeFeeds(list []observer.Instance, fl []FeedLink) error {
	if err := b.writeFeed("new.atom", b.site.Title+": new instances", "", list); err != nil {
		return err
	}
	// Grouped in one pass: with a feed per software and new hosts that each
	// claim their own software (spam can), a pass over the list per feed was
	// quadratic.
	bySlug := map[string][]observer.Instance{}
	for _, inst := range list {
		slug := softwareSlug(inst.Software)
		bySlug[slug] = append(bySlug[slug], inst)
	}
	for _, f := range fl {
		if err := b.writeFeed(f.file, b.site.Title+": new "+f.Software+" instances", f.Software, bySlug[f.slug()]); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) writeFeed(rel, title, software string, list []observer.Instance) error {
	self := b.site.absPath(rel)
	feed := atomFeed{
		Xmlns:    "http://www.w3.org/2005/Atom",
		Title:    title,
		ID:       self,
		Subtitle: b.site.Description,
		Links: []feeds.AtomLink{
			{Href: b.site.absPath(""), Rel: "alternate", Type: "text/html"},
			{Href: self, Rel: "self", Type: "application/atom+xml"},
		},
		Author: &feeds.AtomAuthor{AtomPerson: feeds.AtomPerson{Name: b.site.Title, Uri: b.site.absPath("")}},
	}
	// The feed's updated time is the newest entry's, not the build time, so
	// that an unchanged list gives an unchanged file.
	updated := b.site.Now.Truncate(24 * time.Hour)
	if len(list) > 0 {
		updated = list[0].FirstAliveAt
	}
	feed.Updated = updated.UTC().Format(time.RFC3339)
	tagHost := b.site.base.Hostname()
	for i, inst := range list {
		if i == FeedLimit {
			break
		}
		first := inst.FirstAliveAt.UTC()
		ts := first.Format(time.RFC3339)
		feed.Entries = append(feed.Entries, &feeds.AtomEntry{
			Title:     inst.Host, // Atom text construct: XML escaping is enough
			Id:        fmt.Sprintf("tag:%s,%s:new/%s", tagHost, first.Format("2006-01-02"), inst.Host),
			Updated:   ts,
			Published: ts,
			Links:     []feeds.AtomLink{{Href: instanceURL(inst.Host), Rel: "alternate", Type: "text/html"}},
			Content:   &feeds.AtomContent{Type: "html", Content: entryHTML(inst)},
		})
	}
	data, err := xml.MarshalIndent(feed, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return b.out.writeFile(rel, "the Atom feed", append([]byte(xml.Header), append(data, '\n')...))
}

// entryHTML is the entry's content, type="html": readers unescape the XML
// once and then render HTML, so every instance text is HTML-escaped here
// first (and XML-escaped again when the feed is encoded).
func entryHTML(inst observer.Instance) string {
	e := html.EscapeString
	var b strings.Builder
	b.WriteString("<p><a href=\"" + e(instanceURL(inst.Host)) + "\" rel=\"nofollow ugc noopener\">" + e(inst.Host) + "</a>")
	if inst.Software != "" {
		b.WriteString(" runs " + e(inst.Software))
		if inst.Version != "" {
			b.WriteString(" " + e(inst.Version))
		}
	}
	b.WriteString(". First seen " + e(inst.FirstAliveAt.UTC().Format("2006-01-02 15:04 UTC")) + ".")
	if inst.Users != nil {
		b.WriteString(fmt.Sprintf(" Users: %d.", *inst.Users))
	}
	b.WriteString("</p>")
	if inst.Name != "" {
		b.WriteString("<p><strong>" + e(inst.Name) + "</strong></p>")
	}
	if inst.Description != "" {
		b.WriteString("<p>" + e(inst.Description) + "</p>")
	}
	return b.String()
}
