// Package buildtest provides in-memory data sources and content generators
// for tests and benchmarks of the site builder (and of anything that drives
// it). Nothing here touches a database.
package buildtest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
)

// Fake is a Data held in memory.
type Fake struct {
	NewList     []observer.Instance // newest first
	LiveList    []observer.Instance // sorted by host
	StatsValue  observer.Stats
	Transitions []observer.Transition
	// QueryFunc answers Query; nil answers every query with no rows.
	QueryFunc func(query string, args ...any) ([]map[string]any, error)
	// LiveErr, if set, is yielded after the live list, to test failures.
	LiveErr error
}

func (f *Fake) NewInstances(ctx context.Context) iter.Seq2[observer.Instance, error] {
	return seq(ctx, f.NewList, nil)
}

func (f *Fake) LiveInstances(ctx context.Context) iter.Seq2[observer.Instance, error] {
	return seq(ctx, f.LiveList, f.LiveErr)
}

func seq(ctx context.Context, list []observer.Instance, tail error) iter.Seq2[observer.Instance, error] {
	return func(yield func(observer.Instance, error) bool) {
		for _, inst := range list {
			if err := ctx.Err(); err != nil {
				yield(observer.Instance{}, err)
				return
			}
			if !yield(inst, nil) {
				return
			}
		}
		if tail != nil {
			yield(observer.Instance{}, tail)
		}
	}
}

func (f *Fake) Stats(context.Context) (observer.Stats, error) { return f.StatsValue, nil }

func (f *Fake) RecentTransitions(_ context.Context, limit int) ([]observer.Transition, error) {
	return f.Transitions[:min(limit, len(f.Transitions))], nil
}

func (f *Fake) Query(_ context.Context, query string, args ...any) ([]map[string]any, error) {
	if f.QueryFunc == nil {
		return nil, nil
	}
	return f.QueryFunc(query, args...)
}

// Hostile strings an instance could put into its NodeInfo.
var Hostile = []string{
	`<script>alert(1)</script>`,
	`"quoted" 'single' & ampersand`,
	`=HYPERLINK("http://evil.example/","click")`,
	`+SUM(1,2)`,
	`-2+3`,
	`@cmd`,
	"\tTAB",
	`</textarea><img src=x onerror=alert(2)>`,
	`]]></content><script>alert(3)</script>`,
}

var software = []string{"mastodon", "misskey", "lemmy", "pleroma", "gotosocial", "peertube", "akkoma", "sharkey", "pixelfed", "writefreely"}

func ptr[T any](v T) *T { return &v }

// Sample returns a Fake with n new instances (the first ones carrying the
// Hostile strings), 4n live ones, a year of daily history and some
// transitions, all relative to now.
func Sample(n int, now time.Time) *Fake {
	now = now.UTC()
	f := &Fake{}
	for i := range n {
		inst := observer.Instance{
			Host:              fmt.Sprintf("new%03d.example.net", i),
			State:             observer.StateLive,
			Software:          software[i%len(software)],
			Version:           fmt.Sprintf("4.%d.%d", i%4, i%7),
			Users:             ptr(int64(i * 37 % 1500)),
			ActiveMonth:       ptr(int64(i * 11 % 300)),
			OpenRegistrations: ptr(i%3 == 0),
			Name:              fmt.Sprintf("Instance number %d", i),
			Description:       "A friendly place for people who like " + []string{"cats", "bicycles", "knitting", "astronomy", "Go"}[i%5] + ". Be kind.",
			DiscoveredAt:      now.Add(-time.Duration(i)*11*time.Hour - 3*time.Hour),
			FirstAliveAt:      now.Add(-time.Duration(i) * 11 * time.Hour),
			LastAliveAt:       now.Add(-time.Hour),
		}
		if i%6 == 5 {
			inst.Users = nil
			inst.Description = ""
		}
		if i < len(Hostile) {
			h := Hostile[i]
			inst.Name, inst.Description, inst.Version = h, h, h
			inst.Software = []string{h, "mastodon"}[i%2]
		}
		f.NewList = append(f.NewList, inst)
		f.LiveList = append(f.LiveList, inst)
	}
	for i := range 3 * n {
		f.LiveList = append(f.LiveList, observer.Instance{
			Host: fmt.Sprintf("old%04d.example.org", i), State: observer.StateLive,
			Software: software[(i*7)%len(software)], Version: "1.0", Users: ptr(int64(i * 101 % 9000)),
			FirstAliveAt: now.AddDate(-1, 0, -i%90), LastAliveAt: now.Add(-2 * time.Hour),
		})
	}
	slices.SortFunc(f.LiveList, func(a, b observer.Instance) int { return strings.Compare(a.Host, b.Host) })
	f.StatsValue = statsFor(f.LiveList, int64(n), now)
	for i := range 30 {
		f.Transitions = append(f.Transitions, observer.Transition{
			Host: f.LiveList[i%len(f.LiveList)].Host, From: observer.StateDying, To: observer.StateLive,
			At: now.Add(-time.Duration(i) * 37 * time.Minute),
		})
	}
	return f
}

func statsFor(live []observer.Instance, newCount int64, now time.Time) observer.Stats {
	st := observer.Stats{Live: int64(len(live)), New: newCount}
	counts := map[string]int64{}
	for _, inst := range live {
		counts[inst.Software]++
	}
	for sw, c := range counts {
		st.BySoftware = append(st.BySoftware, observer.SoftwareCount{Software: sw, Live: c})
	}
	slices.SortFunc(st.BySoftware, func(a, b observer.SoftwareCount) int {
		if a.Live != b.Live {
			return int(b.Live - a.Live)
		}
		return strings.Compare(a.Software, b.Software)
	})
	day := now.Truncate(24 * time.Hour)
	for d := 365; d >= 0; d-- {
		st.Days = append(st.Days, observer.DayCount{
			Day:  day.AddDate(0, 0, -d),
			Live: int64(len(live)) * int64(400+365-d) / 765,
			New:  int64((d*7919)%5 + (365-d)/120),
		})
	}
	return st
}

// Generated is a Data of many synthetic instances, produced on the fly so
// that a benchmark measures the builder's memory, not the fake's.
type Generated struct {
	Live, New int
	Now       time.Time
}

func (g *Generated) instance(i int, prefix string) observer.Instance {
	return observer.Instance{
		Host:         fmt.Sprintf("%s%08d.example.net", prefix, i),
		State:        observer.StateLive,
		Software:     software[i%len(software)],
		Version:      fmt.Sprintf("4.%d.%d", i%5, i%9),
		Users:        ptr(int64(i % 5000)),
		Name:         fmt.Sprintf("Instance %d", i),
		Description:  "Generated instance for benchmarks.",
		FirstAliveAt: g.Now.Add(-time.Duration(i) * time.Minute),
	}
}

func (g *Generated) NewInstances(ctx context.Context) iter.Seq2[observer.Instance, error] {
	return func(yield func(observer.Instance, error) bool) {
		for i := range g.New {
			if !yield(g.instance(i, "n"), nil) {
				return
			}
		}
	}
}

func (g *Generated) LiveInstances(ctx context.Context) iter.Seq2[observer.Instance, error] {
	return func(yield func(observer.Instance, error) bool) {
		for i := range g.Live {
			if i%65536 == 0 && ctx.Err() != nil {
				yield(observer.Instance{}, ctx.Err())
				return
			}
			if !yield(g.instance(i, "h"), nil) {
				return
			}
		}
	}
}

func (g *Generated) Stats(context.Context) (observer.Stats, error) {
	st := observer.Stats{Live: int64(g.Live), New: int64(g.New)}
	for i, sw := range software {
		st.BySoftware = append(st.BySoftware, observer.SoftwareCount{Software: sw, Live: int64(g.Live / len(software) * (len(software) - i) / len(software))})
	}
	day := g.Now.Truncate(24 * time.Hour)
	for d := 1000; d >= 0; d-- {
		st.Days = append(st.Days, observer.DayCount{Day: day.AddDate(0, 0, -d), Live: int64(g.Live * (2000 - d) / 2000), New: int64(d % 40)})
	}
	return st, nil
}

func (g *Generated) RecentTransitions(context.Context, int) ([]observer.Transition, error) {
	return nil, nil
}

func (g *Generated) Query(context.Context, string, ...any) ([]map[string]any, error) {
	return nil, errors.New("no SQL in generated data")
}

// WritePages writes n Markdown pages into dir (content/ of a site): the same
// pages for our benchmark and for Hugo's (scripts/bench-hugo.sh).
func WritePages(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "---\ntitle: \"Page %d\"\ndate: 2024-01-%02dT10:00:00Z\ndescription: \"Generated page number %d\"\n---\n", i, i%28+1, i)
		fmt.Fprintf(&b, "# Section %d\n\nThis is **page %d** of a generated site, with a [link](https://example.org/%d) and some *emphasis*.\n\n", i, i, i)
		b.WriteString("| Host | Software | Users |\n|---|---|---:|\n")
		for r := range 5 {
			fmt.Fprintf(&b, "| host%d-%d.example | mastodon | %d |\n", i, r, r*i)
		}
		b.WriteString("\n## A list\n\n- one\n- two with `code`\n- three~~struck~~\n\nA footnote reference.[^1]\n\n[^1]: The footnote.\n\n")
		for p := range 4 {
			fmt.Fprintf(&b, "Paragraph %d. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris.\n\n", p)
		}
		name := filepath.Join(dir, fmt.Sprintf("page-%05d.md", i))
		if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// WriteTree writes files (slash paths relative to dir, with their contents)
// and returns dir, for tests that make a site on disk.
func WriteTree(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// WriteArchive writes a site given as one text in the txtar form Hugo's
// integration tests use: each file starts with a line "-- PATH --", and
// its content is the lines up to the next such line. As in Hugo's tests,
// the newline that ends a file's last line is not part of the file, so a
// page compared to the byte reads as its layout is written; a file that
// must end in a newline ends with an empty line.
func WriteArchive(t testing.TB, dir, archive string) string {
	t.Helper()
	files := map[string]string{}
	var name string
	var body strings.Builder
	flush := func() {
		if name != "" {
			files[name] = strings.TrimSuffix(body.String(), "\n")
		}
		body.Reset()
	}
	for line := range strings.SplitAfterSeq(archive, "\n") {
		trimmed := strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			flush()
			name = strings.TrimSpace(trimmed[3 : len(trimmed)-3])
			continue
		}
		if name != "" {
			body.WriteString(line)
		}
	}
	flush()
	return WriteTree(t, dir, files)
}
