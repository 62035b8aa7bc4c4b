// Command sample builds a demonstration site from buildtest.Sample data, for
// looking at a theme without a crawl: go run ./build/buildtest/sample -out /tmp/site
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/fediverse-observer/observer/build"
	"github.com/fediverse-observer/observer/build/buildtest"
	"github.com/fediverse-observer/observer/config"
)

func main() {
	out := flag.String("out", "public", "output directory")
	site := flag.String("site", ".", "site directory (content/, layouts/, static/, themes/)")
	n := flag.Int("n", 50, "number of new instances")
	flag.Parse()
	cfg := config.Default()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	rep, err := build.Build(context.Background(), build.Options{
		Config: cfg, SiteDir: *site, OutDir: *out, Data: buildtest.Sample(*n, now), Now: now,
		Version: "0.1.0", Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%+v\n", rep)
}
