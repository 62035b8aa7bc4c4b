package sandbox_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/sandbox"
)

// Every checker of a pool with Roots reads the same bytes from its
// inherited pipe, told to by RootsArgs, with --connect-to rules beside
// them or without, whether Roots is still reading them when it starts or
// not; when Roots failed, it reads none (and would load its own).
func TestCheckersReadTheRootsTheirPoolWasGiven(t *testing.T) {
	der := []byte("not parsed by the pool: any bytes \x00\xff reach the checker as given")
	given := fmt.Sprintf("%d bytes, sha256 %x", len(der), sha256.Sum256(der))
	for _, tc := range []struct {
		rules []string
		slow  bool // still reading when the first checker asks
		err   error
		want  string
	}{
		{nil, false, nil, given},
		{[]string{"*:443:127.0.0.1:8443"}, false, nil, given},
		{nil, true, nil, given},
		{nil, false, errors.New("not the roots crypto/x509 loads"), ""},
	} {
		p, _ := newPool(t, false, func(o *sandbox.PoolOptions) {
			o.Roots = func() ([]byte, error) {
				if tc.slow {
					// Not a timing assertion: the checker gets the
					// same bytes however long they take.
					time.Sleep(200 * time.Millisecond)
				}
				return der, tc.err
			}
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
