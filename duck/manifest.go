package duck

// The manifest of data/derived and the lifetime of the files it names:
// which generation is in force, which files readers may still be reading,
// and which can go.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The materialised derived state under data/derived. Every file carries the
// generation of the derivation step that wrote it; manifest.json, replaced
// last and atomically, names the files of the current generation, so a crash
// at any point leaves the previous generation in force and the next step
// simply redoes the work (overwriting the orphans of the crashed one).
const (
	manifestFile   = "manifest.json"
	transitionsDir = "transitions"
	liveEventsDir  = "live_events"
	lockFileName   = ".lock"
)

// manifest records which snapshot files the derived state folds, and where
// that state is.
type manifest struct {
	Generation int64     `json:"generation"`
	DerivedAt  time.Time `json:"derived_at"`
	Rules      string    `json:"rules"` // the thresholds the fold used; a change forces a full rebuild
	State      string    `json:"state"` // paths relative to data/derived
	// Delta, when set, holds the rows of the hosts changed since State was
	// written, which stand in for State's rows of those hosts (stateSource):
	// a step that changes a few hosts writes theirs alone, until they are
	// too many (planDelta).
	Delta string `json:"delta,omitempty"`
	// Hosts is the count of hosts in the state, so that a step need not
	// join State with Delta to count them.
	Hosts       int64    `json:"hosts"`
	Transitions []string `json:"transitions"`
	LiveEvents  []string `json:"live_events"`
	Checks      []string `json:"checks"` // folded snapshot files, relative to the data directory
	Discoveries []string `json:"discoveries"`
	// Passes lists the passes files checked against their schema (not
	// folded: the passes view reads them all).
	Passes []string `json:"passes,omitempty"`
	// Sizes holds the size of each snapshot file above as it was folded
	// (or checked): snapshots are never rewritten, so one of another size
	// since (truncated, or another file copied over it) makes the next
	// step a full one, which checks every file again.
	Sizes map[string]int64 `json:"sizes,omitempty"`
	// Sums holds an xxh3 hash of each derived file it names, as written: a
	// footer can be intact over damaged pages, which would be carried
	// into every later state. Manifests from before it have none, and
	// their files are taken as they are.
	Sums map[string]string `json:"sums,omitempty"`
	// Retired lists the files of earlier generations that readers may
	// still be reading, with when they stopped being current; they are
	// removed once that is longer ago than the retirement grace.
	Retired []retired `json:"retired,omitempty"`
}

// retired is a set of derived files that stopped being current at At.
type retired struct {
	At    time.Time `json:"at"`
	Files []string  `json:"files"`
}

// defaultRetiredGrace is how long derived files stay after they stop being
// current. A reader (observer sql, a build, serve) reads the files named by
// the manifest when it defined its views; removing them as soon as a newer
// generation exists could pull them from under a query that spans two
// derivations, so they stay for an hour (and the previous generation's
// stay until the next step in any case), but only the last maxRetired
// generations' of them: `observer serve` during a crawl derives every time
// the crawl flushes, and an hour of those would be hundreds of states.
const (
	defaultRetiredGrace = time.Hour
	maxRetired          = 4
)

// files lists every derived file the manifest names.
func (m *manifest) files() []string {
	return append(append(m.stateFiles(), m.Transitions...), m.LiveEvents...)
}

// stateFiles lists the files of the state: State, and Delta when set.
func (m *manifest) stateFiles() []string {
	if m.Delta == "" {
		return []string{m.State}
	}
	return []string{m.State, m.Delta}
}

// stateSource is the derived state's rows as a relation for SQL: m's State
// file, each of its rows replaced by Delta's row of the same host when m
// has a delta, or no row before the first derivation (m nil).
func (s *core) stateSource(m *manifest) string {
	switch {
	case m == nil:
		return "(" + sqlFile("derivation/state_empty.sql") + ")"
	case m.Delta == "":
		return "read_parquet(" + sqlString(s.derivedPath(m.State)) + ")"
	}
	delta := "read_parquet(" + sqlString(s.derivedPath(m.Delta)) + ")"
	return "(" + overlay("read_parquet("+sqlString(s.derivedPath(m.State))+")", "SELECT * FROM "+delta, "SELECT host FROM "+delta) + ")"
}

// overlay is the rule of the state's base and delta, in SQL: the rows of
// under (a relation) of the hosts that overHosts (a query of hosts) does
// not name, then the rows of over (a query), which stand in for them.
func overlay(under, over, overHosts string) string {
	return fmt.Sprintf("SELECT * FROM %s under ANTI JOIN (%s) over_hosts USING (host) UNION ALL BY NAME %s", under, overHosts, over)
}

// stateRows is every row of m's state files, the base's rows that its
// delta replaces too: what an aggregate that such a row cannot change
// reads, without stateSource's join. A host's discovered_at never grows
// from one derivation to the next, so the least of them is one.
func (s *core) stateRows(m *manifest) string {
	if m == nil || m.Delta == "" {
		return s.stateSource(m)
	}
	return "read_parquet(" + s.derivedList(m.stateFiles()) + ", union_by_name = true)"
}

// readable checks each derived file m names against its hash in m (a read
// of every byte, a few milliseconds for a million hosts' state) and reads
// their footers (each holds its rows and columns), which fails, naming the
// file, for a missing, truncated, damaged or foreign file: per kind of file,
// one query for their columns, which must be those the derivation writes
// (a valid Parquet file of other columns, say a snapshot copied over one,
// would otherwise break every view, or add rows of NULLs to one), and,
// without a delta, one for the state's row count (its hosts), which it
// returns (with a delta, the manifest's count).
func (s *Deriver) readable(ctx context.Context, m *manifest) (stateRows int64, err error) {
	for _, f := range m.files() {
		want, ok := m.Sums[f]
		if !ok {
			continue
		}
		got, err := fileSum(s.derivedPath(f))
		if err != nil {
			return 0, err
		}
		if got != want {
			return 0, fmt.Errorf("derived file %s has changed since it was written (its xxh3 hash is %s, the manifest says %s)", s.derivedPath(f), got, want)
		}
	}
	for _, kind := range []struct {
		files []string
		empty string
	}{{m.stateFiles(), "(" + sqlFile("derivation/state_empty.sql") + ")"}, {m.Transitions, emptyTransitions}, {m.LiveEvents, emptyLiveEvents}} {
		if len(kind.files) > 0 {
			if err := s.sameColumns(ctx, s.derivedList(kind.files), kind.empty); err != nil {
				return 0, err
			}
		}
	}
	if m.Delta != "" {
		return m.Hosts, nil
	}
	err = s.db.QueryRowContext(ctx, "SELECT count(*) FROM read_parquet("+sqlString(s.derivedPath(m.State))+")").Scan(&stateRows)
	return stateRows, err
}

// sameColumns fails, naming the file, when a derived file of list has other
// columns (names and types, in any order) than the relation empty. The
// derived files are flat: every schema element but the root is a column.
func (s *Deriver) sameColumns(ctx context.Context, list, empty string) error {
	var want string
	if err := s.db.QueryRowContext(ctx, `SELECT string_agg(column_name || ' ' || column_type, ', ' ORDER BY column_name)
		FROM (DESCRIBE SELECT * FROM `+empty+`)`).Scan(&want); err != nil {
		return err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT file_name, string_agg(name || ' ' || coalesce(duckdb_type, 'a nested type'), ', ' ORDER BY name)
		FROM parquet_schema(`+list+`) WHERE coalesce(num_children, 0) = 0 GROUP BY file_name`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var file, got string
		if err := rows.Scan(&file, &got); err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("derived file %s has the columns (%s), want (%s)", file, got, want)
		}
	}
	return rows.Err()
}

// readManifest returns the manifest in force, or nil before the first
// derivation.
func (s *core) readManifest() (*manifest, error) {
	path := s.path(DerivedDir, manifestFile)
	b, err := os.ReadFile(path)
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		// Unreadable (a directory in its place, no permission, a disk
		// error) is as damaged as unparsable: the cache is rebuilt.
		return nil, &damagedManifestError{path, unwrapPathError(err).Error()}
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, &damagedManifestError{path, err.Error()}
	}
	if m.State == "" || m.Generation < 1 {
		return nil, &damagedManifestError{path, "no state file named"}
	}
	return &m, nil
}

// HasDerivation reports whether a derivation is in force to answer from:
// what a reader that cannot derive (a read-only data directory) needs to
// know before it answers "nothing" for "not derived yet".
func (s *Deriver) HasDerivation() bool {
	m, err := s.readManifest()
	return err == nil && m != nil
}

// unwrapPathError drops the path from err, for messages that name it already.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// damagedManifestError says the manifest could not be read or understood.
// A derivation rebuilds the derived state then; readers report it.
type damagedManifestError struct {
	path, why string
}

func (e *damagedManifestError) Error() string {
	return fmt.Sprintf("read %s: %s (the next derivation rebuilds data/derived)", e.path, e.why)
}

// writeManifest replaces the manifest atomically: written into data/tmp,
// synced, renamed over the old one.
func (s *Deriver) writeManifest(m *manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("derive: manifest: %w", err)
	}
	final := s.path(DerivedDir, manifestFile)
	tmp := s.path(TmpDir, fmt.Sprintf("%d-%s", os.Getpid(), manifestFile))
	defer os.Remove(tmp)
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("derive: write manifest: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("derive: write manifest: %w", err)
	}
	// A directory in the manifest's place (readManifest took it for a
	// damaged manifest) would stop the rename; data/derived is a cache.
	if info, err := os.Lstat(final); err == nil && info.IsDir() {
		s.log.Warn("derive: removing the directory in the manifest's place", "dir", final)
		if err := os.RemoveAll(final); err != nil {
			return fmt.Errorf("derive: write manifest: %w", err)
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("derive: write manifest: %w", err)
	}
	if err := syncDir(filepath.Dir(final)); err != nil {
		return fmt.Errorf("derive: write manifest: %w", err)
	}
	return nil
}

// retire lists the files next keeps for readers: old's files that next no
// longer names (retired now), and the files retired earlier less than grace
// ago. The previous generation's files are always kept, whatever the grace,
// so a reader that defined its views just before this step can finish.
func retire(old, next *manifest, grace time.Duration) []retired {
	if old == nil {
		return nil
	}
	current := map[string]bool{}
	for _, f := range next.files() {
		current[f] = true
	}
	var out []retired
	for _, r := range old.Retired {
		if next.DerivedAt.Sub(r.At) < grace {
			out = append(out, retired{r.At, slices.DeleteFunc(slices.Clone(r.Files), func(f string) bool { return current[f] })})
		}
	}
	now := retired{At: next.DerivedAt}
	for _, f := range old.files() {
		if !current[f] {
			now.Files = append(now.Files, f)
		}
	}
	if len(now.Files) > 0 {
		out = append(out, now)
	}
	out = slices.DeleteFunc(out, func(r retired) bool { return len(r.Files) == 0 })
	return out[max(0, len(out)-maxRetired):]
}

// collectGarbage removes the derived files that the manifest in force names
// neither as current nor as retired: files retired longer ago than the grace,
// and the orphans of a step that crashed before its manifest was written.
func (s *Deriver) collectGarbage(next *manifest) {
	keep := map[string]bool{}
	for _, f := range next.files() {
		keep[f] = true
	}
	for _, r := range next.Retired {
		for _, f := range r.Files {
			keep[f] = true
		}
	}
	for _, rel := range s.derivedFiles() {
		if keep[rel] {
			continue
		}
		m := s.path(DerivedDir, filepath.FromSlash(rel))
		if err := os.Remove(m); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("derive: remove stale file", "file", m, "err", err)
		}
	}
}

// derivedFiles lists the derived files on disk (state, delta, transitions
// and live events files), relative to data/derived, as a manifest names
// them.
func (s *Deriver) derivedFiles() []string {
	var out []string
	// Listed, not globbed: the directory's path is taken as it is.
	for _, sub := range []string{"", transitionsDir, liveEventsDir} {
		names, _ := parquetFiles(s.path(DerivedDir, sub))
		for _, name := range names {
			if sub == "" && !strings.HasPrefix(name, "state-") && !strings.HasPrefix(name, "delta-") {
				continue
			}
			if sub != "" {
				name = sub + "/" + name
			}
			out = append(out, name)
		}
	}
	return out
}

// unindexed is what a step that found no manifest (lost or damaged) does
// with the derived files on disk: readers that defined their views before
// it was lost may still be reading them, so they are retired now, not
// removed, and the new generation comes after the highest one among them,
// so that none of their names is reused.
func (s *Deriver) unindexed(now time.Time) (retiredNow retired, lastGeneration int64) {
	retiredNow.At = now
	for _, rel := range s.derivedFiles() {
		retiredNow.Files = append(retiredNow.Files, rel)
		name := path.Base(rel)
		for _, prefix := range []string{"state-", "delta-"} {
			name = strings.TrimPrefix(name, prefix)
		}
		digits := strings.TrimSuffix(name, ".parquet")
		if g, err := strconv.ParseInt(digits, 10, 64); err == nil {
			lastGeneration = max(lastGeneration, g)
		}
	}
	return retiredNow, lastGeneration
}
