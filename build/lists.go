package build

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/fediverse-observer/observer"
)

// writeLiveLists writes live.txt, live.csv and live.json in one pass over
// the live instances, without holding the list in memory.
func (b *builder) writeLiveLists(ctx context.Context) (int64, error) {
	names := []string{"live.txt", "live.csv", "live.json"}
	var files []*stagedFile
	ws := make([]io.Writer, len(names))
	for i, n := range names {
		if b.out.has(n) { // replaced by a static file
			ws[i] = io.Discard
			continue
		}
		f, err := b.out.create(n, "the live list")
		if err != nil {
			for _, f := range files {
				f.abort()
			}
			return 0, err
		}
		files = append(files, f)
		ws[i] = f
	}
	closeAll := func() error {
		var first error
		for _, f := range files {
			if err := f.Close(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	txt, csvW, jsonW := ws[0], csv.NewWriter(ws[1]), ws[2]
	if err := csvW.Write([]string{"host", "software", "version", "users", "state"}); err != nil {
		closeAll()
		return 0, err
	}
	io.WriteString(jsonW, "[")
	var n int64
	var prev string
	for inst, err := range b.opts.Data.LiveInstances(ctx) {
		if err != nil {
			closeAll()
			return 0, fmt.Errorf("live instances: %w", err)
		}
		if n > 0 && inst.Host <= prev {
			closeAll()
			return 0, fmt.Errorf("live instances: not sorted by host (%q after %q)", inst.Host, prev)
		}
		prev = inst.Host
		// Every host is host-shaped (cleanData leaves out the others), so
		// none can forge lines or smuggle controls into live.txt.
		io.WriteString(txt, inst.Host)
		io.WriteString(txt, "\n")
		if err := csvW.Write(inertRow(inst.Host, inst.Software, inst.Version, optInt(inst.Users), string(inst.State))); err != nil {
			closeAll()
			return 0, fmt.Errorf("write live.csv: %w", err)
		}
		rec, err := json.Marshal(liveRecord{inst.Host, inst.Software, inst.Version, inst.Users, inst.State})
		if err != nil {
			closeAll()
			return 0, fmt.Errorf("write live.json: %w", err)
		}
		if n > 0 {
			io.WriteString(jsonW, ",")
		}
		io.WriteString(jsonW, "\n")
		jsonW.Write(rec)
		n++
	}
	if n > 0 {
		io.WriteString(jsonW, "\n")
	}
	io.WriteString(jsonW, "]\n")
	csvW.Flush()
	if err := csvW.Error(); err != nil {
		closeAll()
		return 0, fmt.Errorf("write live.csv: %w", err)
	}
	return n, closeAll()
}

type liveRecord struct {
	Host     string         `json:"host"`
	Software string         `json:"software"`
	Version  string         `json:"version"`
	Users    *int64         `json:"users"`
	State    observer.State `json:"state"`
}

func (b *builder) writeNewCSV(list []observer.Instance) error {
	if b.out.has("new.csv") {
		return nil
	}
	var sb strings.Builder
	w := csv.NewWriter(&sb)
	// state last: a host stays new for the whole window whatever happens
	// to it, and a moved or dead one should not read as running.
	w.Write([]string{"host", "software", "version", "users", "active_month", "open_registrations", "name", "description", "first_seen", "discovered_at", "state"})
	for _, i := range list {
		w.Write(inertRow(i.Host, i.Software, i.Version, optInt(i.Users), optInt(i.ActiveMonth), optBool(i.OpenRegistrations),
			i.Name, i.Description, csvTime(i.FirstAliveAt), csvTime(i.DiscoveredAt), string(i.State)))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("write new.csv: %w", err)
	}
	return b.out.writeFile("new.csv", "the new list", []byte(sb.String()))
}

// inertRow defuses spreadsheet formulas: a cell that starts with one of the
// characters spreadsheets treat as a formula (or a tab or carriage return,
// which some strip before looking) gets a leading apostrophe, as OWASP
// recommends against CSV injection.
func inertRow(cells ...string) []string {
	for i, c := range cells {
		cells[i] = inertCell(c)
	}
	return cells
}

func inertCell(c string) string {
	if c != "" && formulaChar(c[0]) {
		c = "'" + c
	}
	if !strings.Contains(c, ";") {
		return c
	}
	// A spreadsheet whose list separator is ';' (Excel in much of Europe)
	// splits the line at every ';', and a quote in the middle of what it
	// takes for a cell is no quote to it, so the text after a ';' starts a
	// cell there: software "x;=cmd|' /C calc'!A0" was a formula. That text
	// gets the apostrophe too, after any spaces (which a spreadsheet may
	// trim), and so does one starting with a quote, which would open a
	// quoted cell that can hold a formula.
	parts := strings.Split(c, ";")
	for i, p := range parts[1:] {
		if rest := strings.TrimLeft(p, " "); rest != "" && (formulaChar(rest[0]) || rest[0] == '"') {
			parts[i+1] = p[:len(p)-len(rest)] + "'" + rest
		}
	}
	return strings.Join(parts, ";")
}

func formulaChar(c byte) bool {
	switch c {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

func optInt(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
}

func optBool(p *bool) string {
	if p == nil {
		return ""
	}
	return strconv.FormatBool(*p)
}

func csvTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

type sitemapURL struct {
	Loc     string `xml:"loc"`
	LastMod string `xml:"lastmod,omitempty"`
}

type sitemapSet struct {
	XMLName xml.Name     `xml:"urlset"`
	Xmlns   string       `xml:"xmlns,attr"`
	URLs    []sitemapURL `xml:"url"`
}

func (b *builder) writeSitemap(pages []*Page) error {
	if b.out.has("sitemap.xml") {
		return nil
	}
	sm := sitemapSet{Xmlns: "http://www.sitemaps.org/schemas/sitemap/0.9"}
	for _, p := range pages {
		sm.URLs = append(sm.URLs, sitemapURL{Loc: p.perma, LastMod: dateOnly(p.Lastmod())})
	}
	data, err := xml.MarshalIndent(sm, "", "  ")
	if err != nil {
		return fmt.Errorf("write sitemap.xml: %w", err)
	}
	return b.out.writeFile("sitemap.xml", "the sitemap", append([]byte(xml.Header), append(data, '\n')...))
}

func (b *builder) writeRobots() error {
	if b.out.has("robots.txt") {
		return nil
	}
	body := "User-agent: *\nAllow: /\n\nSitemap: " + b.site.absPath("sitemap.xml") + "\n"
	return b.out.writeFile("robots.txt", "the generated robots.txt", []byte(body))
}
