package sandbox_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"

	"github.com/fediverse-observer/observer/sandbox"
)

// Every checker of a pool with Roots reads the same bytes from its
// inherited file, told to by RootsArgs, with --connect-to rules beside
// them or without; without them, because Roots failed, it is not told to.
func TestCheckersReadTheRootsTheirPoolWasGiven(t *testing.T) {
	der := []byte("not parsed by the pool: any bytes \x00\xff reach the checker as given")
	given := fmt.Sprintf("%d bytes, sha256 %x", len(der), sha256.Sum256(der))
	for _, tc := range []struct {
		rules []string
		err   error
		want  string
	}{
		{nil, nil, given},
		{[]string{"*:443:127.0.0.1:8443"}, nil, given},
		{nil, errors.New("not the roots crypto/x509 loads"), ""},
	} {
		p, _ := newPool(t, false, func(o *sandbox.PoolOptions) {
			o.Roots = func() ([]byte, error) { return der, tc.err }
			o.RootsArgs = []string{"-roots-inherited"}
			o.ConnectTo = tc.rules
			o.ChecksPerProcess = 1 // every check in a fresh checker
		})
		for range 2 {
			if got := check(t, p, "roots.social").Check.Error; got != tc.want {
				t.Errorf("with %d rules and Roots' error %v, a checker read %q, want %q", len(tc.rules), tc.err, got, tc.want)
			}
		}
		p.Close()
	}
}
