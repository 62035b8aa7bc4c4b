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
)

func main() {
	out := flag.String("out", "public", "output directory")
	site := flag.String("site", ".", "site directory (content/, layouts/, static/, themes/)")
	n := flag.Int("n", 50, "number of new instances")
	flag.Parse()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	// Sample settings (observer build maps them from observer.toml).
	settings := build.Settings{
		Title: "Fediverse Observer (sample)", BaseURL: "http://localhost:1313/", Language: "en", Theme: "default",
		UserAgent: "FediverseObserver/0.1.0 (+https://github.com/fediverse-observer/observer)", ProductToken: "FediverseObserver",
		LiveWindow: 7 * 24 * time.Hour, NewWindow: 30 * 24 * time.Hour, Warmup: 7 * 24 * time.Hour,
		ActiveInterval: 29 * time.Hour, InactiveInterval: 167 * time.Hour,
	}
	rep, err := build.Build(context.Background(), build.Options{
		Site: settings, SiteDir: *site, OutDir: *out, Data: buildtest.Sample(*n, now), Now: now,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%+v\n", rep)
}
