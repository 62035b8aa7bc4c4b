package funcs

import "fmt"

// JS is the js namespace. Bundling JavaScript needs esbuild, which the
// builder does not have: its functions fail saying so, instead of Go's
// own js escaper, which the name would otherwise call, failing later with
// a puzzling "can't evaluate field Build in type string".
type JS struct{}

// CSS is the css namespace: Sass, PostCSS and Tailwind need tools the
// builder does not have.
type CSS struct{}

func noTool(fn, tool string, args []any) error {
	name := ""
	for _, a := range args {
		if r, ok := a.(*Resource); ok && r != nil {
			name = "assets/" + r.name + ": "
		}
	}
	return fmt.Errorf("%s: %s%s is not available to the builder; commit the output to assets/ and use resources.Get on it", fn, name, tool)
}

// Build fails: there is no esbuild.
func (*JS) Build(args ...any) (*Resource, error) { return nil, noTool("js.Build", "esbuild", args) }

// Babel fails: there is no Babel.
func (*JS) Babel(args ...any) (*Resource, error) { return nil, noTool("js.Babel", "Babel", args) }

// Sass fails: there is no Sass compiler.
func (*CSS) Sass(args ...any) (*Resource, error) { return nil, noTool("css.Sass", "Sass", args) }

// PostCSS fails: there is no PostCSS.
func (*CSS) PostCSS(args ...any) (*Resource, error) {
	return nil, noTool("css.PostCSS", "PostCSS", args)
}

// TailwindCSS fails: there is no Tailwind.
func (*CSS) TailwindCSS(args ...any) (*Resource, error) {
	return nil, noTool("css.TailwindCSS", "Tailwind", args)
}

// PostCSS fails: there is no PostCSS.
func (rs *Resources) PostCSS(args ...any) (*Resource, error) {
	return nil, noTool("resources.PostCSS", "PostCSS", args)
}

// Babel fails: there is no Babel.
func (rs *Resources) Babel(args ...any) (*Resource, error) {
	return nil, noTool("resources.Babel", "Babel", args)
}
