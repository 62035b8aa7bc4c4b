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
	f, err := openOptional(path, "seed list")
	if f == nil {
		return nil, err
	}
	defer f.Close()
	hosts, errs := ReadList(f)
	if len(errs) > 0 {
		return nil, fmt.Errorf("seed list %s: %w", path, errs[0])
	}
	return hosts, nil
}

// ReadBlocklistFile reads the operator's blocklist at path (ReadBlocklist).
// A missing file, or none named (""), is an empty list (nil): most sites
// have none. An invalid
// line is an error naming the file and the line, so a typo never silently
// unblocks a host.
func ReadBlocklistFile(path string) (*Blocklist, error) {
	f, err := openOptional(path, "blocklist")
	if f == nil {
		return nil, err
	}
	defer f.Close()
	b, errs := ReadBlocklist(f)
	if len(errs) > 0 {
		return nil, fmt.Errorf("blocklist %s: %w", path, errs[0])
	}
	return b, nil
}

// openOptional opens the operator's list at path: nil and no error when it
// does not exist or no path is set, nil and an error naming what (a seed list, a blocklist)
// when it cannot be read. A directory opens like a file and only its first
// read fails, with an error that names the path a second time, so it is
// refused here.
func openOptional(path, what string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if info, err := f.Stat(); err == nil && info.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s %s: is a directory", what, path)
	}
	return f, nil
}
