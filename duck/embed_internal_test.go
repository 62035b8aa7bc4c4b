package duck

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// TestDerivationOrderListsEveryStep: order.txt names each file of
// sql/derivation once, but for state_empty.sql (the carry of a full
// derivation, an input rather than a step).
func TestDerivationOrderListsEveryStep(t *testing.T) {
	entries, err := fs.ReadDir(sqlFiles, "sql/derivation")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".sql"); ok && name != "state_empty" {
			files = append(files, name)
		}
	}
	listed := slices.Sorted(slices.Values(derivationOrder))
	if !slices.Equal(files, listed) {
		t.Errorf("sql/derivation holds %v, order.txt lists %v", files, derivationOrder)
	}
}

// TestDerivationRefusesAStepOutOfOrder: a step listed before one that has
// run is refused, unless it ran already (the windowed fold's buckets).
func TestDerivationRefusesAStepOutOfOrder(t *testing.T) {
	d := &derivation{params: sqlParams{}, reached: -1, ran: map[string]bool{}}
	if _, err := d.sql("fold_bucket", sqlParams{"input": "x", "buckets": "2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.sql("fold_split", nil); err == nil || !strings.Contains(err.Error(), "runs after fold_bucket") {
		t.Errorf("fold_split after fold_bucket: %v", err)
	}
	if _, err := d.sql("fold_bucket", sqlParams{"input": "x", "buckets": "2"}); err != nil {
		t.Errorf("fold_bucket again: %v", err)
	}
	if _, err := d.sql("no_such_step", nil); err == nil {
		t.Error("a step not in order.txt ran")
	}
}

// TestRenderSQLFailsOnAPlaceholderLeft: every placeholder needs its value,
// and a value holding "{{" is not taken for one.
func TestRenderSQLFailsOnAPlaceholderLeft(t *testing.T) {
	_, err := renderSQL("derivation/fold_bucket.sql", sqlParams{"input": "x"})
	if err == nil || !strings.Contains(err.Error(), "{{buckets}}") {
		t.Errorf("missing buckets: %v", err)
	}
	out, err := renderSQL("derivation/fold_bucket.sql", sqlParams{"input": "'{{buckets}}'", "buckets": "3"})
	if err != nil || !strings.Contains(out, "'{{buckets}}'") || strings.Contains(out, "{{input}}") {
		t.Errorf("rendered %q, %v", out, err)
	}
}
