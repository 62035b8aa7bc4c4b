package crawl_test

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/crawl/internal/testnet"
)

// The roots an orchestrator hands its checkers are the system's, exactly.
func TestSystemRootsDERIsTheSystemPool(t *testing.T) {
	der, err := crawl.SystemRootsDER()
	if err != nil {
		t.Fatal(err)
	}
	pool, err := crawl.RootPool(der)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := x509.SystemCertPool()
	if err != nil {
		t.Fatal(err)
	}
	if !pool.Equal(sys) {
		t.Errorf("the pool read back from %d bytes of DER is not the system pool", len(der))
	}
}

// Roots read otherwise than crypto/x509 loaded them (here, the environment
// names another file once the system pool is loaded) are an error, never
// handed on.
func TestSystemRootsDERRefusesOtherRoots(t *testing.T) {
	if _, err := x509.SystemCertPool(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, testnet.TestCA(t).PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", file)
	t.Setenv("SSL_CERT_DIR", t.TempDir())
	if der, err := crawl.SystemRootsDER(); err == nil {
		t.Errorf("got %d bytes of roots from a file crypto/x509 did not load", len(der))
	}
}
