// Package preview serves a site's output directory on loopback while the
// operator edits it: it builds once, watches the site's inputs, rebuilds
// through a callback after each batch of changes and tells open pages to
// reload. It knows nothing of how a site is built (the callback does that).
package preview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Options configures the live preview.
type Options struct {
	// Port to listen on at 127.0.0.1; 0 picks a free port.
	Port int
	// OutDir is the directory Rebuild writes and the server serves.
	OutDir string
	// Watch lists the files and directories whose changes trigger a rebuild
	// (directories with all their subdirectories); build.WatchPaths lists a
	// site's. Paths
	// that do not exist yet are skipped.
	Watch []string
	// Ignore lists files and directories under Watch whose changes never
	// trigger a rebuild. Anything Rebuild itself writes must be here (for
	// example a derived database under the data directory), or each
	// rebuild would trigger the next.
	Ignore []string
	// Rebuild builds the site into OutDir, with baseURL (the preview's own
	// address, e.g. "http://127.0.0.1:1313/") as site.base_url, so that
	// links work in the preview. Serve calls it once at the start and after
	// every batch of changes; the caller re-reads config and data there.
	Rebuild func(ctx context.Context, baseURL string) error
	// Debounce is the quiet time after a change before rebuilding, so that an
	// editor's save or a crawl's burst of writes gives one rebuild (default
	// 300ms).
	Debounce time.Duration
	Logger   *slog.Logger
	// Ready, if set, is called with the preview's URL once it listens.
	Ready func(url string)
	// Rebuilt, if set, is called after each rebuild triggered by a change,
	// with its error (for tests and progress output).
	Rebuilt func(error)
}

// reloadPath is the server-sent events endpoint the preview's pages listen
// on. The script is added to HTML responses by the server only; the files in
// OutDir never contain it.
const reloadPath = "/__reload"

const reloadScript = `<script>new EventSource("` + reloadPath + `").onmessage = function () { location.reload(); };</script>`

// Serve builds the site, serves OutDir on 127.0.0.1 and rebuilds on changes,
// telling open pages to reload after each successful rebuild. A failed build
// is logged and the previous site stays up. Serve returns when ctx ends.
func Serve(ctx context.Context, opts Options) error {
	if opts.Rebuild == nil || opts.OutDir == "" {
		return errors.New("preview: need OutDir and Rebuild")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 300 * time.Millisecond
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.Port)))
	if err != nil {
		return err
	}
	baseURL := "http://" + ln.Addr().String() + "/"

	w, err := newWatcher(opts.Watch, append([]string{opts.OutDir}, opts.Ignore...), opts.Logger)
	if err != nil {
		ln.Close()
		return err
	}
	defer w.close()

	if err := opts.Rebuild(ctx, baseURL); err != nil {
		opts.Logger.Error("build failed; fix it and save to retry", "err", err)
	}

	hub := &reloadHub{subs: map[chan int]bool{}}
	srv := &http.Server{Handler: &previewHandler{dir: opts.OutDir, hub: hub}, ReadHeaderTimeout: 10 * time.Second}
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.Serve(ln) }()
	opts.Logger.Info("serving the preview", "url", baseURL, "dir", opts.OutDir)
	if opts.Ready != nil {
		opts.Ready(baseURL)
	}

	var timer *time.Timer
	var fire <-chan time.Time
	generation := 0
	for {
		select {
		case <-ctx.Done():
			hub.closeAll()
			shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Shutdown(shutCtx)
			return nil
		case err := <-srvErr:
			return fmt.Errorf("preview server: %w", err)
		case ev, ok := <-w.events():
			if !ok {
				return errors.New("the file watcher stopped")
			}
			if !w.relevant(ev) {
				continue
			}
			opts.Logger.Debug("change", "path", ev.Name, "op", ev.Op.String())
			if timer == nil {
				timer = time.NewTimer(opts.Debounce)
			} else {
				timer.Reset(opts.Debounce)
			}
			fire = timer.C
		case err, ok := <-w.errors():
			if ok {
				opts.Logger.Warn("file watcher", "err", err)
			}
		case <-fire:
			fire = nil
			err := opts.Rebuild(ctx, baseURL)
			if err != nil {
				opts.Logger.Error("build failed; the previous site stays up", "err", err)
			} else {
				generation++
				hub.broadcast(generation)
			}
			if opts.Rebuilt != nil {
				opts.Rebuilt(err)
			}
		}
	}
}

// watcher wraps fsnotify, which watches single directories, to follow whole
// trees and single files, and paths that do not exist yet (a site without a
// static/ folder, say): for those it watches the nearest existing parent
// until they appear.
type watcher struct {
	fw      *fsnotify.Watcher
	roots   []string        // directories watched with their subdirectories
	files   map[string]bool // single files (their directory is watched)
	pending map[string]bool // paths to watch once they exist
	skip    []string        // absolute paths never watched: the output and opts.Ignore
	log     *slog.Logger
}

func newWatcher(paths, skip []string, log *slog.Logger) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("file watcher: %w", err)
	}
	w := &watcher{fw: fw, files: map[string]bool{}, pending: map[string]bool{}, log: log}
	for _, p := range skip {
		if abs, err := filepath.Abs(p); err == nil {
			w.skip = append(w.skip, abs)
		}
	}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if !w.activate(abs) {
			log.Debug("watching for a path that does not exist yet", "path", abs)
			w.pending[abs] = true
			w.watchNearestParent(abs)
		}
	}
	return w, nil
}

// activate starts watching p if it exists: a directory with its tree, a
// file through its directory.
func (w *watcher) activate(p string) bool {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return false
	case st.IsDir():
		w.roots = append(w.roots, p)
		w.addTree(p)
	default:
		// Editors save by renaming a new file over the old one, which ends
		// a watch on the file itself; watch its directory instead.
		w.files[p] = true
		if err := w.fw.Add(filepath.Dir(p)); err != nil {
			w.log.Warn("cannot watch", "path", p, "err", err)
		}
	}
	return true
}

// watchNearestParent watches the deepest existing directory above p, where
// the creation of p (or of the next folder on the way to it) shows.
func (w *watcher) watchNearestParent(p string) {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			if err := w.fw.Add(d); err != nil {
				w.log.Warn("cannot watch", "path", d, "err", err)
			}
			return
		}
		if d == filepath.Dir(d) {
			return
		}
	}
}

// appeared handles the creation of p for the pending paths: it reports
// whether one of them now exists (and is watched); for a folder on the way
// to one, it watches that folder instead of its parent.
func (w *watcher) appeared(p string) bool {
	found := false
	for want := range w.pending {
		if want != p && !strings.HasPrefix(want, p+string(filepath.Separator)) {
			continue
		}
		// Checked whatever p is: MkdirAll may have made the whole path
		// before this watch saw its first folder.
		if w.activate(want) {
			delete(w.pending, want)
			found = true
		} else {
			w.watchNearestParent(want)
		}
	}
	return found
}

func (w *watcher) addTree(root string) {
	// WalkDir does not follow a root that is a symbolic link, and a linked
	// content/ (which the build follows) went unwatched. With a trailing
	// separator it does, and the paths below keep the name given, which the
	// watch's events then carry.
	if st, err := os.Lstat(root); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		root += string(filepath.Separator)
	}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if p != root && w.ignored(p) {
			return fs.SkipDir
		}
		if err := w.fw.Add(p); err != nil {
			w.log.Warn("cannot watch", "path", p, "err", err)
		}
		return nil
	})
}

// ignored: the output, opts.Ignore, hidden files (staging directories,
// lock files) and editor backups.
func (w *watcher) ignored(p string) bool {
	for _, s := range w.skip {
		if p == s || strings.HasPrefix(p, s+string(filepath.Separator)) {
			return true
		}
	}
	base := filepath.Base(p)
	return strings.HasPrefix(base, ".") || strings.HasSuffix(base, "~") || strings.HasSuffix(base, ".swp") ||
		strings.HasPrefix(base, "#")
}

func (w *watcher) relevant(ev fsnotify.Event) bool {
	if ev.Op == fsnotify.Chmod {
		return false
	}
	p := ev.Name
	if ev.Has(fsnotify.Create) && len(w.pending) > 0 && w.appeared(p) {
		return true
	}
	if w.files[p] {
		return true
	}
	for _, r := range w.roots {
		if p == r || strings.HasPrefix(p, r+string(filepath.Separator)) {
			if w.ignored(p) {
				return false
			}
			if ev.Has(fsnotify.Create) {
				if st, err := os.Stat(p); err == nil && st.IsDir() {
					w.addTree(p)
				}
			}
			return true
		}
	}
	return false
}

func (w *watcher) events() <-chan fsnotify.Event { return w.fw.Events }
func (w *watcher) errors() <-chan error          { return w.fw.Errors }
func (w *watcher) close()                        { w.fw.Close() }

// reloadHub fans a rebuild out to the open pages.
type reloadHub struct {
	mu     sync.Mutex
	subs   map[chan int]bool
	closed bool
}

func (h *reloadHub) subscribe() chan int {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := make(chan int, 1)
	if h.closed {
		close(ch)
		return ch
	}
	h.subs[ch] = true
	return ch
}

func (h *reloadHub) unsubscribe(ch chan int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[ch] {
		delete(h.subs, ch)
		close(ch)
	}
}

func (h *reloadHub) broadcast(gen int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- gen:
		default: // a reload is already pending for this page
		}
	}
}

func (h *reloadHub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for ch := range h.subs {
		close(ch)
		delete(h.subs, ch)
	}
}

type previewHandler struct {
	dir string
	hub *reloadHub
}

func (h *previewHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !loopbackHost(r.Host) {
		// A page elsewhere could point its own name at 127.0.0.1 (DNS
		// rebinding) and read the preview, or learn from its reload
		// stream when the site is edited; a preview only answers to the
		// addresses it was opened at.
		http.Error(w, "the preview answers only to 127.0.0.1 and localhost", http.StatusMisdirectedRequest)
		return
	}
	if r.URL.Path == reloadPath {
		h.events(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := path.Clean("/" + r.URL.Path)
	file := filepath.Join(h.dir, filepath.FromSlash(name))
	status := http.StatusOK
	st, err := os.Stat(file)
	if err == nil && st.IsDir() {
		if !strings.HasSuffix(r.URL.Path, "/") {
			// To the cleaned path, escaped: the raw one could begin with
			// "//" (a request for %2Fevil.example%2F..%2Flive), which a
			// browser reads as another host.
			// The query is kept, as a web server's redirect keeps it.
			loc := (&url.URL{Path: strings.TrimSuffix(name, "/") + "/", RawQuery: r.URL.RawQuery}).String()
			http.Redirect(w, r, loc, http.StatusMovedPermanently)
			return
		}
		file = filepath.Join(file, "index.html")
		_, err = os.Stat(file)
	}
	if err != nil {
		file = filepath.Join(h.dir, "404.html")
		status = http.StatusNotFound
	}
	w.Header().Set("Cache-Control", "no-store")
	if !strings.HasSuffix(file, ".html") {
		http.ServeFile(w, r, file)
		return
	}
	body, err := os.ReadFile(file)
	if err != nil {
		http.Error(w, "404 page not found (and no 404.html)", http.StatusNotFound)
		return
	}
	if i := bytes.LastIndex(body, []byte("</body>")); i >= 0 {
		body = append(body[:i:i], append([]byte(reloadScript), body[i:]...)...)
	} else {
		body = append(body, reloadScript...)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

func (h *previewHandler) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch := h.hub.subscribe()
	defer h.hub.unsubscribe(ch)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprint(w, ": connected\n\n")
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case gen, ok := <-ch:
			if !ok {
				return
			}
			fmt.Fprintf(w, "data: %d\n\n", gen)
			fl.Flush()
		}
	}
}

// loopbackHost reports whether a request's Host names the loopback address
// the preview listens on (any port).
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	return host == "127.0.0.1" || strings.EqualFold(host, "localhost")
}
