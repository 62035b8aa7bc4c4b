// Command themefuncs counts the template functions Hugo themes call, so
// that the builder's function set (build/internal/funcs) covers what themes
// use first. Each argument is a theme's root directory; every file under
// its layouts/ is parsed as a Go template (without checking that functions
// exist) and each function named in it is counted, a namespaced one
// (strings.Replace) under its full name. It prints one line a function,
// most used first: the number of themes using it, the number of uses, and
// the name.
//
//	go run ./scripts/themefuncs THEME_DIR...
package main

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"text/template/parse"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: themefuncs THEME_DIR...")
		os.Exit(2)
	}
	uses := map[string]int{}
	themes := map[string]map[string]bool{}
	for _, dir := range os.Args[1:] {
		err := filepath.WalkDir(filepath.Join(dir, "layouts"), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, name := range funcNames(path, string(src)) {
				uses[name]++
				if themes[name] == nil {
					themes[name] = map[string]bool{}
				}
				themes[name][dir] = true
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "themefuncs:", err)
			os.Exit(1)
		}
	}
	names := make([]string, 0, len(uses))
	for n := range uses {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(-cmp.Compare(len(themes[a]), len(themes[b])), -cmp.Compare(uses[a], uses[b]), cmp.Compare(a, b))
	})
	for _, n := range names {
		fmt.Printf("%d\t%d\t%s\n", len(themes[n]), uses[n], n)
	}
}

// funcNames lists the functions a template calls, once a call. A file
// that does not parse (not a template, or Hugo syntax Go lacks) is
// reported and left out.
func funcNames(name, src string) []string {
	trees := map[string]*parse.Tree{}
	t := parse.New(name)
	t.Mode = parse.SkipFuncCheck | parse.ParseComments
	if _, err := t.Parse(src, "", "", trees); err != nil {
		fmt.Fprintln(os.Stderr, "skipped:", err)
		return nil
	}
	var out []string
	var walk func(parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case nil:
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				walk(c)
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				walk(a)
			}
		case *parse.ChainNode:
			// site.Title and now.Year are a function's result and a
			// field of it; hugo.Version and strings.Replace name a
			// function of a namespace.
			if id, ok := n.Node.(*parse.IdentifierNode); ok && len(n.Field) > 0 && id.Ident != "site" && id.Ident != "now" {
				out = append(out, id.Ident+"."+n.Field[0])
				return
			}
			walk(n.Node)
		case *parse.IdentifierNode:
			out = append(out, n.Ident)
		case *parse.IfNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.RangeNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.WithNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.TemplateNode:
			walk(n.Pipe)
		}
	}
	for _, tr := range trees {
		walk(tr.Root)
	}
	return out
}
