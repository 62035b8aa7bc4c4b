// Command genpages writes the generated Markdown pages of the page-rendering
// benchmark, so that scripts/bench-hugo.sh gives Hugo the very same input.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/fediverse-observer/observer/build/buildtest"
)

func main() {
	n := flag.Int("n", 10000, "number of pages")
	out := flag.String("out", "content", "directory to write the pages into")
	flag.Parse()
	if err := buildtest.WritePages(*out, *n); err != nil {
		fmt.Fprintln(os.Stderr, "genpages:", err)
		os.Exit(1)
	}
}
