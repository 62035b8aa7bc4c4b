package sandbox

import (
	"io"
	"strings"
	"testing"
)

// The rules file holds the rules one a line, cannot be changed by a
// checker, and refuses a rule that would read as two.
func TestRulesFile(t *testing.T) {
	rules := []string{"a.social:443:127.0.0.1:8443", "*:443:127.0.0.2:8443"}
	f, err := rulesFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<20))
	if err != nil || string(b) != strings.Join(rules, "\n") {
		t.Fatalf("file holds %q, %v", b, err)
	}
	if _, err := f.WriteAt([]byte("x"), 0); err == nil {
		t.Error("the rules file could be written")
	}
	if _, err := rulesFile([]string{"a.social:443:127.0.0.1:1\n*:443:10.0.0.1:1"}); err == nil || !strings.Contains(err.Error(), "line break") {
		t.Errorf("a rule with a line break: %v", err)
	}
}
