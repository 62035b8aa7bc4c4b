package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/hostname"
)

// loadBlocklist reads the operator's blocklist (crawl.blocklist, relative to
// the config file). A missing file is an empty list: most sites have none.
// An invalid line is an error naming the file and the line, so a typo never
// silently unblocks a host.
func loadBlocklist(cfg config.Config, configFile string) (*hostname.Blocklist, error) {
	if cfg.Crawl.Blocklist == "" {
		return nil, nil
	}
	path := relativeToConfig(cfg.Crawl.Blocklist, configFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read blocklist: %w", err)
	}
	defer f.Close()
	b, errs := hostname.ReadBlocklist(f)
	if len(errs) > 0 {
		return nil, fmt.Errorf("blocklist %s: %w", path, errs[0])
	}
	return b, nil
}
