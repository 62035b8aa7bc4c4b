// Package testsupport holds the helpers the tests of more than one package
// need: a buffer a running command writes while the test reads it, reading
// a file a test expects, a simulated fediverse started on loopback with
// its CA certificate written out, a query's rows read from a data
// directory, and the crawler answered by one in this process
// (ModelChecker). Only tests and benchmarks import it.
package testsupport

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/fedisim"
)

// SyncBuffer is a bytes.Buffer safe for a writer and a reader at once: a
// running command (or a logger) writes it while the test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ReadFile is the text of the file at path; a file that cannot be read
// ends the test.
func ReadFile(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// StartSim starts a simulator on loopback and closes it when the test
// ends.
func StartSim(tb testing.TB, cfg fedisim.Config) *fedisim.Sim {
	tb.Helper()
	s, err := fedisim.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// SimCA writes sim's CA certificate to dir/ca.pem, for the crawl's
// --ca-file, and returns its path.
func SimCA(tb testing.TB, sim *fedisim.Sim, dir string) string {
	tb.Helper()
	ca := filepath.Join(dir, "ca.pem")
	if err := sim.WriteCA(ca); err != nil {
		tb.Fatal(err)
	}
	return ca
}

// Rows runs a read-only query and returns its rows, each a row's values in
// column order; a query that fails ends the test.
func Rows(tb testing.TB, r *duck.Reader, query string, args ...any) [][]any {
	tb.Helper()
	rows, err := r.Query(context.Background(), query, args...)
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			tb.Fatalf("%s: %v", query, err)
		}
		out = append(out, slices.Clone(v))
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return out
}
