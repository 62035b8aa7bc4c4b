// Package build renders the site: the derived instance data and the site's
// own Markdown content, through a Hugo-like theme, into a directory of plain
// files (public/) that any web server can serve. It never talks to the
// crawler or the database directly; it reads the data through the Data
// interface, which the caller implements. The live preview around it is
// package preview.
package build

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/build/internal/funcs"
)

// Data is what the builder needs from the derived state. Lists are streamed so
// memory does not grow with the number of live hosts. Pages render in
// parallel, so the methods may be called concurrently; a LiveInstances
// stream may be started more than once per build (the lists, then any
// template that ranges over .Data.Live).
type Data interface {
	// NewInstances yields the new instances, newest first (FirstAliveAt
	// descending, then host ascending).
	NewInstances(ctx context.Context) iter.Seq2[observer.Instance, error]
	// LiveInstances yields the live instances sorted by host (byte order).
	LiveInstances(ctx context.Context) iter.Seq2[observer.Instance, error]
	Stats(ctx context.Context) (observer.Stats, error)
	// RecentTransitions returns at most limit transitions, newest first.
	RecentTransitions(ctx context.Context, limit int) ([]observer.Transition, error)
	// Query runs a read-only SQL query over the same views as `observer sql`
	// (listed in docs/data.md) for the templates' `sql` function; rows as
	// column->value maps.
	Query(ctx context.Context, query string, args ...any) ([]map[string]any, error)
}

// Options says what to build and where.
type Options struct {
	Site Settings
	// SiteDir holds content/, layouts/, static/ and themes/. Missing
	// directories are fine: the embedded default theme covers a bare site.
	SiteDir string
	// OutDir is replaced as a whole by the new site (see Build).
	OutDir string
	Data   Data
	// Now is the build time (zero: time.Now()). Templates see it as
	// .Site.Now; the default theme does not print it, so that unchanged data
	// gives byte-identical files.
	Now    time.Time
	Logger *slog.Logger
	// OutputLocked says the caller holds the output's lock (observer build
	// and serve do), so no other build can be staging beside it: a staging
	// directory found there is a killed build's and is removed at once.
	// Without it, only those older than an hour are.
	OutputLocked bool
}

// Report counts what a build did.
type Report struct {
	Files     int   // files in the new site
	Written   int   // files whose content changed or that are new
	Unchanged int   // files kept as they were (same content, same mtime)
	Removed   int   // files of the previous site that are no longer produced
	Pages     int   // content pages rendered (drafts excluded)
	Live      int64 // live instances listed
	New       int   // new instances listed
	Duration  time.Duration
}

// FeedLimit caps the entries of one Atom feed: feed readers poll often, and
// the newest entries are the ones they have not seen. The HTML and CSV lists
// are complete.
const FeedLimit = 1000

// Build renders the site into a staging directory next to OutDir and then
// swaps it into place, so that readers see either the old or the new site,
// never a mixture. If anything fails, OutDir is left as it was. Files whose
// content did not change keep their inode and modification time; files the
// new build does not produce are gone.
func Build(ctx context.Context, opts Options) (Report, error) {
	start := time.Now()
	var rep Report
	if opts.Data == nil {
		return rep, errors.New("build: no data source")
	}
	// Instance texts are cleaned once, here, for every output (clean.go).
	opts.Data = cleanData{opts.Data}
	if opts.OutDir == "" {
		return rep, errors.New("build: no output directory")
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SiteDir == "" {
		opts.SiteDir = "."
	}
	if err := CheckOutDir(opts.OutDir, opts.SiteDir); err != nil {
		return rep, err
	}

	th, err := openTheme(opts.SiteDir, opts.Site.Theme)
	if err != nil {
		return rep, err
	}
	site, err := newSite(opts)
	if err != nil {
		return rep, err
	}
	st := &funcState{site: site}
	fm, err := templateFuncs(st, b4funcs(opts, site, th, st))
	if err != nil {
		return rep, err
	}
	tpl, err := loadTemplates(th, fm, st)
	if err != nil {
		return rep, err
	}
	assets, err := loadContent(ctx, filepath.Join(opts.SiteDir, "content"), site)
	if err != nil {
		return rep, err
	}
	rep.Pages = len(site.regular)

	out, err := newOutput(opts.OutDir, opts.OutputLocked)
	if err != nil {
		return rep, err
	}
	defer out.discard()
	st.out = out

	b := &builder{opts: opts, site: site, tpl: tpl, out: out, theme: th}
	site.renderView = b.renderView
	if err := b.run(ctx, assets, &rep); err != nil {
		return rep, err
	}
	leftover, err := out.commit()
	if err != nil {
		return rep, err
	}
	if leftover != nil {
		opts.Logger.Warn("site built, but the previous site is left beside it; a later build removes it", "err", leftover)
	}
	rep.Files, rep.Written, rep.Unchanged, rep.Removed = out.stats()
	rep.Duration = time.Since(start)
	opts.Logger.Info("site built", "out", opts.OutDir, "files", rep.Files, "written", rep.Written,
		"unchanged", rep.Unchanged, "removed", rep.Removed, "pages", rep.Pages,
		"live", rep.Live, "new", rep.New, "duration", rep.Duration.Round(time.Millisecond))
	return rep, nil
}

type builder struct {
	opts  Options
	site  *Site
	tpl   *templates
	out   *output
	theme *theme
}

func (b *builder) run(ctx context.Context, assets []asset, rep *Report) error {
	// The marker first, so that a static file of its name is an error.
	if err := b.out.writeFile(siteMarker, "observer build", []byte(siteMarkerText)); err != nil {
		return err
	}
	// Static files first: a generated file of the same path is then skipped,
	// so a site can replace e.g. robots.txt by putting its own in static/.
	if err := b.copyStatic(ctx); err != nil {
		return err
	}
	for _, a := range assets {
		if err := b.out.copyFile(a.rel, a.src); err != nil {
			return err
		}
	}

	newList, err := collectNew(ctx, b.opts.Data)
	if err != nil {
		return err
	}
	rep.New = len(newList)
	stats, err := b.opts.Data.Stats(ctx)
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	feeds := softwareFeeds(newList, stats.BySoftware, b.site)
	dv := &DataView{ctx: ctx, data: b.opts.Data, newList: newList, stats: stats, feeds: feeds}
	b.site.Data = map[string]any{"observer": dv}
	b.tpl.state.data = dv

	live, err := b.writeLiveLists(ctx)
	if err != nil {
		return err
	}
	rep.Live = live
	if err := b.writeNewCSV(newList); err != nil {
		return err
	}
	if err := b.writeFeeds(newList, feeds); err != nil {
		return err
	}

	livePage := b.site.ownPage("live", "Live instances", "live/")
	livePage.description = "How many Fediverse instances the observer sees alive, by software and over time."
	notFound := b.site.ownPage("404", "404 Page not found", "404.html")
	pages := append(slices.Clone(b.site.all), livePage, notFound)
	if err := b.render(ctx, pages); err != nil {
		return err
	}
	sitemap := append(slices.Clone(b.site.all), livePage)
	if err := b.writeSitemap(sitemap); err != nil {
		return err
	}
	return b.writeRobots()
}

// b4funcs is what Hugo's functions need from the build: the base URL,
// the Markdown renderer, the build's clock, the site's files, assets and
// translations (the site's over the theme's), and where resources are
// published.
func b4funcs(opts Options, site *Site, th *theme, st *funcState) funcs.Options {
	md := newMarkdown(site.unsafeHTML)
	dirs := func(sub string) []fs.FS {
		out := []fs.FS{os.DirFS(filepath.Join(opts.SiteDir, sub))}
		if th.dir != "" {
			out = append(out, os.DirFS(filepath.Join(th.dir, sub)))
		}
		return out
	}
	i18n, err := funcs.LoadI18n(dirs("i18n")...)
	if err != nil {
		opts.Logger.Warn("translations not read", "err", err)
	}
	return funcs.Options{
		BaseURL: site.BaseURL,
		Markdown: func(src string) (string, error) {
			var buf bytes.Buffer
			err := md.Convert([]byte(src), &buf)
			return buf.String(), err
		},
		Now:             func() time.Time { return opts.Now },
		Files:           os.DirFS(opts.SiteDir),
		Assets:          layeredFS(dirs("assets")),
		I18n:            i18n,
		Language:        site.LanguageCode,
		DefaultLanguage: site.LanguageCode,
		Logger:          opts.Logger,
		Environment:     "production",
		Publish: func(rel string, data []byte) error {
			if st.out == nil {
				return fmt.Errorf("resource %s: published before the output exists", rel)
			}
			return st.out.writeFile(rel, "the resource "+rel, data)
		},
	}
}

// layeredFS reads a file from the first of its layers that has it.
type layeredFS []fs.FS

func (l layeredFS) Open(name string) (fs.File, error) {
	for _, f := range l {
		file, err := f.Open(name)
		if err == nil {
			return file, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// collectNew reads the whole new list: it is bounded by the new window (30
// days of first sightings), is used several times (home page, feeds, CSV),
// and templates index into it.
func collectNew(ctx context.Context, d Data) ([]observer.Instance, error) {
	var list []observer.Instance
	for inst, err := range d.NewInstances(ctx) {
		if err != nil {
			return nil, fmt.Errorf("new instances: %w", err)
		}
		list = append(list, inst)
	}
	// The order is part of the contract, but a cheap check keeps a data
	// source that gets it wrong from shuffling the feeds.
	if !slices.IsSortedFunc(list, newOrder) {
		slices.SortStableFunc(list, newOrder)
	}
	return list, nil
}

func newOrder(a, b observer.Instance) int {
	if c := b.FirstAliveAt.Compare(a.FirstAliveAt); c != 0 {
		return c
	}
	return cmp.Compare(a.Host, b.Host)
}
