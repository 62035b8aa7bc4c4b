package duck

import (
	"embed"
	"fmt"
)

// Every relation of the fold and of the query surface lives in sql/*.sql,
// one file per relation (or per step of the fold), each starting with a
// comment that says what it means. What Go builds inline is plumbing around
// them: views over exactly the files a step folds (and the windowed fold's
// buckets read back), a few counts and probes that steer the step (the span
// of days, the late-check guard, how many checks go where), writing
// results, checking footers, and two small pieces of relation that are
// easier read beside their Go: the empty transitions and live events
// relations (derived_views.go) and the merge of live events files (writeEvents).
//
//go:embed sql/*.sql
var sqlFiles embed.FS

//go:embed sql/schema.sql
var schemaSQL string

// sqlFile returns one embedded file. The set is fixed at compile time, so a
// missing name is a programming error caught by every test that runs it.
func sqlFile(name string) string {
	b, err := sqlFiles.ReadFile("sql/" + name)
	if err != nil {
		panic(fmt.Sprintf("embedded sql/%s: %v", name, err))
	}
	return string(b)
}
