package duck_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
)

func TestCorruptSnapshotIsAnErrorNamingTheFile(t *testing.T) {
	for name, damage := range map[string]func(real []byte) []byte{
		"garbage":   func([]byte) []byte { return []byte("this is not parquet at all") },
		"truncated": func(real []byte) []byte { return real[:len(real)/2] },
		// The magic bytes intact and the footer (the schema) damaged:
		// DuckDB's message names no file, so the store finds it.
		"footer": func(real []byte) []byte {
			footer := len(real) - 8 - int(binary.LittleEndian.Uint32(real[len(real)-8:]))
			for i := footer + 20; i < footer+60; i++ {
				real[i] ^= 0xff
			}
			return real
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			write(t, s, "p0", []ev{alive("a.example", 0)})
			derive(t, s, config.State{}, false)
			write(t, s, "p1", []ev{alive("a.example", day)})
			bad := filepath.Join(dir, "checks", "date=2026-01-06", "p1-00000.parquet")
			real, err := os.ReadFile(bad)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(bad, damage(real), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, full := range []bool{false, true} {
				_, err := s.Deriver.Derive(context.Background(), duck.DeriveOptions{Rules: defaultRules, Full: full})
				if err == nil || !strings.Contains(err.Error(), bad) {
					t.Fatalf("full=%v: want an error naming %s, got %v", full, bad, err)
				}
			}
			// The state in force is still the one before the bad file.
			if err := os.Remove(bad); err != nil {
				t.Fatal(err)
			}
			if rep := derive(t, s, config.State{}, false); rep.Generation != 1 || rep.Files != 0 {
				t.Fatalf("after removing the bad file: %+v", rep)
			}
			views(t, s, t0)
			if got := stateOf(t, s, "a.example"); got != "live since d0" {
				t.Fatalf("state after failed derivation: %s", got)
			}
		})
	}
}

// A snapshot damaged after it was folded fails the views over the
// snapshots with one line naming it, not DuckDB's message followed by the
// CREATE VIEW statement the user never wrote and a caret under it.
func TestDamagedFoldedSnapshotFailsTheViewsInOneLine(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	write(t, s, "p0", []ev{alive("a.example", 0)})
	derive(t, s, config.State{}, false)
	files, _ := filepath.Glob(filepath.Join(dir, "checks", "*", "*.parquet"))
	if len(files) != 1 {
		t.Fatalf("snapshot files: %v", files)
	}
	if err := os.WriteFile(files[0], []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := s.Reader.CreateViews(context.Background(), duck.ViewParams{Now: t0, Rules: defaultRules})
	if err == nil || !strings.Contains(err.Error(), files[0]) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("want one line naming %s, got %q", files[0], err)
	}
}

// damagePage overwrites bytes in the middle of the compressed pages of
// file's column, which its footer still describes: the damage is only
// found when a query decodes that column.
func damagePage(t *testing.T, file, column string) {
	t.Helper()
	var offset, size int64
	if err := openDuckDB(t).QueryRow(`SELECT coalesce(dictionary_page_offset, data_page_offset), total_compressed_size
		FROM parquet_metadata(?) WHERE path_in_schema = ?`,
		filepath.ToSlash(file), column).Scan(&offset, &size); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i := offset + size/4; i < offset+size*3/4; i++ {
		b[i] = 0xff
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A snapshot whose pages are damaged (its footer intact) is found when the
// fold or a query decodes it. DuckDB's message then names the file for a
// page that does not decompress, but not for one that decodes to invalid
// UTF-8, and quotes kilobytes of the rows around it: the error names the
// file, in a line of reasonable length. Uncompressed, as another writer
// may leave a file, the damage reaches the strings themselves.
func TestDamagedPageIsAnErrorNamingTheFile(t *testing.T) {
	var evs []ev
	for i := range 400 {
		evs = append(evs, alive(fmt.Sprintf("host-%03d-with-a-long-enough-name.example", i), 0))
	}
	for _, tc := range []struct{ compression, cause string }{
		// DuckDB names the file itself when a page does not decompress.
		{"zstd", "Decompression failure"},
		{"uncompressed", "Invalid string encoding"},
	} {
		t.Run(tc.compression, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			// A sound file read before the damaged one: the blame must
			// fall on the right one.
			write(t, s, "a0", []ev{alive("sound.example", 0)})
			sound, _ := filepath.Glob(filepath.Join(dir, "checks", "*", "a0-*.parquet"))
			if len(sound) != 1 {
				t.Fatalf("snapshot files: %v", sound)
			}
			writeDamaged := func() string {
				write(t, s, "p0", evs)
				files, _ := filepath.Glob(filepath.Join(dir, "checks", "*", "p0-*.parquet"))
				if len(files) != 1 {
					t.Fatalf("snapshot files: %v", files)
				}
				if tc.compression != "zstd" {
					rewriteSnapshot(t, files[0], "* ", "COMPRESSION "+tc.compression+", DICTIONARY_SIZE_LIMIT 1")
				}
				return files[0]
			}
			file := writeDamaged()
			damagePage(t, file, "name")
			oneLineNaming := func(what string, err error) {
				t.Helper()
				if err == nil || !strings.Contains(err.Error(), file) || strings.Contains(err.Error(), sound[0]) ||
					!strings.Contains(err.Error(), tc.cause) || strings.Contains(err.Error(), "\n") || len(err.Error()) > 800 {
					t.Fatalf("%s: want one line naming %s and DuckDB's %q, got %q", what, file, tc.cause, err)
				}
			}
			_, err := s.Deriver.Derive(context.Background(), duck.DeriveOptions{Rules: defaultRules})
			oneLineNaming("derive", err)

			// Folded before the damage: the views stand (they read
			// footers), and a query that reads the damaged column fails
			// naming the file.
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
			writeDamaged()
			derive(t, s, config.State{}, false)
			damagePage(t, file, "name")
			views(t, s, t0)
			_, err = s.Reader.QueryMaps(context.Background(), "SELECT max(name) FROM checks")
			oneLineNaming("query", err)
			// A query's own mistake is DuckDB's message as it is, caret
			// and all, even when what it quotes reads like damage.
			for _, q := range []string{`SELECT no_such_column FROM checks`, `SELECT "Out of buffer" FROM checks`,
				`SELECT 'Corrupted file'::INTEGER`, `SELECT * FROM read_parquet('Invalid Error: none.parquet')`} {
				_, err = s.Reader.QueryMaps(context.Background(), q)
				if err == nil || strings.Contains(err.Error(), " is damaged") || strings.Contains(err.Error(), "checks/") ||
					!strings.Contains(err.Error(), "\n") {
					t.Fatalf("%s: %q, want DuckDB's own message, with its caret", q, err)
				}
			}
		})
	}
}

func TestLeftoverTempFilesAreIgnored(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	write(t, s, "p0", []ev{alive("a.example", 0)})
	if err := os.WriteFile(filepath.Join(dir, "tmp", "123-p9-00000.parquet"), []byte("half a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := derive(t, s, config.State{}, false); rep.Hosts != 1 || rep.Files != 1 {
		t.Fatalf("derive = %+v", rep)
	}
}

func TestLateChecksFallBackToFullDerivation(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	write(t, s, "p0", []ev{alive("a.example", 0), alive("a.example", 2*day)})
	derive(t, s, config.State{}, false)
	// A file from another pass with a check between the folded ones.
	write(t, s, "p1", []ev{fail("a.example", day)})
	rep := derive(t, s, config.State{}, false)
	if !rep.Full || rep.FullReason == "" {
		t.Fatalf("late check folded incrementally: %+v", rep)
	}
	views(t, s, t0.Add(3*day))
	if got := transitionsOf(t, s, "a.example"); strings.Join(got, ",") != "discovered>live d0,live>dying d1,dying>live d2" {
		t.Fatalf("transitions = %v", got)
	}
}

func TestDeriveFoldsOnlyNewFilesAndRecordsThem(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	write(t, s, "p0", []ev{discover("a.example", 0), alive("a.example", 0), discover("b.example", 0)})
	if rep := derive(t, s, config.State{}, false); rep.Files != 2 || rep.Generation != 1 || rep.Hosts != 2 {
		t.Fatalf("first = %+v", rep)
	}
	if rep := derive(t, s, config.State{}, false); rep.Files != 0 || rep.Generation != 1 || rep.Hosts != 2 {
		t.Fatalf("nothing new = %+v", rep)
	}
	write(t, s, "p1", []ev{fail("a.example", day)})
	if rep := derive(t, s, config.State{}, false); rep.Full || rep.Files != 1 || rep.Generation != 2 || rep.Transitions != 1 {
		t.Fatalf("one new file = %+v", rep)
	}
	b, err := os.ReadFile(filepath.Join(dir, "derived", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Checks, Discoveries []string }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if strings.Join(m.Checks, ",") != "checks/date=2026-01-05/p0-00000.parquet,checks/date=2026-01-06/p1-00000.parquet" ||
		strings.Join(m.Discoveries, ",") != "discoveries/date=2026-01-05/p0-00000.parquet" {
		t.Fatalf("manifest = %s", b)
	}
	// Changed thresholds rebuild in full.
	st := config.Default().State
	st.FailuresToDead = 1
	if rep := derive(t, s, st, false); !rep.Full {
		t.Fatalf("changed thresholds = %+v", rep)
	}
}

func TestWriteQueryFormats(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	q := `SELECT * FROM (VALUES ('a|b', 1::BIGINT, NULL::VARCHAR, TIMESTAMP '2026-01-05 12:00:00'),
		('line' || chr(10) || 'break', 22, 'x"y', TIMESTAMP '2026-01-06 00:00:00')) t(name, n, note, ts) ORDER BY n`
	want := map[string]string{
		"csv": "name,n,note,ts\na|b,1,,2026-01-05T12:00:00Z\n\"line\nbreak\",22,\"x\"\"y\",2026-01-06T00:00:00Z\n",
		"json": `[
  {"name": "a|b", "n": 1, "note": null, "ts": "2026-01-05T12:00:00Z"},
  {"name": "line\nbreak", "n": 22, "note": "x\"y", "ts": "2026-01-06T00:00:00Z"}
]
`,
		"markdown": "| name | n | note | ts |\n| --- | --- | --- | --- |\n| a\\|b | 1 |  | 2026-01-05T12:00:00Z |\n| line break | 22 | x\"y | 2026-01-06T00:00:00Z |\n",
		"table":    "name        n   note  ts\n----------  --  ----  --------------------\na|b         1   NULL  2026-01-05T12:00:00Z\nline break  22  x\"y   2026-01-06T00:00:00Z\n",
	}
	for format, w := range want {
		var b bytes.Buffer
		if err := s.Reader.WriteQuery(ctx, &b, q, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if b.String() != w {
			t.Errorf("%s:\n%s\nwant\n%s", format, b.String(), w)
		}
	}
	var b bytes.Buffer
	if err := s.Reader.WriteQuery(ctx, &b, "SELECT 1 WHERE false", "json"); err != nil || b.String() != "[]\n" {
		t.Errorf("empty json = %q, %v", b.String(), err)
	}
	if err := s.Reader.WriteQuery(ctx, &b, "SELEC nonsense", "table"); err == nil || !strings.Contains(err.Error(), "syntax error") {
		t.Errorf("bad query: %v", err)
	}
	if err := s.Reader.WriteQuery(ctx, &b, "SELECT 1", "xml"); err == nil {
		t.Error("unknown format accepted")
	}
}

// TestSnapshotsFromBeforeAColumnWasAddedStillDerive: checks written before
// the peers validators, the NodeInfo document's version and its unusable
// fields existed (no file has those columns) read as NULL.
func TestSnapshotsFromBeforeAColumnWasAddedStillDerive(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	write(t, s, "p0", []ev{alive("a.example", 0), discover("b.example", 0)})
	rewriteSnapshot(t, filepath.Join(dir, "checks", "date=2026-01-05", "p0-00000.parquet"),
		"* EXCLUDE (peers_etag, peers_last_modified, peers_not_modified, nodeinfo_document_version, unusable_fields)")
	if rep := derive(t, s, config.State{}, true); rep.Hosts != 2 {
		t.Fatalf("derive = %+v", rep)
	}
	views(t, s, t0)
	if got := stateOf(t, s, "a.example"); got != "live since d0" {
		t.Fatalf("a.example: %s", got)
	}
	var d []duck.DueHost
	if err := s.Reader.DueHosts(context.Background(), t0.Add(40*day), duck.PeersSchedule{Interval: 7 * day, MinInterval: 7 * day}, func(h duck.DueHost) { d = append(d, h) }); err != nil {
		t.Fatal(err)
	}
	if len(d) != 2 || d[0].PeersETag != "" {
		t.Fatalf("due = %+v", d)
	}
	// The checks view has the columns too, as NULL, so that queries naming
	// them work before a pass writes them.
	if got := texts(t, s, "SELECT count(*) || ' ' || count(peers_etag) || ' ' || count(peers_not_modified) || ' ' || "+
		"count(nodeinfo_document_version) || ' ' || count(unusable_fields) FROM checks"); got[0] != "1 0 0 0 0" {
		t.Fatalf("checks without the columns: %q", got)
	}
}

// A file from a newer observer has columns this one does not know (the
// schema only grows at the end): they are carried by the checks view and
// ignored by the derivation, and the rest of the file reads as usual.
func TestSnapshotsFromANewerSchemaStillDerive(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	write(t, s, "p0", []ev{alive("a.example", 0), fail("b.example", 0)})
	rewriteSnapshot(t, filepath.Join(dir, "checks", "date=2026-01-05", "p0-00000.parquet"),
		"*, 'v9' AS future_signal, 42::BIGINT AS future_count")
	write(t, s, "p1", []ev{alive("a.example", day), alive("b.example", day)})
	if rep := derive(t, s, config.State{}, false); rep.Hosts != 2 || rep.Files != 2 {
		t.Fatalf("derive = %+v", rep)
	}
	views(t, s, t0.Add(2*day))
	if got := transitionsOf(t, s, "b.example"); strings.Join(got, ",") != "discovered>live d1" {
		t.Fatalf("b.example: %v", got)
	}
	rows, err := s.Reader.QueryMaps(context.Background(),
		"SELECT host, future_signal FROM checks WHERE host = 'a.example' ORDER BY checked_at")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0]["future_signal"] != "v9" || rows[1]["future_signal"] != nil {
		t.Fatalf("checks of a.example: %v", rows)
	}
}

// rewriteSnapshot replaces a snapshot file with SELECT columns of it,
// written by a bare DuckDB as another program (or another version of
// observer) would.
func rewriteSnapshot(t *testing.T, file, columns string, options ...string) {
	t.Helper()
	tmp := file + ".rewrite"
	if _, err := openDuckDB(t).Exec("COPY (SELECT " + columns + " FROM read_parquet('" + filepath.ToSlash(file) +
		"')) TO '" + filepath.ToSlash(tmp) + "' (" + strings.Join(append([]string{"FORMAT parquet"}, options...), ", ") + ")"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
}

// openDuckDB is a bare in-memory DuckDB, to write files as another
// program (or an older observer) would.
func openDuckDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestRetiredFilesOutliveDerivations: a reader that defined its views at
// one generation can still query them after two more derivations (the
// files it reads are retired, not removed, for an hour, four generations at
// most), and retired files do go once their grace is over, except the
// previous generation's.
func TestRetiredFilesOutliveDerivations(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	write(t, s, "p0", []ev{discover("a.example", 0), alive("a.example", 0)})
	derive(t, s, config.State{}, false)
	reader := openStore(t, dir)
	views(t, reader, t0.Add(day))
	readAll := func() error {
		for _, q := range []string{"SELECT count(*) FROM state", "SELECT count(*) FROM transitions", "SELECT count(*) FROM stats"} {
			rows, err := reader.Reader.Query(context.Background(), q)
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := readAll(); err != nil {
		t.Fatal(err)
	}
	stateFiles := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, duck.DerivedDir, "state-*.parquet"))
		return m
	}
	// Two full derivations replace every file the reader's views name.
	write(t, s, "p1", []ev{fail("a.example", day)})
	derive(t, s, config.State{}, true)
	write(t, s, "p2", []ev{alive("a.example", 2*day)})
	derive(t, s, config.State{}, true)
	if got := len(stateFiles()); got != 3 {
		t.Fatalf("%d state files after three generations within the grace, want 3", got)
	}
	if err := readAll(); err != nil {
		t.Fatalf("reader of generation 1 after generation 3: %v", err)
	}
	// Within the grace, only the last four retired generations stay.
	for i := 3; i <= 5; i++ {
		write(t, s, fmt.Sprintf("p%d", i), []ev{alive("a.example", time.Duration(i)*day)})
		derive(t, s, config.State{}, true)
	}
	if got := stateFiles(); len(got) != 5 || !strings.HasSuffix(got[0], "state-00000002.parquet") {
		t.Fatalf("state files after six generations = %v, want generations 2 to 6", got)
	}
	// With no grace, the next step keeps only its own files and the
	// previous generation's.
	write(t, s, "p6", []ev{alive("a.example", 6*day)})
	if _, err := s.Deriver.Derive(context.Background(), duck.WithRetiredGrace(duck.DeriveOptions{Rules: defaultRules, Full: true}, 0)); err != nil {
		t.Fatal(err)
	}
	got := stateFiles()
	if len(got) != 2 || !strings.HasSuffix(got[0], "state-00000006.parquet") || !strings.HasSuffix(got[1], "state-00000007.parquet") {
		t.Fatalf("state files = %v, want generations 6 and 7", got)
	}
	// The reader's files are gone: its error says why, and what to do.
	if err := readAll(); err == nil || !strings.Contains(err.Error(), "newer derivations") || !strings.Contains(err.Error(), "run it again") {
		t.Fatalf("the reader of generation 1 after its files were collected: %v", err)
	}
	// So do the build's own reads.
	if _, err := reader.Reader.Stats(context.Background()); err == nil || !strings.Contains(err.Error(), "newer derivations") {
		t.Fatalf("Stats of the reader of generation 1 after its files were collected: %v", err)
	}
}

// data/derived is a cache of the snapshots: a damaged file in it is rebuilt
// from them, whether or not there are new snapshots to fold.
func TestDamagedDerivedFilesAreRebuilt(t *testing.T) {
	for _, tc := range []struct {
		name     string
		damage   func(m map[string]any) string // the file to damage, relative to data/derived
		newFiles bool
		// foreign: replaced by a valid Parquet file of other columns (a
		// snapshot copied over it) instead of truncated.
		foreign bool
		// pages: its pages damaged, its footer and size intact, which
		// only its hash in the manifest tells.
		pages bool
	}{
		{"state truncated, nothing new", func(m map[string]any) string { return m["state"].(string) }, false, false, false},
		{"state truncated, a new file", func(m map[string]any) string { return m["state"].(string) }, true, false, false},
		{"transitions damaged", func(m map[string]any) string { return m["transitions"].([]any)[0].(string) }, false, false, false},
		{"state foreign, nothing new", func(m map[string]any) string { return m["state"].(string) }, false, true, false},
		{"transitions foreign", func(m map[string]any) string { return m["transitions"].([]any)[0].(string) }, false, true, false},
		{"state pages, a new file", func(m map[string]any) string { return m["state"].(string) }, true, false, true},
		{"live events pages", func(m map[string]any) string { return m["live_events"].([]any)[0].(string) }, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			write(t, s, "p0", []ev{alive("a.example", 0), alive("b.example", 0)})
			derive(t, s, config.State{}, false)
			write(t, s, "p1", []ev{fail("a.example", day), alive("b.example", day)})
			if rep := derive(t, s, config.State{}, false); rep.Full {
				t.Fatalf("second step not incremental: %+v", rep)
			}
			b, err := os.ReadFile(filepath.Join(dir, "derived", "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			bad := filepath.Join(dir, "derived", filepath.FromSlash(tc.damage(m)))
			real, err := os.ReadFile(bad)
			if err != nil {
				t.Fatal(err)
			}
			damaged := real[:len(real)/2]
			if tc.foreign {
				snapshots, _ := filepath.Glob(filepath.Join(dir, "checks", "*", "*.parquet"))
				if len(snapshots) == 0 {
					t.Fatal("no snapshot to copy")
				}
				if damaged, err = os.ReadFile(snapshots[0]); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(bad, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.pages {
				if err := os.WriteFile(bad, real, 0o644); err != nil {
					t.Fatal(err)
				}
				damagePage(t, bad, "host")
			}
			if tc.newFiles {
				write(t, s, "p2", []ev{alive("a.example", 2*day)})
			}

			rep := derive(t, s, config.State{}, false)
			if !rep.Full || !strings.Contains(rep.FullReason, "unreadable") || !strings.Contains(rep.FullReason, filepath.Base(bad)) {
				t.Fatalf("want a full derivation naming %s, got %+v", filepath.Base(bad), rep)
			}
			views(t, s, t0.Add(3*day))
			want := "dying since d1"
			wantTransitions := "discovered>live d0,live>dying d1"
			if tc.newFiles {
				want, wantTransitions = "live since d2", wantTransitions+",dying>live d2"
			}
			if got := stateOf(t, s, "a.example"); got != want {
				t.Fatalf("a.example: %s, want %s", got, want)
			}
			if got := strings.Join(transitionsOf(t, s, "a.example"), ","); got != wantTransitions {
				t.Fatalf("a.example's transitions: %s, want %s", got, wantTransitions)
			}
		})
	}
}

// Snapshots are never rewritten, so a folded one whose size changed (here
// a discoveries file copied over a checks file) is checked again, by a full
// derivation: the views would otherwise read it with NULL in every column
// it lacks. A manifest from before sizes and hashes were recorded is taken
// as it is, and gets them at the next step.
func TestChangedFoldedSnapshotIsCheckedAgain(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	write(t, s, "p0", []ev{discover("a.example", 0), alive("a.example", 0)})
	derive(t, s, config.State{}, false)

	manifestPath := filepath.Join(dir, "derived", "manifest.json")
	b, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m["sizes"].(map[string]any)) != 2 || len(m["sums"].(map[string]any)) != 3 {
		t.Fatalf("manifest sizes %v, sums %v: want the checks and discoveries files' sizes, and the state's, transitions' and live events' hashes",
			m["sizes"], m["sums"])
	}
	delete(m, "sizes")
	delete(m, "sums")
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifestPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, s, "p1", []ev{alive("a.example", day)})
	if rep := derive(t, s, config.State{}, false); rep.Full {
		t.Fatalf("a manifest without sizes and hashes: %+v", rep)
	}

	checks, _ := filepath.Glob(filepath.Join(dir, "checks", "*", "p0-*.parquet"))
	discoveries, _ := filepath.Glob(filepath.Join(dir, "discoveries", "*", "*.parquet"))
	if len(checks) != 1 || len(discoveries) != 1 {
		t.Fatalf("snapshots %v %v", checks, discoveries)
	}
	d, err := os.ReadFile(discoveries[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(checks[0], d, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = s.Deriver.Derive(context.Background(), duck.DeriveOptions{Rules: defaultRules})
	if err == nil || !strings.Contains(err.Error(), checks[0]) || !strings.Contains(err.Error(), "checked_at") {
		t.Fatalf("want an error naming %s and its missing column, got %v", checks[0], err)
	}
}

// data/derived is the derivation's own: a file where its transitions
// directory belongs, or a directory where its lock file does, is cleared,
// not an error at every later run.
func TestWhatStandsInTheDerivedStatesWayIsCleared(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	write(t, s, "p0", []ev{alive("a.example", 0)})
	derive(t, s, config.State{}, false)
	derived := filepath.Join(dir, "derived")
	if err := os.RemoveAll(filepath.Join(derived, "transitions")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(derived, "transitions"), []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(derived, ".lock")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(derived, ".lock", "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A link to a directory (on another disk, say) is where it belongs.
	elsewhere := filepath.Join(t.TempDir(), "live_events")
	if err := os.Rename(filepath.Join(derived, "live_events"), elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(derived, "live_events")); err != nil {
		t.Fatal(err)
	}
	write(t, s, "p1", []ev{fail("a.example", day)})
	derive(t, s, config.State{}, false)
	if info, err := os.Lstat(filepath.Join(derived, "live_events")); err != nil || info.Mode().Type() != fs.ModeSymlink {
		t.Fatalf("the linked live_events directory: %v %v", info, err)
	}
	// A link where the lock file belongs is removed, not locked: taking
	// the lock writes the pid into the file, which would be the link's.
	precious := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(precious, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(derived, ".lock")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(precious, filepath.Join(derived, ".lock")); err != nil {
		t.Fatal(err)
	}
	write(t, s, "p2", []ev{fail("a.example", 2*day)})
	derive(t, s, config.State{}, false)
	if b, err := os.ReadFile(precious); err != nil || string(b) != "keep me\n" {
		t.Fatalf("the file a link at .lock named: %q %v", b, err)
	}
	views(t, s, t0.Add(3*day))
	if got := strings.Join(transitionsOf(t, s, "a.example"), ","); got != "discovered>live d0,live>dying d1" {
		t.Fatalf("a.example's transitions: %s", got)
	}
	if info, err := os.Stat(filepath.Join(derived, ".lock")); err != nil || !info.Mode().IsRegular() {
		t.Fatalf("the lock file: %v %v", info, err)
	}
}

// The manifest is the index of that cache: damaged or unreadable, it is
// rebuilt too. The files it named are retired, not removed, since readers
// that defined their views before it was damaged may still read them, and
// the new generation's names come after theirs.
func TestDamagedManifestIsRebuilt(t *testing.T) {
	content := func(text string) func(string) error {
		return func(path string) error { return os.WriteFile(path, []byte(text), 0o644) }
	}
	for name, damage := range map[string]func(path string) error{
		"not JSON":      content(`{"generation": 2, "sta`),
		"no state file": content(`{"generation": 2}`),
		"a directory": func(path string) error {
			if err := os.Remove(path); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(path, "sub"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(path, "sub", "x"), []byte("x"), 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			write(t, s, "p0", []ev{alive("a.example", 0)})
			derive(t, s, config.State{}, false)
			write(t, s, "p1", []ev{fail("a.example", day)})
			derive(t, s, config.State{}, false)
			manifest := filepath.Join(dir, "derived", "manifest.json")
			if err := damage(manifest); err != nil {
				t.Fatal(err)
			}
			rep := derive(t, s, config.State{}, false)
			if !rep.Full || !strings.Contains(rep.FullReason, "manifest.json") || rep.Generation != 3 {
				t.Fatalf("want a full derivation naming the manifest, as generation 3, got %+v", rep)
			}
			views(t, s, t0.Add(2*day))
			if got := strings.Join(transitionsOf(t, s, "a.example"), ","); got != "discovered>live d0,live>dying d1" {
				t.Fatalf("transitions after the rebuild: %s", got)
			}
			// The earlier generations' files stay, retired, beside the
			// rebuilt one's, and a manifest names them all.
			states, _ := filepath.Glob(filepath.Join(dir, "derived", "state-*.parquet"))
			if len(states) != 3 {
				t.Fatalf("state files after the rebuild: %v", states)
			}
			b, err := os.ReadFile(manifest)
			if err != nil || !strings.Contains(string(b), `"state-00000002.parquet"`) || !strings.Contains(string(b), `"state": "state-00000003.parquet"`) {
				t.Fatalf("manifest after the rebuild: %s, %v", b, err)
			}
			// Once their grace is over, the next step removes them.
			write(t, s, "p2", []ev{alive("a.example", 2*day)})
			rep, err = s.Deriver.Derive(context.Background(), duck.WithRetiredGrace(duck.DeriveOptions{Rules: defaultRules}, 0))
			if err != nil || rep.Full || rep.Generation != 4 {
				t.Fatalf("derivation after the rebuild: %+v, %v", rep, err)
			}
			states, _ = filepath.Glob(filepath.Join(dir, "derived", "state-*.parquet"))
			if len(states) != 2 {
				t.Fatalf("state files once the grace is over: %v (want generation 3's, kept for one step, and 4's)", states)
			}
		})
	}
}

// Each incremental step that finds transitions adds a file; past a limit,
// the step's file takes in the earlier ones, and what the views show does
// not change.
func TestTransitionsAndLiveEventsFilesAreMerged(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	opts := duck.WithRetiredGrace(duck.WithDerivedParts(duck.DeriveOptions{Rules: defaultRules}, 3), 0)
	var merged bool
	for d := range 8 {
		// a.example flaps every day, so every step has transitions and
		// live events.
		e := alive("a.example", time.Duration(d)*day)
		if d%2 == 1 {
			e = fail("a.example", time.Duration(d)*day)
		}
		write(t, s, fmt.Sprintf("p%d", d), []ev{e, alive(fmt.Sprintf("h%d.example", d), time.Duration(d)*day)})
		rep, err := s.Deriver.Derive(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Transitions == 0 {
			t.Fatalf("day %d: no transitions", d)
		}
		b, err := os.ReadFile(filepath.Join(dir, "derived", "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Transitions []string `json:"transitions"`
			LiveEvents  []string `json:"live_events"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if len(m.Transitions) > 3 || len(m.LiveEvents) > 3 {
			t.Fatalf("day %d: %d transitions files, %d live events files", d, len(m.Transitions), len(m.LiveEvents))
		}
		merged = merged || len(m.Transitions) < d+1
		files, _ := filepath.Glob(filepath.Join(dir, "derived", "transitions", "*.parquet"))
		if len(files) > 3+len(m.Transitions) { // at most the previous generation's kept
			t.Fatalf("day %d: %d transitions files on disk, manifest names %d", d, len(files), len(m.Transitions))
		}
	}
	if !merged {
		t.Fatal("the files were never merged")
	}
	inc := dump(t, s, dir)
	derive(t, s, config.State{}, true)
	compareDumps(t, "merged incremental against full", inc, dump(t, s, dir))
}

// What does not fit in memory spills under data/tmp, whether or not a
// memory limit is set: DuckDB's default is .tmp in the working directory,
// outside data/, where a large `observer sql` query would write. Each Store
// spills into its own directory: DuckDB's spill files have the same names in
// every process, and two processes spilling into one directory crashed each
// other. Its name starts with the pid, so that the next writer removes a
// killed process's spill, and Close removes it.
func TestSpillStaysInDataAndIsPerStore(t *testing.T) {
	dir := t.TempDir()
	spillDir := func(s *duck.Store) string {
		got, err := s.Reader.QueryMaps(context.Background(), "SELECT current_setting('temp_directory') AS d")
		if err != nil || len(got) != 1 {
			t.Fatalf("temp_directory: %v %v", got, err)
		}
		return got[0]["d"].(string)
	}
	a, err := duck.Open(context.Background(), dir, duck.Options{Create: true, MemoryLimit: "32MB"})
	if err != nil {
		t.Fatal(err)
	}
	b := openStore(t, dir)
	da, db := spillDir(a), spillDir(b)
	prefix := filepath.ToSlash(filepath.Join(dir, "tmp", fmt.Sprintf("%d-duckdb-spill-", os.Getpid())))
	for _, d := range []string{da, db} {
		if !strings.HasPrefix(d, prefix) {
			t.Errorf("temp_directory %s, want it under %s*", d, prefix)
		}
	}
	if da == db {
		t.Errorf("two Stores share the spill directory %s", da)
	}
	// Make a spill happen, then close: the directory goes with the Store.
	if _, err := a.Reader.QueryMaps(context.Background(),
		"SELECT sum(hash(i, rn)) AS s FROM (SELECT i, row_number() OVER (ORDER BY hash(i)) AS rn FROM range(3000000) t(i))"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.FromSlash(da)); err != nil {
		t.Fatalf("nothing spilled into %s: %v", da, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.FromSlash(da)); !os.IsNotExist(err) {
		t.Errorf("spill directory %s still there after Close: %v", da, err)
	}
}

// Queries see now() in UTC, as every time in data/ is, whatever the
// machine's zone (the cookbook compares times with now()::TIMESTAMP).
func TestQueriesRunInUTC(t *testing.T) {
	t.Setenv("TZ", "Asia/Tokyo")
	s := openStore(t, t.TempDir())
	got, err := s.Reader.QueryMaps(context.Background(), "SELECT current_setting('TimeZone') AS tz, epoch_us(now()::TIMESTAMP) AS now")
	if err != nil || len(got) != 1 {
		t.Fatalf("%v %v", got, err)
	}
	if got[0]["tz"] != "UTC" {
		t.Errorf("TimeZone %v, want UTC", got[0]["tz"])
	}
	if d := time.Since(time.UnixMicro(got[0]["now"].(int64))); d < -time.Hour || d > time.Hour {
		t.Errorf("now()::TIMESTAMP is %s away from UTC now", d)
	}
}

// Every connection of a Store runs in UTC, not only the first: the pool
// opens another whenever one is busy (a result still being read, the
// site's pages rendered in parallel, each with its sql calls), and a
// plain SET TimeZone is per connection, so there now() was local.
func TestEveryConnectionRunsInUTC(t *testing.T) {
	t.Setenv("TZ", "America/New_York")
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	// A result still being read holds the first connection.
	busy, err := s.Reader.Query(ctx, "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	got, err := s.Reader.QueryMaps(ctx, "SELECT current_setting('TimeZone') AS tz, epoch_us(now()::TIMESTAMP) AS now")
	if err != nil || len(got) != 1 {
		t.Fatalf("%v %v", got, err)
	}
	if got[0]["tz"] != "UTC" {
		t.Errorf("TimeZone %v on a second connection, want UTC", got[0]["tz"])
	}
	if d := time.Since(time.UnixMicro(got[0]["now"].(int64))); d < -time.Hour || d > time.Hour {
		t.Errorf("now()::TIMESTAMP is %s away from UTC now on a second connection", d)
	}
}
