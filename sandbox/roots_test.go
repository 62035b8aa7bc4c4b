package sandbox_test

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/fediverse-observer/observer/sandbox"
)

// Every checker of a pool with Roots reads the same bytes from its
// inherited file, with --connect-to rules beside them or without.
func TestCheckersReadTheRootsTheirPoolWasGiven(t *testing.T) {
	der := []byte("not parsed by the pool: any bytes \x00\xff reach the checker as given")
	want := fmt.Sprintf("%d bytes, sha256 %x", len(der), sha256.Sum256(der))
	for _, rules := range [][]string{nil, {"*:443:127.0.0.1:8443"}} {
		p, _ := newPool(t, false, func(o *sandbox.PoolOptions) {
			o.Roots = der
			o.ConnectTo = rules
			o.ChecksPerProcess = 1 // every check in a fresh checker
			o.Env = append(o.Env, envRoots+"=1")
		})
		for range 2 {
			if got := check(t, p, "roots.social").Check.Error; got != want {
				t.Errorf("with %d rules, a checker read %q, want %q", len(rules), got, want)
			}
		}
		p.Close()
	}
}
