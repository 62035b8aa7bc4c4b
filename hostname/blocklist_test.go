package hostname_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/hostname"
)

func TestBlocklist(t *testing.T) {
	b, errs := hostname.ReadBlocklist(strings.NewReader(`
# an admin asked to be removed
Asked.Example.Social.
*.spam-farm.online   # every host below it
*.not a domain
10.0.0.1
`))
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "line 5") || !strings.Contains(errs[1].Error(), "line 6") {
		t.Fatalf("errors = %v, want lines 5 and 6", errs)
	}
	for host, want := range map[string]bool{
		"asked.example.social":     true,
		"other.example.social":     false,
		"example.social":           false,
		"spam-farm.online":         true,
		"node1.spam-farm.online":   true,
		"a.b.spam-farm.online":     true,
		"notspam-farm.online":      false,
		"spam-farm.online.evil.de": false,
	} {
		if got := b.Blocked(host); got != want {
			t.Errorf("Blocked(%q) = %v, want %v", host, got, want)
		}
	}
	// Match names the entry, for messages.
	for host, want := range map[string]string{
		"asked.example.social": "asked.example.social", "a.b.spam-farm.online": "*.spam-farm.online", "example.social": "",
	} {
		if got := b.Match(host); got != want {
			t.Errorf("Match(%q) = %q, want %q", host, got, want)
		}
	}
	got := b.Entries()
	slices.Sort(got)
	if want := []string{"*.spam-farm.online", "asked.example.social"}; !slices.Equal(got, want) {
		t.Fatalf("Entries = %v, want %v", got, want)
	}
	var none *hostname.Blocklist
	if none.Blocked("x.social") || none.Len() != 0 {
		t.Fatal("a nil blocklist must block nothing")
	}
}
