package crawl

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The system's root certificates, read once for many processes: parsing
// them is most of what building a crawler costs, and each sandboxed
// checker builds one. The orchestrator reads them (SystemRootsDER) and
// hands every checker the certificates' DER, which RootPool parses
// without crypto/x509's reading of the certificate directory (every file
// parsed a second time, since the bundle holds them all).

// The places crypto/x509 reads the system roots from on Linux (its
// root_linux.go): the first of the files that exists, and every file of
// the directories. SystemRootsDER compares what it read here with
// x509.SystemCertPool, so a difference is an error, never other roots.
var (
	rootFiles = []string{
		"/etc/ssl/certs/ca-certificates.crt",
		"/etc/pki/tls/certs/ca-bundle.crt",
		"/etc/ssl/ca-bundle.pem",
		"/etc/pki/tls/cacert.pem",
		"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
		"/etc/ssl/cert.pem",
	}
	rootDirs = []string{"/etc/ssl/certs", "/etc/pki/tls/certs"}
)

// SystemRootsDER returns the system's root certificates, each once, as
// concatenated DER (RootPool reads it back). It is an error when the
// certificates it read are not exactly those of x509.SystemCertPool, as on
// a system whose roots come from elsewhere.
func SystemRootsDER() ([]byte, error) {
	// crypto/x509's loading, which parses every certificate it reads, goes
	// on beside this one's.
	type loaded struct {
		pool *x509.CertPool
		err  error
	}
	sysc := make(chan loaded, 1)
	go func() {
		pool, err := x509.SystemCertPool()
		sysc <- loaded{pool, err}
	}()
	files, dirs := rootFiles, rootDirs
	if f := os.Getenv("SSL_CERT_FILE"); f != "" {
		files = []string{f}
	}
	if d := os.Getenv("SSL_CERT_DIR"); d != "" {
		dirs = strings.Split(d, ":")
	}
	var pems [][]byte
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			pems = append(pems, b)
			break
		}
	}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			// A link to a file beside it (OpenSSL's hash names) is a
			// certificate read under its own name.
			if e.Type()&os.ModeSymlink != 0 {
				if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && !strings.Contains(target, "/") {
					continue
				}
			}
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				pems = append(pems, b)
			}
		}
	}
	pool := x509.NewCertPool()
	seen := map[[sha256.Size]byte]bool{}
	var der []byte
	for _, rest := range pems {
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			if block.Type != "CERTIFICATE" || len(block.Headers) != 0 {
				continue
			}
			sum := sha256.Sum256(block.Bytes)
			if seen[sum] {
				continue
			}
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				continue
			}
			seen[sum] = true
			pool.AddCert(cert)
			der = append(der, block.Bytes...)
		}
	}
	sys := <-sysc
	if sys.err != nil {
		return nil, fmt.Errorf("system roots: %w", sys.err)
	}
	if !pool.Equal(sys.pool) {
		return nil, errors.New("system roots: the certificates read are not those crypto/x509 loads")
	}
	return der, nil
}

// RootPool parses concatenated DER certificates (SystemRootsDER's) into a
// pool, for Options.RootCAs.
func RootPool(der []byte) (*x509.CertPool, error) {
	certs, err := x509.ParseCertificates(der)
	if err != nil {
		return nil, fmt.Errorf("root certificates: %w", err)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}
