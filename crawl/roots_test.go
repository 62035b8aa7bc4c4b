package crawl_test

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/crawl/internal/testnet"
)

// rootsChildEnv names, to the test binary re-run by
// TestSystemRootsDERIsTheSystemPool in a fresh process (whose crypto/x509
// loads the system roots from the environment it was given), a leaf
// certificate the roots it was given must trust.
const rootsChildEnv = "CRAWL_TEST_ROOTS_CHILD"

// The roots an orchestrator hands its checkers are the system's, exactly:
// those crypto/x509 loads, from this system's files and from a file and a
// directory named by the environment that hold what crypto/x509 leaves out
// (a block that is no certificate, one with headers, one that does not
// parse, a duplicate, a link to a file beside it).
func TestSystemRootsDERIsTheSystemPool(t *testing.T) {
	if leafFile := os.Getenv(rootsChildEnv); leafFile != "" {
		b, err := os.ReadFile(leafFile)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(b)
		if err != nil {
			t.Fatal(err)
		}
		sameAsSystemPool(t, leaf)
		return
	}
	sameAsSystemPool(t, nil)

	ca := testnet.TestCA(t)
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs")
	if err := os.Mkdir(certs, 0o755); err != nil {
		t.Fatal(err)
	}
	caDER, _ := pem.Decode(ca.PEM)
	bundle := append([]byte(nil), ca.PEM...)
	bundle = append(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("\x30\x03\x02\x01\x01")})...)
	bundle = append(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED"}, Bytes: caDER.Bytes})...)
	bundle = append(bundle, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("not a key")})...)
	for name, body := range map[string][]byte{
		filepath.Join(dir, "bundle.pem"): bundle,
		filepath.Join(certs, "ca.pem"):   ca.PEM,
		filepath.Join(certs, "README"):   []byte("no certificate here\n"),
		filepath.Join(dir, "leaf.der"):   ca.Leaf.Certificate[0],
	} {
		if err := os.WriteFile(name, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("ca.pem", filepath.Join(certs, "0a1b2c3d.0")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSystemRootsDERIsTheSystemPool$")
	cmd.Env = append(os.Environ(), rootsChildEnv+"="+filepath.Join(dir, "leaf.der"), "SSL_CERT_FILE="+filepath.Join(dir, "bundle.pem"), "SSL_CERT_DIR="+certs)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("with the roots named by the environment: %v\n%s", err, out)
	}
}

// sameAsSystemPool fails t unless the pool read back from SystemRootsDER
// is crypto/x509's system pool, and, when leaf is given, unless the pool
// trusts it.
func sameAsSystemPool(t *testing.T, leaf *x509.Certificate) {
	t.Helper()
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
		t.Errorf("the pool read back from %d bytes is not the system pool", len(der))
	}
	if leaf != nil {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "roots.social"}); err != nil {
			t.Errorf("the roots read back do not include the environment's CA: %v", err)
		}
	}
}
