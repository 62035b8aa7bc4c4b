package main

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The model's checkpoints, so that a run longer than a session can be run
// in segments (OBSERVER_MODEL_DIR): after each simulated day's last pass
// the run keeps, in dir, a copy of its site (data directory included) and
// a progress file with everything its loop carries from pass to pass; a
// run started on dir again restores the site from it and goes on from the
// next pass. A run killed at any moment loses at most the day under way.
//
// The copy is of hard links, not of the bytes: every file the observer
// writes into a data directory (snapshots, derived files, the manifest,
// duck's copyAtomically and writeManifest) is written in data/tmp and
// renamed into place, never changed in place, so the run going on after a
// checkpoint replaces the links' names and leaves the checkpoint's files
// as they were. The exceptions are copied: the lock files, which
// lockfile writes its pid into and empties in place (inPlace); data/tmp,
// where files are written, is left out. The site's other files are
// written once, when the run starts. TestModelRunResumes holds a
// checkpoint's files unchanged over the run that goes on from it.
//
// The world needs no checkpoint: it is fedisim's, deterministic from its
// seed, with its counters that the figures read (peers bytes, 304s)
// carried in the progress file. Nor the checker's readings
// (FastModelChecker): they are the crawler's own, read again on use.

// modelProgress is what the model's loop carries from one simulated day to
// the next, as a checkpoint's progress file keeps it; the run's settings
// with it, which a run resumed from it must have too.
type modelProgress struct {
	Format    int    `json:"format"`
	Instances int    `json:"instances"`
	Seed      int64  `json:"seed"`
	Every     string `json:"every"`
	Config    string `json:"config"` // observer.toml

	Day  int       `json:"day"`  // the simulated days done
	Next time.Time `json:"next"` // the next pass's time
	// ListedAt and IDs are each host's first listing in new.atom and its
	// id there.
	ListedAt  map[string]time.Time `json:"listed_at"`
	IDs       map[string]string    `json:"ids"`
	Passes    int                  `json:"passes"`
	IDChanges int                  `json:"id_changes"`
	Cost      passCost             `json:"cost"`
	PassWall  time.Duration        `json:"pass_wall"`
	ListWall  time.Duration        `json:"list_wall"`
	// Wall and CPU are the segments' sums, Segments how many processes
	// ran them.
	Wall     time.Duration `json:"wall"`
	CPU      time.Duration `json:"cpu"`
	Segments int           `json:"segments"`
	// The simulators' counters, summed over the segments.
	PeersBytes  int64 `json:"peers_bytes"`
	NotModified int64 `json:"not_modified"`
}

// modelProgressFormat is the progress file's format; a checkpoint of
// another is refused.
const modelProgressFormat = 1

const (
	checkpointPrefix = "checkpoint-day-"
	checkpointTmp    = "checkpoint.tmp"
	progressFile     = "progress.json"
)

// checkpointModel writes the checkpoint of day q.Day into dir: dir/site
// linked into a new directory with q as its progress file, renamed into
// place when complete; then the older checkpoint goes.
func checkpointModel(dir string, q modelProgress) error {
	q.Format = modelProgressFormat
	tmp := filepath.Join(dir, checkpointTmp)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := linkTree(filepath.Join(dir, "site"), filepath.Join(tmp, "site")); err != nil {
		return fmt.Errorf("checkpoint of day %d: %w", q.Day, err)
	}
	b, err := json.Marshal(q)
	if err != nil {
		return fmt.Errorf("checkpoint of day %d: %w", q.Day, err)
	}
	if err := writeFileSynced(filepath.Join(tmp, progressFile), b); err != nil {
		return fmt.Errorf("checkpoint of day %d: %w", q.Day, err)
	}
	final := filepath.Join(dir, fmt.Sprintf("%s%04d", checkpointPrefix, q.Day))
	if err := os.RemoveAll(final); err != nil {
		return fmt.Errorf("checkpoint of day %d: %w", q.Day, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("checkpoint of day %d: %w", q.Day, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("checkpoint of day %d: %w", q.Day, err)
	}
	_, older, err := checkpoints(dir)
	if err != nil {
		return err
	}
	for _, o := range older {
		if err := os.RemoveAll(o); err != nil {
			return fmt.Errorf("checkpoint of day %d: remove the older: %w", q.Day, err)
		}
	}
	return nil
}

// checkpoints lists dir's checkpoints: the newest ("" if none) and the
// others. A checkpoint left half-written by a killed run is removed.
func checkpoints(dir string) (newest string, older []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", nil, fmt.Errorf("OBSERVER_MODEL_DIR %s: %w", dir, err)
	}
	best := -1
	for _, e := range entries {
		name := e.Name()
		if name == checkpointTmp {
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return "", nil, fmt.Errorf("OBSERVER_MODEL_DIR %s: remove a half-written checkpoint: %w", dir, err)
			}
			continue
		}
		day, err := strconv.Atoi(strings.TrimPrefix(name, checkpointPrefix))
		if !strings.HasPrefix(name, checkpointPrefix) || err != nil {
			continue
		}
		path := filepath.Join(dir, name)
		if day > best {
			if newest != "" {
				older = append(older, newest)
			}
			newest, best = path, day
		} else {
			older = append(older, path)
		}
	}
	return newest, older, nil
}

// restoreModel prepares dir for a run with p's settings: when it holds a
// checkpoint, it reads its progress into p and restores dir/site to it,
// removing whatever a killed run wrote after it; when it holds none, it
// removes what a run killed in its first day left. It refuses a
// checkpoint of a run with other settings: it never starts over on its own.
func restoreModel(dir string, p *modelProgress) (resumed bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("OBSERVER_MODEL_DIR %s: %w", dir, err)
	}
	newest, older, err := checkpoints(dir)
	if err != nil {
		return false, err
	}
	site := filepath.Join(dir, "site")
	if newest == "" {
		if err := os.RemoveAll(site); err != nil {
			return false, fmt.Errorf("OBSERVER_MODEL_DIR %s: %w", dir, err)
		}
		return false, nil
	}
	b, err := os.ReadFile(filepath.Join(newest, progressFile))
	if err != nil {
		return false, fmt.Errorf("OBSERVER_MODEL_DIR %s: %w", dir, err)
	}
	var q modelProgress
	if err := json.Unmarshal(b, &q); err != nil {
		return false, fmt.Errorf("OBSERVER_MODEL_DIR %s: checkpoint %s: %w", dir, filepath.Base(newest), err)
	}
	if diff := progressDiffers(q, *p); diff != "" {
		return false, fmt.Errorf("OBSERVER_MODEL_DIR %s: its checkpoint (%s) is of another run: %s; run with its settings, or give another directory",
			dir, filepath.Base(newest), diff)
	}
	if err := os.RemoveAll(site); err != nil {
		return false, fmt.Errorf("OBSERVER_MODEL_DIR %s: %w", dir, err)
	}
	if err := linkTree(filepath.Join(newest, "site"), site); err != nil {
		return false, fmt.Errorf("OBSERVER_MODEL_DIR %s: restore %s: %w", dir, filepath.Base(newest), err)
	}
	// A run killed between a checkpoint's rename and the removal of the
	// one before.
	for _, o := range older {
		if err := os.RemoveAll(o); err != nil {
			return false, fmt.Errorf("OBSERVER_MODEL_DIR %s: %w", dir, err)
		}
	}
	*p = q
	return true, nil
}

// progressDiffers says how the settings of the run that wrote q differ
// from p's ("" if they do not).
func progressDiffers(q, p modelProgress) string {
	var d []string
	if q.Format != modelProgressFormat {
		d = append(d, fmt.Sprintf("progress format %d, not %d", q.Format, modelProgressFormat))
	}
	if q.Instances != p.Instances {
		d = append(d, fmt.Sprintf("%d instances, not %d", q.Instances, p.Instances))
	}
	if q.Seed != p.Seed {
		d = append(d, fmt.Sprintf("seed %d, not %d", q.Seed, p.Seed))
	}
	if q.Every != p.Every {
		d = append(d, fmt.Sprintf("a pass every %s, not %s", q.Every, p.Every))
	}
	if q.Config != p.Config {
		d = append(d, fmt.Sprintf("observer.toml %q, not %q (OBSERVER_LATENCY_CONFIG)", q.Config, p.Config))
	}
	return strings.Join(d, "; ")
}

// linkTree makes to a copy of the directory tree from, of hard links to
// its files but for those changed in place (inPlace), which it copies, and
// for data/tmp's files, which it leaves out.
func linkTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			if rel == filepath.Join("data", "tmp") {
				return filepath.SkipDir
			}
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: neither a file nor a directory", path)
		case inPlace(d.Name()):
			return copyFile(path, target)
		}
		return os.Link(path, target)
	})
}

// inPlace says whether the observer changes the file named name in place:
// a lock file, which lockfile writes its holder's pid into.
func inPlace(name string) bool {
	return strings.HasSuffix(name, ".lock")
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// writeFileSynced writes b at path through a synced temporary file renamed
// into place.
func writeFileSynced(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
