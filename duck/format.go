package duck

import (
	"context"
	"io"

	"github.com/fediverse-observer/observer/duck/internal/resultfmt"
)

// Formats lists what WriteQuery can write.
var Formats = resultfmt.Formats

// WriteQuery runs one read-only query (see Query) and writes its result to w
// as format: table (aligned columns for a terminal), csv (with a header),
// json (an array of objects) or markdown (a pipe table). A failing query
// returns DuckDB's message. Values print as DuckDB's own CLI prints them,
// each according to its column's DuckDB type (package resultfmt).
func (s *Store) WriteQuery(ctx context.Context, w io.Writer, query, format string) error {
	f, err := resultfmt.New(format)
	if err != nil {
		return err
	}
	rows, err := s.Query(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	cts, err := rows.rows.ColumnTypes()
	if err != nil {
		return err
	}
	typeNames := make([]string, len(cts))
	for i, ct := range cts {
		typeNames[i] = ct.DatabaseTypeName()
	}
	return f.Write(w, rows, rows.Columns, typeNames)
}
