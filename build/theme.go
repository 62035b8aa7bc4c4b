package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fediverse-observer/observer/themes"
)

// layer is one source of theme files, searched in order: the site's own
// layouts/ (or static/), then themes/NAME/, then the embedded default.
type layer struct {
	name string // shown in error messages, e.g. "themes/default/layouts"
	fsys fs.FS
}

type theme struct {
	name    string
	dir     string  // themes/NAME of the site, "" when there is none
	layouts []layer // the site's and the theme's
	builtin []layer // the built-in default theme's, under every theme
	static  []layer
	// builtinFrames: the theme is the built-in one, so its baseof.html
	// frames the site's layouts too.
	builtinFrames bool
	// missingLayouts is "themes/NAME/layouts" when the theme's directory
	// has no layouts/ in it, so that a missing layout names what is missing
	// rather than only the site's layouts/ that was looked in.
	missingLayouts string
}

// openTheme resolves the lookup order for theme name. The embedded default
// theme is only used for the name "default"; another name must exist under
// siteDir/themes/.
func openTheme(siteDir, name string) (*theme, error) {
	t := &theme{name: name}
	add := func(dst *[]layer, dir, display string) error {
		ok, err := inputDir(dir, display)
		if ok {
			*dst = append(*dst, layer{name: display, fsys: os.DirFS(dir)})
		}
		return err
	}
	if err := add(&t.layouts, filepath.Join(siteDir, "layouts"), "layouts"); err != nil {
		return nil, err
	}
	if err := add(&t.static, filepath.Join(siteDir, "static"), "static"); err != nil {
		return nil, err
	}
	themeDir := filepath.Join(siteDir, "themes", name)
	onDisk, err := inputDir(themeDir, path.Join("themes", name))
	if err != nil {
		return nil, err
	}
	if onDisk {
		t.dir = themeDir
		n := len(t.layouts)
		if err := add(&t.layouts, filepath.Join(themeDir, "layouts"), path.Join("themes", name, "layouts")); err != nil {
			return nil, err
		}
		if len(t.layouts) == n {
			t.missingLayouts = path.Join("themes", name, "layouts")
		}
		if err := add(&t.static, filepath.Join(themeDir, "static"), path.Join("themes", name, "static")); err != nil {
			return nil, err
		}
	}
	emb := themes.Default()
	lay, _ := fs.Sub(emb, "layouts")
	t.builtin = []layer{{name: "(embedded) themes/default/layouts", fsys: lay}}
	if name == themes.DefaultName {
		sta, _ := fs.Sub(emb, "static")
		t.static = append(t.static, layer{name: "(embedded) themes/default/static", fsys: sta})
		t.builtinFrames = true
	} else if !onDisk {
		return nil, fmt.Errorf("theme %q not found: no directory %s (only %q is built in)", name, themeDir, themes.DefaultName)
	}
	return t, nil
}

// lookedIn says where layouts were looked for, for messages.
func (th *theme) lookedIn() string {
	var n []string
	for _, l := range th.layouts {
		n = append(n, l.name)
	}
	var parts []string
	if len(n) > 0 {
		parts = append(parts, "looked in "+strings.Join(n, ", "))
	}
	if th.missingLayouts != "" {
		parts = append(parts, "there is no "+th.missingLayouts)
	}
	if len(parts) == 0 {
		return "there is no layouts directory"
	}
	return strings.Join(parts, "; ")
}

// inputDir reports whether dir, one of the site's input directories (shown
// as display, relative to the site directory), is there to be read. Only
// its absence means "none": a bare site has no layouts/ and the theme
// supplies everything. Anything else that keeps it from being read as a
// directory (a regular file in its place, a link to nothing or in a loop,
// no permission) is an error: taken for absence, it would have the
// theme's files used without a word. The directory itself may be a
// symbolic link; links inside it are refused (see notFollowed).
func inputDir(dir, display string) (bool, error) {
	st, err := os.Stat(dir)
	switch {
	case err == nil && st.IsDir():
		return true, nil
	case err == nil:
		return false, fmt.Errorf("%s: not a directory", display)
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(dir); lerr == nil {
			return false, fmt.Errorf("%s: a symbolic link to something that does not exist", display)
		}
		return false, nil
	}
	// The path is the display name's, so only the cause is kept.
	return false, fmt.Errorf("%s: %w", display, unwrapPath(err))
}

// notFollowed is the error for a symbolic link found inside content/,
// layouts/ or static/ (the site's or a theme's). Such links are refused
// rather than followed: what content/ and static/ hold is published, and a
// link can point anywhere, so a site or theme written by someone else could
// publish the builder's files from outside the site (keys, say); a link to
// a directory can loop; and observer serve, which watches the site's
// directories, would not see its target change. They are not skipped
// either, which made a linked layouts/page.html lose to the theme's
// without a word.
func notFollowed(display string) error {
	return fmt.Errorf("%s: is a symbolic link, and links inside content/, layouts/ and static/ are not followed (copy the file there instead)", display)
}

// themeFile is a file found in the layers; the first layer holding a path wins.
type themeFile struct {
	rel     string // path inside layouts/ or static/
	display string // layer name + rel, for messages
	fsys    fs.FS
}

// layerFiles lists every file of the layers, the first layer winning per path,
// sorted by path.
func layerFiles(layers []layer) ([]themeFile, error) {
	seen := map[string]bool{}
	var out []themeFile
	for _, l := range layers {
		err := fs.WalkDir(l.fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("read %s: %w", l.name, err)
			}
			if d.IsDir() {
				if p != "." && d.Name()[0] == '.' {
					return fs.SkipDir
				}
				return nil
			}
			if d.Name()[0] == '.' {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				return notFollowed(l.name + "/" + p)
			}
			if !d.Type().IsRegular() {
				return fmt.Errorf("%s/%s: not a regular file", l.name, p)
			}
			if !seen[p] {
				seen[p] = true
				out = append(out, themeFile{rel: p, display: l.name + "/" + p, fsys: l.fsys})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b themeFile) int {
		if a.rel < b.rel {
			return -1
		}
		if a.rel > b.rel {
			return 1
		}
		return 0
	})
	return out, nil
}

// copyStatic copies the static files of all layers into the output.
func (b *builder) copyStatic(ctx context.Context) error {
	files, err := layerFiles(b.theme.static)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.copyFS(f); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) copyFS(f themeFile) error {
	src, err := f.fsys.Open(f.rel)
	if err != nil {
		return fmt.Errorf("static %s: %w", f.display, err)
	}
	defer src.Close()
	w, err := b.out.create(f.rel, f.display)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, src); err != nil {
		w.abort()
		return fmt.Errorf("static %s: %w", f.display, err)
	}
	return w.Close()
}
