package hostname_test

import (
	"testing"

	"github.com/fediverse-observer/observer/hostname"

	"github.com/fediverse-observer/observer"
)

// FuzzFastPath checks that the ASCII fast path accepts exactly what the IDNA
// path accepts, with the same result.
func FuzzFastPath(f *testing.F) {
	for _, s := range []string{"mastodon.social", "MASTODON.social.", "a-b.c-d.co.uk", "ab--c.social", "1.2.3.4", "x.123", "-a.social"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := hostname.FastASCII(s)
		if !ok {
			return
		}
		slow, err := hostname.NormalizeSlow(s)
		full, ferr := hostname.Normalize(s)
		if (err == nil) != (ferr == nil) || observer.Host(slow) != full {
			t.Fatalf("%q: fast path gives %q/%v, slow path %q/%v", s, full, ferr, slow, err)
		}
		if err == nil && slow != fast {
			t.Fatalf("%q: fast %q, slow %q", s, fast, slow)
		}
	})
}
