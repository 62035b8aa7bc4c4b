package duck

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"testing"
	"time"
)

// The span of a full derivation's checks, read from the files' footers
// (fold_checks is left empty, so reading it would give another span), is the
// one their times give across files and row groups, as a scan of
// fold_checks gives it in an incremental step.
func TestChecksSpanFromFooters(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dir := t.TempDir()
	write := func(name, times, options string) string {
		path := filepath.ToSlash(filepath.Join(dir, name))
		if _, err := conn.ExecContext(ctx, "COPY (SELECT unnest("+times+"::TIMESTAMP[]) AS checked_at) TO "+sqlString(path)+
			" (FORMAT parquet, ROW_GROUP_SIZE 2048, "+options+")"); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// Over two row groups of its file, the first check at 23:59 on the 2nd.
	early := write("early.parquet", "[TIMESTAMP '2026-01-03 00:00:00'] || list_transform(range(3000), i -> TIMESTAMP '2026-01-02 23:59:00' + INTERVAL (i) SECOND)", "PARQUET_VERSION V2")
	late := write("late.parquet", "['2026-01-09 00:00:01', '2026-01-05 12:00:00']", "PARQUET_VERSION V2")
	files := []string{early, late}
	for _, c := range []struct {
		name, foldChecks string
		all              bool
	}{
		{"footers", "SELECT NULL::TIMESTAMP AS checked_at WHERE false", true},
		{"scanned", "SELECT * FROM read_parquet(" + sqlList(files) + ")", false},
	} {
		if _, err := conn.ExecContext(ctx, "CREATE OR REPLACE TEMP VIEW fold_checks AS "+c.foldChecks); err != nil {
			t.Fatal(err)
		}
		d := &derivation{ctx: ctx, conn: conn, log: slog.New(slog.DiscardHandler), checkFiles: files, foldsEveryCheck: c.all}
		first, days, err := checksSpan(d)
		if err != nil {
			t.Fatal(err)
		}
		if want := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC).UnixMicro(); first != want || days != 8 {
			t.Errorf("%s: span from %d over %d days, want from %d over 8", c.name, first, days, want)
		}
	}
}
