package funcs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
)

// OS is the os namespace: files of the site's directory and the
// environment. Paths are relative to the site's directory and cannot
// leave it.
type OS struct{ e *env }

// maxReadFile bounds readFile: a template that reads a huge file by
// mistake should fail, not fill memory.
const maxReadFile = 64 << 20

func (o *OS) files(fn string) (fs.FS, error) {
	if o.e.opts.Files == nil {
		return nil, fmt.Errorf("%s: the build gives no files to read", fn)
	}
	return o.e.opts.Files, nil
}

// filePath makes a path fit for an fs.FS: relative, cleaned, and inside.
func filePath(fn, p string) (string, error) {
	p = path.Clean("/" + strings.ReplaceAll(p, "\\", "/"))
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		p = "."
	}
	if !fs.ValidPath(p) {
		return "", fmt.Errorf("%s: invalid path %q", fn, p)
	}
	return p, nil
}

// ReadFile returns the content of a file.
func (o *OS) ReadFile(v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("readFile: %w", err)
	}
	if s == "" {
		return "", errors.New("readFile: needs a file name")
	}
	fsys, err := o.files("readFile")
	if err != nil {
		return "", err
	}
	p, err := filePath("readFile", s)
	if err != nil {
		return "", err
	}
	if fi, err := fs.Stat(fsys, p); err == nil && fi.Size() > maxReadFile {
		return "", fmt.Errorf("readFile: %s is larger than %d bytes", s, maxReadFile)
	}
	b, err := fs.ReadFile(fsys, p)
	if errors.Is(err, fs.ErrNotExist) {
		// Hugo gives nothing for a missing file, so that a theme can
		// read optional files.
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("readFile: %w", err)
	}
	return string(b), nil
}

// FileExists reports whether a file or directory exists.
func (o *OS) FileExists(v any) (bool, error) {
	s, err := toString(v)
	if err != nil {
		return false, fmt.Errorf("fileExists: %w", err)
	}
	if s == "" {
		return false, errors.New("fileExists: needs a file name")
	}
	fsys, err := o.files("fileExists")
	if err != nil {
		return false, err
	}
	p, err := filePath("fileExists", s)
	if err != nil {
		return false, err
	}
	_, err = fs.Stat(fsys, p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Stat describes a file or directory.
func (o *OS) Stat(v any) (FileInfo, error) {
	s, err := toString(v)
	if err != nil {
		return FileInfo{}, fmt.Errorf("os.Stat: %w", err)
	}
	fsys, err := o.files("os.Stat")
	if err != nil {
		return FileInfo{}, err
	}
	p, err := filePath("os.Stat", s)
	if err != nil {
		return FileInfo{}, err
	}
	fi, err := fs.Stat(fsys, p)
	if err != nil {
		return FileInfo{}, fmt.Errorf("os.Stat: %w", err)
	}
	return FileInfo{fi}, nil
}

// FileInfo is what readDir gives of each entry.
type FileInfo struct {
	fs.FileInfo
}

// ReadDir lists a directory, by name.
func (o *OS) ReadDir(v any) ([]FileInfo, error) {
	s, err := toString(v)
	if err != nil {
		return nil, fmt.Errorf("readDir: %w", err)
	}
	fsys, err := o.files("readDir")
	if err != nil {
		return nil, err
	}
	p, err := filePath("readDir", s)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(fsys, p)
	if err != nil {
		return nil, fmt.Errorf("readDir: %w", err)
	}
	out := make([]FileInfo, 0, len(entries))
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("readDir: %w", err)
		}
		out = append(out, FileInfo{fi})
	}
	return out, nil
}

// allowedEnv is Hugo's default security policy for getenv: a theme may
// read HUGO_ variables and CI, nothing else (not the operator's secrets).
var allowedEnv = regexp.MustCompile(`^HUGO_|^CI$`)

// Getenv returns an environment variable the policy allows.
func (*OS) Getenv(v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("getenv: %w", err)
	}
	if !allowedEnv.MatchString(s) {
		return "", fmt.Errorf("getenv: access denied: %q is not allowed (only HUGO_* and CI are)", s)
	}
	return os.Getenv(s), nil
}
