package build

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fediverse-observer/observer/lockfile"
)

// siteSources are the site directory's inputs, which an output directory
// must neither be, hold nor sit in.
var siteSources = []string{"content", "layouts", "static", "themes"}

// SourceError is CheckOutDir's error about one of the paths it protects
// (the site directory, one of its sources, the data directory, the config
// file) rather than about the output: one that cannot be resolved, such as
// a symbolic link in a loop. A caller that reports CheckOutDir's errors as
// a bad output flag tells this one apart with errors.As, since the output
// is not what is wrong.
type SourceError struct {
	Path string
	Err  error
}

func (e *SourceError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *SourceError) Unwrap() error { return e.Err }

// CheckOutDir refuses an output directory that a build, which replaces it as
// a whole, would destroy something with: the site directory or a directory
// holding it, one of the site's sources (content/, layouts/, static/,
// themes/) or a directory inside or holding one, any of the other given
// paths (the data directory, the config file) likewise, the file system's
// root, or an existing file that is not a directory (a symbolic link
// included). An output inside the site directory (public/) is the usual
// case and is fine. Paths are compared after symbolic links are resolved,
// so a link cannot hide an overlap.
func CheckOutDir(out, siteDir string, others ...string) error {
	if out == "" {
		return errors.New("output directory: empty")
	}
	o, err := resolvePath(out)
	if err != nil {
		return fmt.Errorf("output %s: %w", out, err)
	}
	if filepath.Dir(o) == o {
		return fmt.Errorf("output %s is the file system's root", out)
	}
	site, err := resolvePath(siteDir)
	if err != nil {
		return &SourceError{Path: siteDir, Err: fmt.Errorf("site directory: %w", err)}
	}
	if within(site, o) {
		return fmt.Errorf("output %s would replace the site directory %s, which it holds", out, siteDir)
	}
	protected := make([]string, 0, len(siteSources)+len(others))
	for _, s := range siteSources {
		protected = append(protected, filepath.Join(siteDir, s))
	}
	for _, p := range others {
		if p != "" {
			protected = append(protected, p)
		}
	}
	for _, p := range protected {
		r, err := resolvePath(p)
		if err != nil {
			return &SourceError{Path: p, Err: err}
		}
		switch {
		case within(r, o):
			return fmt.Errorf("output %s would replace %s, which it holds", out, p)
		case within(o, r):
			return fmt.Errorf("output %s is inside %s: a build there would mix the site into its inputs", out, p)
		}
	}
	if st, err := os.Lstat(out); err == nil && !st.IsDir() {
		return notADirectory(out, st)
	}
	return checkBuiltHere(out)
}

// notADirectory is the error for an output that exists (st, from Lstat) and
// is not a directory. A symbolic link is refused even when it points to a
// directory: the swap would replace the link, not its target, so whatever
// serves the target would keep the old site while every build reported
// success. Its message names the target, which is the output to give.
func notADirectory(out string, st fs.FileInfo) error {
	if st.Mode()&fs.ModeSymlink == 0 {
		return fmt.Errorf("output %s exists and is not a directory", out)
	}
	target, err := os.Readlink(out)
	if err != nil {
		return fmt.Errorf("output %s is a symbolic link: give the directory itself", out)
	}
	return fmt.Errorf("output %s is a symbolic link (to %s): give the directory itself", out, target)
}

// siteMarker is the file every build writes at the top of its output, by
// which a later build knows the directory it is about to replace is a site
// it built and not, say, /etc or a folder of notes given by mistake.
const siteMarker = ".observer-build"

const siteMarkerText = "Built by observer. `observer build` replaces this directory as a whole.\n"

// checkBuiltHere refuses an existing output directory that is neither empty
// nor marked as built by observer: a build replaces its output whole, so
// whatever else is in it would be deleted.
func checkBuiltHere(out string) error {
	entries, err := os.ReadDir(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output %s: %w", out, unwrapPath(err))
	}
	if len(entries) == 0 {
		return nil
	}
	if st, err := os.Lstat(filepath.Join(out, siteMarker)); err == nil && st.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("output %s is not empty and was not built by observer (it has no %s): a build replaces its output as a whole, "+
		"so it would delete what is there; give an empty or new directory (if it is a site an earlier observer built, mark it: touch %s)",
		out, siteMarker, filepath.Join(out, siteMarker))
}

// unwrapPath drops an fs.PathError's operation and path, which the caller's
// message already names.
func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

// resolvePath makes p absolute and resolves the symbolic links of its
// longest existing prefix (the rest does not exist yet, so holds none).
func resolvePath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for cur := abs; ; {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			// EvalSymlinks says "EvalSymlinks: too many links" for a loop;
			// stat names the cause as the system does ("too many levels
			// of symbolic links"), and the caller names the path.
			if _, serr := os.Stat(cur); serr != nil {
				return "", unwrapPath(serr)
			}
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether path p is dir or inside it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// WatchPaths lists what `observer serve` watches for a site: its content,
// layouts, static files and themes, the data directory, and the files it is
// built with (the config file, the blocklist; "" for none).
func WatchPaths(siteDir, dataDir string, files ...string) []string {
	var p []string
	for _, s := range siteSources {
		p = append(p, filepath.Join(siteDir, s))
	}
	for _, f := range append([]string{dataDir}, files...) {
		if f != "" {
			p = append(p, f)
		}
	}
	return p
}

// LockOutput locks the output directory for one build (or one preview) at
// a time. The lock file sits beside the directory, not in it: a build
// replaces the directory as a whole. Two builds into the same directory
// would each stage a site and swap it in; the second now fails at once,
// naming the pid of the first. Release the lock after the build; a build
// under it is told so with Options.OutputLocked.
func LockOutput(out string) (*lockfile.Lock, error) {
	out = filepath.Clean(out)
	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("output %s: %w", out, err)
	}
	lock, err := lockfile.Acquire(filepath.Join(parent, "."+filepath.Base(out)+".lock"))
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", out, err)
	}
	return lock, nil
}
