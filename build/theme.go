package build

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

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
	layouts []layer
	static  []layer
}

// openTheme resolves the lookup order for theme name. The embedded default
// theme is only used for the name "default"; another name must exist under
// siteDir/themes/.
func openTheme(siteDir, name string) (*theme, error) {
	t := &theme{name: name}
	add := func(dst *[]layer, dir, display string) {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			*dst = append(*dst, layer{name: display, fsys: os.DirFS(dir)})
		}
	}
	add(&t.layouts, filepath.Join(siteDir, "layouts"), "layouts")
	add(&t.static, filepath.Join(siteDir, "static"), "static")
	themeDir := filepath.Join(siteDir, "themes", name)
	st, err := os.Stat(themeDir)
	onDisk := err == nil && st.IsDir()
	if onDisk {
		add(&t.layouts, filepath.Join(themeDir, "layouts"), path.Join("themes", name, "layouts"))
		add(&t.static, filepath.Join(themeDir, "static"), path.Join("themes", name, "static"))
	}
	if name == themes.DefaultName {
		emb := themes.Default()
		lay, _ := fs.Sub(emb, "layouts")
		sta, _ := fs.Sub(emb, "static")
		t.layouts = append(t.layouts, layer{name: "(embedded) themes/default/layouts", fsys: lay})
		t.static = append(t.static, layer{name: "(embedded) themes/default/static", fsys: sta})
	} else if !onDisk {
		return nil, fmt.Errorf("theme %q not found: no directory %s (only %q is built in)", name, themeDir, themes.DefaultName)
	}
	return t, nil
}

// themeFile is a file found in the layers; the first layer holding a path wins.
type themeFile struct {
	rel     string // path inside layouts/ or static/
	display string // layer name + rel, for messages
	fsys    fs.FS
}

// files lists every file of the layers, the first layer winning per path,
// sorted by path.
func layerFiles(layers []layer) ([]themeFile, error) {
	seen := map[string]bool{}
	var out []themeFile
	for _, l := range layers {
		err := fs.WalkDir(l.fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != "." && d.Name()[0] == '.' {
					return fs.SkipDir
				}
				return nil
			}
			if d.Name()[0] == '.' || !d.Type().IsRegular() {
				return nil
			}
			if !seen[p] {
				seen[p] = true
				out = append(out, themeFile{rel: p, display: l.name + "/" + p, fsys: l.fsys})
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", l.name, err)
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
