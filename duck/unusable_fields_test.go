package duck_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
)

// TestUnusableFieldsAreAListOperatorsCanQuery: the NodeInfo fields a check
// could not use are a list per check (empty when a document was read and
// all were usable, NULL when none was read), and the document's own version
// is kept beside the schema its link named; the files pass the footer
// checks a derivation makes.
func TestUnusableFieldsAreAListOperatorsCanQuery(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	w, err := s.Snapshots.NewWriter("p0", duck.WriterOptions{FlushChecks: 1 << 30, FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	checks := []observer.Check{
		{Host: "akkoma.example", Software: "akkoma", NodeInfoVersion: "2.1", NodeInfoDocumentVersion: "2.0",
			UnusableFields: []string{"openRegistrations"}},
		{Host: "pixelfed.example", Software: "pixelfed", NodeInfoVersion: "2.0", NodeInfoDocumentVersion: "2.0",
			UnusableFields: []string{"usage.users.total", "usage.localPosts"}},
		{Host: "mastodon.example", Software: "mastodon", NodeInfoVersion: "2.0", NodeInfoDocumentVersion: "2.0"},
	}
	for _, c := range checks {
		c.CheckedAt, c.Outcome, c.PassID = t0, observer.OutcomeAlive, "p0"
		if err := w.Record(ctx, observer.Result{Check: c}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Record(ctx, observer.Result{Check: observer.Check{Host: "down.example", CheckedAt: t0, Outcome: observer.OutcomeUnreachable, PassID: "p0"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if rep := derive(t, s, config.State{}, true); rep.Hosts != 4 {
		t.Fatalf("derive = %+v", rep)
	}
	views(t, s, t0.Add(day))
	got := texts(t, s, `SELECT host || ' ' || coalesce(nodeinfo_version, '-') || '/' || coalesce(nodeinfo_document_version, '-') || ' ' ||
		CASE WHEN unusable_fields IS NULL THEN 'NULL' ELSE '[' || coalesce(array_to_string(unusable_fields, ','), '') || ']' END FROM checks ORDER BY host`)
	want := []string{
		"akkoma.example 2.1/2.0 [openRegistrations]",
		"down.example -/- NULL",
		"mastodon.example 2.0/2.0 []",
		"pixelfed.example 2.0/2.0 [usage.users.total,usage.localPosts]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("checks:\n%q\nwant\n%q", got, want)
	}
	// The question the column is for: which software sends what.
	got = texts(t, s, `SELECT software || ' ' || field FROM (SELECT software, unnest(unusable_fields) AS field FROM checks) ORDER BY 1`)
	if want := []string{"akkoma openRegistrations", "pixelfed usage.localPosts", "pixelfed usage.users.total"}; !slices.Equal(got, want) {
		t.Errorf("by software: %q, want %q", got, want)
	}
}
