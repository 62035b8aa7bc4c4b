package duck

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/duckdb/duckdb-go/v2"
)

// Only DuckDB's errors of the kinds a damaged file gives, with a mark of
// damage in its own words, send blameDamaged reading every file: a query's
// mistake quoting the same words must not.
func TestLooksDamaged(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&duckdb.Error{Type: duckdb.ErrorTypeInvalidInput, Msg: `Invalid Input Error: Invalid string encoding found in Parquet file: value "x"`}, true},
		{fmt.Errorf("derive (fold_hosts): %w", &duckdb.Error{Type: duckdb.ErrorTypeInvalid, Msg: "Invalid Error: don't know what type: 15"}), true},
		{&duckdb.Error{Type: duckdb.ErrorTypeIO, Msg: `IO Error: Failed to read file "/d/x.parquet": ZSTD Decompression failure`}, true},
		{&duckdb.Error{Type: duckdb.ErrorTypeBinder, Msg: "Binder Error: Out of buffer"}, false},
		{&duckdb.Error{Type: duckdb.ErrorTypeConversion, Msg: "Conversion Error: Corrupted file"}, false},
		{&duckdb.Error{Type: duckdb.ErrorTypeIO, Msg: `IO Error: No files found that match the pattern "Corrupted file"`}, false},
		{errors.New("Invalid string encoding"), false},
	} {
		if got := looksDamaged(c.err); got != c.want {
			t.Errorf("looksDamaged(%q) = %v, want %v", c.err, got, c.want)
		}
	}
}

// A file that cannot be read for another reason than damage (gone since it
// was listed) is not blamed.
func TestBlameDamagedPassesOverFilesThatAreNotDamaged(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dir := t.TempDir()
	sound := filepath.Join(dir, "sound.parquet")
	if _, err := db.Exec("COPY (SELECT 1 AS x) TO " + sqlString(sound) + " (FORMAT parquet)"); err != nil {
		t.Fatal(err)
	}
	cause := &duckdb.Error{Type: duckdb.ErrorTypeInvalidInput, Msg: "Invalid Input Error: Invalid string encoding found in Parquet file"}
	got := blameDamaged(context.Background(), db, []string{filepath.Join(dir, "gone.parquet"), sound}, cause)
	if isDamagedFile(got) || !errors.Is(got, cause) {
		t.Errorf("blameDamaged = %v, want the cause itself, no file blamed", got)
	}
}
