package hostname

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/fediverse-observer/observer"
)

// ReadSeedList reads the seed list at path (ReadList). A missing file is an
// empty list: an observer that already knows hosts needs none. An invalid
// line is an error naming the file and the line, and no host is returned.
func ReadSeedList(path string) ([]observer.Host, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("seed list: %w", err)
	}
	defer f.Close()
	// A directory opens like a file; only its first read fails, with an
	// error that names the path a second time.
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return nil, fmt.Errorf("seed list %s: is a directory", path)
	}
	hosts, errs := ReadList(f)
	if len(errs) > 0 {
		return nil, fmt.Errorf("seed list %s: %w", path, errs[0])
	}
	return hosts, nil
}

// ReadBlocklistFile reads the operator's blocklist at path (ReadBlocklist).
// A missing file is an empty list (nil): most sites have none. An invalid
// line is an error naming the file and the line, so a typo never silently
// unblocks a host.
func ReadBlocklistFile(path string) (*Blocklist, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read blocklist: %w", err)
	}
	defer f.Close()
	b, errs := ReadBlocklist(f)
	if len(errs) > 0 {
		return nil, fmt.Errorf("blocklist %s: %w", path, errs[0])
	}
	return b, nil
}
