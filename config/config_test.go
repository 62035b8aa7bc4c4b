package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/config"
)

func TestMissingDefaultFileGivesDefaults(t *testing.T) {
	cfg, err := config.Load(filepath.Join(t.TempDir(), "observer.toml"), false)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Site.Theme != "default" || cfg.State.NewWindow.D() != 30*24*time.Hour {
		t.Fatalf("defaults not applied: %+v", cfg)
	}
}

func TestMissingExplicitFileIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.toml")
	_, err := config.Load(path, true)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("want error naming %s, got %v", path, err)
	}
}

func TestUnknownKeyNamesKeyAndFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "observer.toml")
	os.WriteFile(path, []byte("[site]\ntitle = \"x\"\ntheem = \"dark\"\n"), 0o644)
	_, err := config.Load(path, true)
	if err == nil || !strings.Contains(err.Error(), "site.theem") || !strings.Contains(err.Error(), path) {
		t.Fatalf("want error naming site.theem and %s, got %v", path, err)
	}
}

func TestValuesOverrideDefaults(t *testing.T) {
	var cfg = config.Default()
	err := config.Parse([]byte(`
[site]
title = "Mine"
[crawl]
concurrency = 3
check_timeout = "5s"
[state]
new_window = "14d"
`), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Site.Title != "Mine" || cfg.Crawl.Concurrency != 3 || cfg.Crawl.CheckTimeout.D() != 5*time.Second || cfg.State.NewWindow.D() != 14*24*time.Hour {
		t.Fatalf("values not applied: %+v", cfg)
	}
	if cfg.Site.Theme != "default" {
		t.Fatalf("unset key lost its default: %q", cfg.Site.Theme)
	}
}

func TestInvalidValues(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"[crawl]\nconcurrency = 0", "crawl.concurrency"},
		{"[crawl]\ncheck_timeout = \"soon\"", "invalid duration"},
		{"[site]\ntheme = \"../etc\"", "site.theme"},
		{"[crawl]\nproduct_token = \"a b\"", "product_token"},
		{"[site\n", "line 1"},
		{"[state]\nmemory_limit = \"80%\"", "state.memory_limit"},
		{"[state]\nmemory_limit = \"1G\"", "state.memory_limit"},
		{"[crawl]\nduckdb_memory_limit = \"lots\"", "crawl.duckdb_memory_limit"},
	} {
		cfg := config.Default()
		err := config.Parse([]byte(tc.toml), &cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: want error containing %q, got %v", tc.toml, tc.want, err)
		}
	}
}

func TestMemoryLimits(t *testing.T) {
	for _, v := range []string{"", "1GB", "512MiB", "1.5GB", "300 MB", "2TiB"} {
		cfg := config.Default()
		if err := config.Parse([]byte("[state]\nmemory_limit = \""+v+"\""), &cfg); err != nil {
			t.Errorf("%q: %v", v, err)
		} else if cfg.State.MemoryLimit != v {
			t.Errorf("%q: read as %q", v, cfg.State.MemoryLimit)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "90s": 90 * time.Second, "29h": 29 * time.Hour, "0d": 0} {
		got, err := config.ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"d", "1.5d", "-1h", "xd", ""} {
		if _, err := config.ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}
