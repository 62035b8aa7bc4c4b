package hostname_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/hostname"

	"github.com/fediverse-observer/observer"
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
		if got := b.Blocked(observer.Host(host)); got != want {
			t.Errorf("Blocked(%q) = %v, want %v", host, got, want)
		}
	}
	// Match names the entry, for messages.
	for host, want := range map[string]string{
		"asked.example.social": "asked.example.social", "a.b.spam-farm.online": "*.spam-farm.online", "example.social": "",
	} {
		if got := b.Match(observer.Host(host)); got != want {
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
	for host, want := range map[string]bool{
		"spam1.duckdns.org": true, "a.b.github.io": true, "free-spam.tk": true,
		"duckdns.org.example.com": false, "github.com": false,
	} {
		if got := b.Blocked(observer.Host(host)); got != want {
			t.Errorf("Blocked(%q) = %v, want %v", host, got, want)
		}
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
