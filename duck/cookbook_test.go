package duck_test

import (
	"context"
	"math/rand/v2"
	"os"
	"regexp"
	"testing"

	"github.com/fediverse-observer/observer/config"
)

// TestCookbookQueriesRun runs every ```sql block of docs/data.md against a
// small generated data set, so the documented queries keep working.
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
	history := randomHistory(rand.New(rand.NewPCG(7, 7)), 100, 10)
	for d, evs := range history {
		write(t, s, "d"+string(rune('a'+d)), evs)
	}
	write(t, s, "lists", listHistory())
	derive(t, s, config.State{}, false)
	views(t, s, t0.Add(40*day))
	if err := s.LockDown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		q := string(b[1])
		rows, err := s.Query(context.Background(), q)
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
