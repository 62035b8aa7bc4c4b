package duck_test

import (
	"context"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/config"
)

type docQuery struct {
	text string
	args []any
}

// TestCookbookQueriesRun runs every ```sql block of docs/data.md, and every
// template sql call of docs/theming.md, against a small generated data set,
// so the documented queries keep working.
func TestCookbookQueriesRun(t *testing.T) {
	doc, err := os.ReadFile("../docs/data.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) < 12 {
		t.Fatalf("docs/data.md has %d sql blocks, want a dozen", len(blocks))
	}
	s := openStore(t, t.TempDir())
	history := randomHistory(rand.New(rand.NewPCG(7, 7)), 100, 10, 3)
	for d, evs := range history {
		write(t, s, "d"+string(rune('a'+d)), evs)
	}
	write(t, s, "lists", listHistory())
	derive(t, s, config.State{}, false)
	views(t, s, t0.Add(40*day))
	if err := s.Reader.LockDown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var queries []docQuery
	for _, b := range blocks {
		queries = append(queries, docQuery{text: string(b[1])})
	}
	// The templates' sql calls in docs/theming.md, with their arguments.
	theming, err := os.ReadFile("../docs/theming.md")
	if err != nil {
		t.Fatal(err)
	}
	calls := regexp.MustCompile(`sql "((?i:select|with|from) [^"]+)"((?: [0-9]+)*)`).FindAllSubmatch(theming, -1)
	if len(calls) < 2 {
		t.Fatalf("docs/theming.md has %d sql calls, want the example's and the worked example's", len(calls))
	}
	for _, c := range calls {
		q := docQuery{text: string(c[1])}
		for _, a := range strings.Fields(string(c[2])) {
			n, _ := strconv.Atoi(a)
			q.args = append(q.args, n)
		}
		queries = append(queries, q)
	}
	for _, qa := range queries {
		q := qa.text
		rows, err := s.Reader.Query(context.Background(), q, qa.args...)
		if err != nil {
			t.Errorf("%s\n: %v", q, err)
			continue
		}
		for rows.Next() {
			if _, err := rows.Values(); err != nil {
				t.Errorf("%s\n: %v", q, err)
				break
			}
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%s\n: %v", q, err)
		}
		rows.Close()
	}
}
