package duck_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
)

// DuckDB reads *, ? and [ in any file name it is given as a pattern (and \
// as a directory separator), with no escape: a data directory whose path
// has one is refused before anything is created in it, as it would read
// other directories' snapshots or none. Other punctuation (braces, spaces,
// #) is taken literally, and such a directory reads only its own files.
func TestDataDirectoryWithAGlobCharacterIsRefused(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	for _, name := range []string{"site[1]", "site*x", "site?x", "site]x", `site\x`} {
		dir := filepath.Join(base, name, "data")
		s, err := duck.Open(ctx, dir, duck.Options{Create: true})
		if err == nil {
			s.Close()
			t.Fatalf("%s: opened", dir)
		}
		char := fmt.Sprintf("%q", name[4])
		if msg := err.Error(); !strings.Contains(msg, dir) || !strings.Contains(msg, char) || !strings.Contains(msg, "rename") {
			t.Fatalf("%s: want an error naming the directory and %s and saying to rename it, got %v", dir, char, err)
		}
		if _, err := os.Stat(filepath.Join(base, name)); !os.IsNotExist(err) {
			t.Fatalf("%s: created before being refused (%v)", dir, err)
		}
	}
	// A symbolic link to such a directory is refused too.
	target := filepath.Join(base, "disk[2]", "data")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "data-link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if s, err := duck.Open(ctx, link, duck.Options{}); err == nil || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), target) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("want an error naming %s and %s, got %v", link, target, err)
	}
	// CheckDataDir (what observer serve checks before it watches the
	// directory) refuses the same, and takes a plain directory.
	for _, dir := range []string{target, link} {
		if err := duck.CheckDataDir(dir); err == nil || !strings.Contains(err.Error(), "file pattern") {
			t.Fatalf("CheckDataDir(%s) = %v, want the pattern refused", dir, err)
		}
	}
	if err := duck.CheckDataDir(base); err != nil {
		t.Fatalf("CheckDataDir(%s) = %v", base, err)
	}

	// Braces are no pattern to DuckDB: "site{a,b}" reads neither sitea
	// nor siteb.
	for _, sibling := range []string{"sitea", "siteb"} {
		s := openStore(t, filepath.Join(base, sibling, "data"))
		write(t, s, "p0", []ev{alive("other.example", 0), discover("other.example", 0)})
		derive(t, s, config.State{}, false)
	}
	s := openStore(t, filepath.Join(base, "site{a,b} #1", "data"))
	write(t, s, "p0", []ev{alive("a.example", 0), discover("a.example", 0)})
	if rep := derive(t, s, config.State{}, false); rep.Hosts != 1 || rep.Files != 2 {
		t.Fatalf("derive = %+v", rep)
	}
	views(t, s, t0)
	for _, v := range []string{"checks", "discoveries", "state"} {
		if got := texts(t, s, "SELECT host FROM "+v); strings.Join(got, ",") != "a.example" {
			t.Fatalf("%s: %v", v, got)
		}
	}
}

// A snapshot file that does not match its schema (a column of another
// type, NULLs where there may be none, a NOT NULL column missing, a column
// named like one of read_parquet's that the derivation reads) stops a
// derivation, incremental or full, with an error naming the file, the
// column and what is wrong, before anything is written; the state in force
// stays. The passes are checked too: the passes view reads them.
func TestSnapshotNotMatchingItsSchemaIsAnErrorNamingFileAndColumn(t *testing.T) {
	checks := filepath.Join("checks", "date=2026-01-06", "p1-00000.parquet")
	discoveries := filepath.Join("discoveries", "date=2026-01-06", "p1-00000.parquet")
	passes := filepath.Join("passes", "date=2026-01-06", "p1.parquet")
	nullFor := func(col string) string {
		return fmt.Sprintf("* REPLACE (CASE WHEN host = 'b.example' THEN NULL ELSE %[1]s END AS %[1]s)", col)
	}
	for _, tc := range []struct {
		name, file, columns, want string
	}{
		{"checks users VARCHAR", checks, "* REPLACE (users::VARCHAR AS users)", "column users is VARCHAR, want BIGINT"},
		{"checks checked_at VARCHAR", checks, "* REPLACE (checked_at::VARCHAR AS checked_at)", "column checked_at is VARCHAR, want TIMESTAMP"},
		{"checks checked_at with time zone", checks, "* REPLACE (checked_at::TIMESTAMPTZ AS checked_at)",
			"column checked_at is TIMESTAMP WITH TIME ZONE, want TIMESTAMP"},
		{"checks host a struct", checks, "* REPLACE ({'name': host} AS host)", "column host is a nested type, want VARCHAR"},
		{"discoveries via INTEGER", discoveries, "* REPLACE (42 AS via)", "column via is INTEGER, want VARCHAR"},
		{"passes checked VARCHAR", passes, "* REPLACE (checked::VARCHAR AS checked)", "column checked is VARCHAR, want BIGINT"},
		{"checks NULL host", checks, nullFor("host"), "column host holds 1 NULL"},
		{"checks NULL checked_at", checks, nullFor("checked_at"), "column checked_at holds 1 NULL"},
		{"checks NULL outcome", checks, nullFor("outcome"), "column outcome holds 1 NULL"},
		{"checks NULL pass_id", checks, "* REPLACE (NULL::VARCHAR AS pass_id)", "column pass_id holds 2 NULLs"},
		{"checks without host", checks, "* EXCLUDE (host)", "column host is missing"},
		{"checks with a file_index", checks, "*, 7::UBIGINT AS file_index", "column file_index has the name of a column DuckDB gives"},
		{"checks with a file_row_number struct", checks, "*, {'n': 0} AS file_row_number",
			"column file_row_number has the name of a column DuckDB gives"},
		{"discoveries NULL discovered_at", discoveries, nullFor("discovered_at"), "column discovered_at holds 1 NULL"},
		{"discoveries NULL via", discoveries, nullFor("via"), "column via holds 1 NULL"},
		{"passes NULL started_at", passes, "* REPLACE (NULL::TIMESTAMP AS started_at)", "column started_at holds 1 NULL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			s := openStore(t, dir)
			write(t, s, "p0", []ev{discover("a.example", 0), alive("a.example", 0)})
			derive(t, s, config.State{}, false)
			write(t, s, "p1", []ev{discover("b.example", day), alive("a.example", day), fail("b.example", day)})
			if err := s.Snapshots.WritePass(ctx, observer.Pass{PassID: "p1", StartedAt: t0.Add(day), EndedAt: t0.Add(day + 1),
				Due: 2, Tally: observer.Tally{Checks: 2, ByOutcome: map[observer.Outcome]int64{observer.OutcomeAlive: 1, observer.OutcomeUnreachable: 1}}}); err != nil {
				t.Fatal(err)
			}
			bad := filepath.Join(dir, tc.file)
			rewriteSnapshot(t, bad, tc.columns)
			for _, opts := range []duck.DeriveOptions{{}, {Full: true}, duck.WithoutNullCounts(duck.DeriveOptions{Rules: defaultRules})} {
				_, err := s.Deriver.Derive(ctx, opts)
				if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("%+v: want an error naming %s and saying %q, got %v", opts, bad, tc.want, err)
				}
			}
			views(t, s, t0.Add(2*day))
			if got := stateOf(t, s, "a.example"); got != "live since d0" {
				t.Fatalf("state after the refused derivations: %s", got)
			}
			if err := os.Remove(bad); err != nil {
				t.Fatal(err)
			}
			if rep := derive(t, s, config.State{}, false); rep.Generation != 2 || rep.Full {
				t.Fatalf("after removing the bad file: %+v", rep)
			}
		})
	}

	// What reads as the schema's type is accepted: a narrower integer, and
	// files without null counts in their footers, whose NOT NULL columns are
	// then read to count them.
	t.Run("accepted", func(t *testing.T) {
		dir := t.TempDir()
		s := openStore(t, dir)
		write(t, s, "p0", []ev{discover("a.example", 0), alive("a.example", 0), fail("b.example", 0)})
		rewriteSnapshot(t, filepath.Join(dir, "checks", "date=2026-01-05", "p0-00000.parquet"),
			"* REPLACE (users::INTEGER AS users, http_status::SMALLINT AS http_status)")
		if err := s.Snapshots.WritePass(context.Background(), observer.Pass{PassID: "p0", StartedAt: t0, EndedAt: t0.Add(1)}); err != nil {
			t.Fatal(err)
		}
		for _, opts := range []duck.DeriveOptions{{}, duck.WithoutNullCounts(duck.DeriveOptions{Rules: defaultRules, Full: true})} {
			if rep, err := s.Deriver.Derive(context.Background(), opts); err != nil || rep.Hosts != 2 {
				t.Fatalf("%+v: %+v, %v", opts, rep, err)
			}
		}
		views(t, s, t0)
		if got := texts(t, s, "SELECT host || ' ' || users FROM state WHERE users IS NOT NULL"); strings.Join(got, ",") != "a.example 9" {
			t.Fatalf("users: %v", got)
		}
	})
}

// Every snapshot file belongs in the directory of its date, which DuckDB
// reads as the date column: Parquet files anywhere else under checks,
// discoveries or passes are refused, naming the directory, by a derivation
// and by the views, instead of being folded and breaking every query that
// reads date. So is a file whose name DuckDB would read as a pattern.
func TestSnapshotsOutsideADateDirectoryAreRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	write(t, s, "p0", []ev{discover("a.example", 0), alive("a.example", 0)})
	if err := s.Snapshots.WritePass(ctx, observer.Pass{PassID: "p0", StartedAt: t0, EndedAt: t0.Add(1)}); err != nil {
		t.Fatal(err)
	}
	derive(t, s, config.State{}, false)
	// Directories without Parquet files are not snapshots; they are left
	// alone.
	for _, p := range []string{"checks/date=notadate/README", "checks/old/"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(p, "/") {
			if err := os.WriteFile(filepath.Join(dir, p), []byte("notes"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	derive(t, s, config.State{}, false)

	source := map[string]string{
		"checks":      filepath.Join(dir, "checks", "date=2026-01-05", "p0-00000.parquet"),
		"discoveries": filepath.Join(dir, "discoveries", "date=2026-01-05", "p0-00000.parquet"),
		"passes":      filepath.Join(dir, "passes", "date=2026-01-05", "p0.parquet"),
	}
	for _, kind := range []string{"checks", "discoveries", "passes"} {
		for _, tc := range []struct{ sub, name, want string }{
			{"date=notadate", "x.parquet", "not named date=YYYY-MM-DD"},
			{"date=2026-02-30", "x.parquet", "not named date=YYYY-MM-DD"},
			{"date=2026-1-6", "x.parquet", "not named date=YYYY-MM-DD"},
			{"2026-01-06", "x.parquet", "not named date=YYYY-MM-DD"},
			{"date=2026-01-06", "x[1].parquet", `its name contains '['`},
		} {
			t.Run(kind+"/"+tc.sub+"/"+tc.name, func(t *testing.T) {
				b, err := os.ReadFile(source[kind])
				if err != nil {
					t.Fatal(err)
				}
				sub := filepath.Join(dir, kind, tc.sub)
				if err := os.MkdirAll(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				defer os.RemoveAll(sub)
				if err := os.WriteFile(filepath.Join(sub, tc.name), b, 0o644); err != nil {
					t.Fatal(err)
				}
				named := sub // the directory, or the file for a bad name
				if strings.Contains(tc.want, "its name") {
					named = filepath.Join(sub, tc.name)
				}
				for _, full := range []bool{false, true} {
					_, err := s.Deriver.Derive(ctx, duck.DeriveOptions{Rules: defaultRules, Full: full})
					if err == nil || !strings.Contains(err.Error(), named) || !strings.Contains(err.Error(), tc.want) {
						t.Fatalf("derive (full=%v): want an error naming %s and saying %q, got %v", full, named, tc.want, err)
					}
				}
				err = s.Reader.CreateViews(ctx, duck.ViewParams{Now: t0, Rules: defaultRules})
				if err == nil || !strings.Contains(err.Error(), named) {
					t.Fatalf("views: want an error naming %s, got %v", named, err)
				}
			})
		}
	}
	if rep := derive(t, s, config.State{}, false); rep.Generation != 1 {
		t.Fatalf("after removing the misplaced files: %+v", rep)
	}
}
