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
	// As the seed list says it: the entry, then what is wrong with it.
	if got, want := errs[1].Error(), `line 6: "10.0.0.1": is an IP address, not a host name`; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	// What the entries block is matched in SQL: duck's
	// TestBlocklistMatching.
	got := b.Entries()
	slices.Sort(got)
	if want := []string{"*.spam-farm.online", "asked.example.social"}; !slices.Equal(got, want) {
		t.Fatalf("Entries = %v, want %v", got, want)
	}
	var none *hostname.Blocklist
	if none.Entries() != nil || none.Len() != 0 {
		t.Fatal("a nil blocklist must have no entries")
	}
}

// TestBlocklistPublicSuffixDomain: a "*.domain" entry may name a public
// suffix, where a spam farm gets its free subdomains (duckdns.org and
// github.io are in the Public Suffix List's private section, and the domain
// budget counts each as one domain); it used to be refused as "a public
// suffix, not a host", which stopped every pass. An exact entry still must
// be a host, and a wildcard's hosts must still be valid names.
func TestBlocklistPublicSuffixDomain(t *testing.T) {
	b, errs := hostname.ReadBlocklist(strings.NewReader("*.duckdns.org\n*.GitHub.io.\n*.tk\n"))
	if len(errs) != 0 {
		t.Fatalf("errors = %v, want none", errs)
	}
	got := b.Entries()
	slices.Sort(got)
	if want := []string{"*.duckdns.org", "*.github.io", "*.tk"}; !slices.Equal(got, want) {
		t.Fatalf("Entries = %v, want %v", got, want)
	}
	for _, line := range []string{"duckdns.org", "*.invalidtld", "*.", "*.*.duckdns.org", "*.a b.org"} {
		if _, errs := hostname.ReadBlocklist(strings.NewReader(line + "\n")); len(errs) != 1 {
			t.Errorf("%q: errors %v, want one", line, errs)
		}
	}
}
