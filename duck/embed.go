package duck

import (
	"embed"
	"fmt"
	"regexp"
	"strings"
)

// Every relation of the fold and of the query surface lives in sql/, one
// file per relation (or per step of the fold), each starting with a comment
// that says what it means, in a folder per stage:
//
//   - snapshots/: the snapshots' schema;
//   - derivation/: the fold, its steps run in the order of
//     derivation/order.txt (derivationOrder);
//   - views/: the views over the derived state that queries read;
//   - queries/: the questions the crawler and the site ask of them.
//
// What Go builds inline is plumbing around them: views over exactly the
// files a step folds (and the windowed fold's buckets read back), a few
// counts and probes that steer the step (the span of days, the late-check
// guard, how many checks go where), writing results, checking footers, and
// two small pieces of relation that are easier read beside their Go: the
// empty transitions and live events relations (derived_views.go) and the
// merge of live events files (writeEvents).
//
//go:embed sql
var sqlFiles embed.FS

//go:embed sql/snapshots/schema.sql
var schemaSQL string

// derivationOrder is the order the derivation's steps first run in, from
// sql/derivation/order.txt: docs/data.md describes them in it, and the
// derivation checks each step it runs against it (derivation.step).
var derivationOrder = func() []string {
	var steps []string
	for _, line := range strings.Split(sqlFile("derivation/order.txt"), "\n") {
		if name, _, _ := strings.Cut(line, "#"); strings.TrimSpace(name) != "" {
			steps = append(steps, strings.TrimSpace(name))
		}
	}
	return steps
}()

// sqlFile returns one embedded file. The set is fixed at compile time, so a
// missing name is a programming error caught by every test that runs it.
func sqlFile(name string) string {
	b, err := sqlFiles.ReadFile("sql/" + name)
	if err != nil {
		panic(fmt.Sprintf("embedded sql/%s: %v", name, err))
	}
	return string(b)
}

// sqlParams are the values of an SQL file's {{name}} placeholders.
type sqlParams map[string]string

var placeholder = regexp.MustCompile(`\{\{[a-z_]+\}\}`)

// renderSQL returns the embedded file name with each {{key}} replaced by
// its value in params. A placeholder without a value, or a "{{" that is no
// placeholder, is an error naming it: the SQL would run with a hole in it.
// Values are not searched for placeholders in turn.
func renderSQL(name string, params sqlParams) (string, error) {
	text := sqlFile(name)
	var missing []string
	out := placeholder.ReplaceAllStringFunc(text, func(p string) string {
		v, ok := params[p[2:len(p)-2]]
		if !ok {
			missing = append(missing, p)
		}
		return v
	})
	if missing != nil {
		return "", fmt.Errorf("sql/%s: no value for %s", name, strings.Join(missing, ", "))
	}
	if rest := placeholder.ReplaceAllString(text, ""); strings.Contains(rest, "{{") || strings.Contains(rest, "}}") {
		return "", fmt.Errorf("sql/%s: a {{ or }} that is not a {{name}} placeholder", name)
	}
	return out, nil
}
