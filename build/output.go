package build

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// output builds the new site in a staging directory beside the output
// directory (same file system, so the final rename is atomic) and swaps it
// in on commit.
//
// Unchanged files: when a new file's bytes equal the previous site's file at
// the same path, the staging copy is replaced by a hard link to the old file.
// The file therefore keeps its inode and modification time (rsync, web
// caches and If-Modified-Since see no change), costs no second copy on disk,
// and survives the removal of the old tree. Where hard links are not
// possible, or the old file's mode is not the one this build gives its
// files, the new copy gets the old modification time instead.
type output struct {
	dir   string
	stage string

	mu        sync.Mutex
	files     map[string]string // rel path -> what produced it
	written   int
	unchanged int
	removed   int
	committed bool

	// removeAll removes the previous site after the swap (os.RemoveAll;
	// tests make it fail, which root cannot be made to see).
	removeAll func(string) error
	// sync flushes a file or directory to disk (syncPath; tests record
	// the calls, since no test can cut the power).
	sync func(string) error
}

// newOutput prepares the staging directory. locked says no other build
// can be writing beside dir (see Options.OutputLocked).
func newOutput(dir string, locked bool) (*output, error) {
	dir = filepath.Clean(dir)
	if st, err := os.Lstat(dir); err == nil && !st.IsDir() {
		return nil, notADirectory(dir, st)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("create output parent: %w", err)
	}
	prefix := "." + filepath.Base(dir) + ".build-"
	if err := restoreInterruptedSwap(dir, prefix, locked); err != nil {
		return nil, err
	}
	removeStale(parent, prefix, locked)
	stage, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".build-")
	if err != nil {
		return nil, fmt.Errorf("create staging directory: %w", err)
	}
	// MkdirTemp makes the directory private; the site is meant to be served.
	if err := os.Chmod(stage, 0o755); err != nil {
		os.RemoveAll(stage)
		return nil, fmt.Errorf("staging directory: %w", err)
	}
	return &output{dir: dir, stage: stage, files: map[string]string{}, removeAll: os.RemoveAll, sync: syncPath}, nil
}

// staleAfter is how old a staging directory must be before a build that does
// not hold the output's lock takes it for the leftover of a crashed build
// (rather than a concurrent build's) and removes it.
const staleAfter = time.Hour

// restoreInterruptedSwap puts back the site a build killed between the two
// renames of swapByRename left aside as STAGE.old with no dir: without it,
// removeStale would delete the only copy of the published site before the
// new build has even succeeded. Only a build holding the output's lock can
// be sure no swap is still under way: a renamed directory keeps its own
// modification time, so the age of a .old says nothing of when the swap
// began.
func restoreInterruptedSwap(dir, prefix string, locked bool) error {
	if !locked {
		return nil
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	parent := filepath.Dir(dir)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, ".old") {
			continue
		}
		if err := os.Rename(filepath.Join(parent, name), dir); err != nil {
			return fmt.Errorf("restore the site an interrupted build left in %s: %w", filepath.Join(parent, name), err)
		}
		return nil
	}
	return nil
}

// removeStale removes the staging directories of crashed builds: every one
// when the caller holds the output's lock (only a dead build can have left
// one), else those older than staleAfter.
func removeStale(parent, prefix string, locked bool) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if !locked && strings.HasSuffix(e.Name(), ".old") {
			// Perhaps the only copy of the site, mid-swap or left by a
			// killed build: only a locked build may judge (and restores it).
			continue
		}
		if info, err := e.Info(); err == nil && (locked || time.Since(info.ModTime()) > staleAfter) {
			os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

// has reports whether rel was already produced (a static file replacing a
// generated one).
func (o *output) has(rel string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.files[rel]
	return ok
}

// claim reserves rel for source (a file or what generates it, named in
// messages) and returns its staging path.
func (o *output) claim(rel, source string) (string, error) {
	if !fs.ValidPath(rel) || rel == "." {
		return "", fmt.Errorf("invalid output path %q", rel)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if first, dup := o.files[rel]; dup {
		return "", fmt.Errorf("two sources produce %s: %s and %s", rel, first, source)
	}
	o.files[rel] = source
	p := filepath.Join(o.stage, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", path.Dir(rel), err)
	}
	return p, nil
}

func (o *output) count(unchanged bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if unchanged {
		o.unchanged++
	} else {
		o.written++
	}
}

// writeFile writes a small file held in memory.
func (o *output) writeFile(rel, source string, data []byte) error {
	p, err := o.claim(rel, source)
	if err != nil {
		return err
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	old := filepath.Join(o.dir, filepath.FromSlash(rel))
	if st, err := os.Stat(old); err == nil && st.Mode().IsRegular() && st.Size() == int64(len(data)) {
		if prev, err := os.ReadFile(old); err == nil && bytes.Equal(prev, data) {
			if err := keepPrevious(old, p, st); err != nil {
				return fmt.Errorf("keep %s: %w", rel, err)
			}
			o.count(true)
			return nil
		}
	}
	o.count(false)
	return nil
}

// keepPrevious replaces the staged copy p of a file whose content is the
// same as the previous site's file old (ost) by a link to old, so that it
// keeps its inode and modification time, or, where it cannot link, gives
// the copy old's modification time. Only a file with the mode this build
// gives its files is linked: kept whatever its mode, a site built under a
// private umask (files 0600, which the web server cannot read) stayed so
// after a rebuild under the right one, until every file changed.
func keepPrevious(old, p string, ost fs.FileInfo) error {
	nst, err := os.Stat(p)
	if err != nil {
		return err
	}
	if nst.Mode().Perm() == ost.Mode().Perm() {
		tmp := p + ".old"
		if err := os.Link(old, tmp); err == nil {
			if err := os.Rename(tmp, p); err != nil {
				os.Remove(tmp)
				return err
			}
			return nil
		}
	}
	return os.Chtimes(p, ost.ModTime(), ost.ModTime())
}

// stagedFile streams a large file into the staging directory; Close
// compares it with the previous version.
type stagedFile struct {
	o    *output
	rel  string
	path string
	f    *os.File
	w    *bufio.Writer
	err  error
}

func (o *output) create(rel, source string) (*stagedFile, error) {
	p, err := o.claim(rel, source)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", rel, err)
	}
	return &stagedFile{o: o, rel: rel, path: p, f: f, w: bufio.NewWriterSize(f, 256<<10)}, nil
}

func (s *stagedFile) Write(b []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(b)
	if err != nil {
		s.err = fmt.Errorf("write %s: %w", s.rel, err)
	}
	return n, s.err
}

func (s *stagedFile) WriteString(str string) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.WriteString(str)
	if err != nil {
		s.err = fmt.Errorf("write %s: %w", s.rel, err)
	}
	return n, s.err
}

// abort closes the file after a failure; the staging directory goes anyway.
func (s *stagedFile) abort() { s.f.Close() }

func (s *stagedFile) Close() error {
	if s.err != nil {
		s.f.Close()
		return s.err
	}
	if err := s.w.Flush(); err != nil {
		s.f.Close()
		return fmt.Errorf("write %s: %w", s.rel, err)
	}
	if err := s.f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", s.rel, err)
	}
	old := filepath.Join(s.o.dir, filepath.FromSlash(s.rel))
	ost, err := os.Stat(old)
	if err != nil || !ost.Mode().IsRegular() {
		s.o.count(false)
		return nil
	}
	nst, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("write %s: %w", s.rel, err)
	}
	if nst.Size() != ost.Size() {
		s.o.count(false)
		return nil
	}
	same, err := sameContent(old, s.path)
	if err != nil {
		return fmt.Errorf("compare %s: %w", s.rel, err)
	}
	if !same {
		s.o.count(false)
		return nil
	}
	if err := keepPrevious(old, s.path, ost); err != nil {
		return fmt.Errorf("keep %s: %w", s.rel, err)
	}
	s.o.count(true)
	return nil
}

func sameContent(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ba, bb := make([]byte, 128<<10), make([]byte, 128<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		aDone := errors.Is(ea, io.EOF) || errors.Is(ea, io.ErrUnexpectedEOF)
		bDone := errors.Is(eb, io.EOF) || errors.Is(eb, io.ErrUnexpectedEOF)
		if ea != nil && !aDone {
			return false, ea
		}
		if eb != nil && !bDone {
			return false, eb
		}
		if aDone || bDone {
			return aDone == bDone, nil
		}
	}
}

// copyFile copies a file from disk (a content asset).
func (o *output) copyFile(rel, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer f.Close()
	w, err := o.create(rel, src)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, f); err != nil {
		w.abort()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return w.Close()
}

// commit puts the staged site in place of the old one. Once it is in place
// the build has succeeded, whatever comes after: a previous site it cannot
// remove (a file in it the build may not delete) is returned as leftover,
// for a warning, and the next build's removeStale tries again. Reporting it
// as a failure would say the old site stayed when the new one is live. The
// one failure after the swap is syncing it to disk (an I/O error): its
// message says the new site is in place, and the previous one is kept
// aside, since a power cut could still bring it back.
func (o *output) commit() (leftover, err error) {
	if err := o.countRemoved(); err != nil {
		return nil, err
	}
	if err := o.syncStage(); err != nil {
		return nil, err
	}
	if err := swapDirs(o.stage, o.dir); err != nil {
		return nil, fmt.Errorf("swap %s into place: %w", o.dir, err)
	}
	o.committed = true
	// The swap is durable only once the directory holding both names is
	// synced; until then a power cut brings back the previous site, whole.
	parent := filepath.Dir(o.dir)
	if err := o.sync(parent); err != nil {
		return nil, fmt.Errorf("the new site is in place, but syncing %s failed, so a power cut could bring back the previous site: %w", parent, err)
	}
	// After the swap the staging path holds the previous site (or nothing).
	if err := o.removeAll(o.stage); err != nil {
		return fmt.Errorf("remove the previous site from %s: %w", o.stage, err), nil
	}
	return nil, nil
}

// syncStage flushes every file and directory of the staged site to disk
// before the swap publishes it. The swap's rename can otherwise reach the
// disk before the files' contents do, and a power cut soon after a build
// left the output holding the new names with empty or partial contents.
// One walk over the finished stage, rather than a sync where each writer
// closes its file, covers every way a file gets there (written, streamed,
// copied, linked) and the directories claim made. Files hard-linked to the
// previous site's are synced too: it may have been built before builds
// synced, and a clean file's sync costs next to nothing.
func (o *output) syncStage() error {
	err := filepath.WalkDir(o.stage, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil
		}
		return o.sync(p)
	})
	if err != nil {
		return fmt.Errorf("sync the new site to disk: %w", err)
	}
	return nil
}

// syncPath flushes the file or directory at p to disk. Some file systems
// (certain network and FUSE mounts) refuse to sync a directory with EINVAL
// or ENOTSUP; that is no reason to fail a build that worked before builds
// synced, so a directory's refusal is taken as done.
func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	err = f.Sync()
	if info, serr := f.Stat(); serr == nil && syncRefusalIsDone(err, info.IsDir()) {
		return nil
	}
	return err
}

// syncRefusalIsDone reports whether err, from syncing a directory (isDir)
// or a file, is a file system's refusal to sync directories at all.
func syncRefusalIsDone(err error, isDir bool) bool {
	return isDir && (errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP))
}

func (o *output) countRemoved() error {
	err := filepath.WalkDir(o.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == o.dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(o.dir, p)
		if _, ok := o.files[filepath.ToSlash(rel)]; !ok {
			o.removed++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read previous site: %w", err)
	}
	return nil
}

// discard removes the staging directory of a build that did not commit.
func (o *output) discard() {
	if !o.committed {
		os.RemoveAll(o.stage)
	}
}

func (o *output) stats() (files, written, unchanged, removed int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.files), o.written, o.unchanged, o.removed
}
