package main

import (
	"path/filepath"

	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/hostname"
)

// loadBlocklist reads the operator's blocklist: crawl.blocklist, relative
// to the config file, if set.
func loadBlocklist(cfg config.Config, configFile string) (*hostname.Blocklist, error) {
	if cfg.Crawl.Blocklist == "" {
		return nil, nil
	}
	return hostname.ReadBlocklistFile(relativeToConfig(cfg.Crawl.Blocklist, configFile))
}

// seedsPath is crawl.seeds taken relative to the config file's directory.
func seedsPath(cfg config.Config, configFile string) string {
	return relativeToConfig(cfg.Crawl.Seeds, configFile)
}

// relativeToConfig takes a relative path from the config file as relative
// to that file's directory rather than to the working directory, so a site
// directory works from anywhere.
func relativeToConfig(path, configFile string) string {
	if filepath.IsAbs(path) || configFile == "" {
		return path
	}
	return filepath.Join(filepath.Dir(configFile), path)
}
