package duck

import (
	"embed"
	"fmt"
)

// Every relation the program derives or defines lives in sql/*.sql, one
// file per relation, each starting with a comment that says what it means.
// What Go builds inline is plumbing around them: reading the listed files,
// writing results, counting, checking footers.
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
