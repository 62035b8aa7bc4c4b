package crawl

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// The system's root certificates, read once for many processes: parsing
// them is most of what building a crawler costs, and each sandboxed
// checker builds one. The orchestrator reads the files (SystemRootsDER),
// without parsing a certificate, and hands every checker the
// certificates' DER, each once; RootPool parses them there, as
// crypto/x509 would have, without crypto/x509's reading of the certificate
// directory (every file parsed a second time, since the bundle holds them
// all). The orchestrator, which makes no TLS connection, parses none.

// The places crypto/x509 reads the system roots from on Linux (its
// root_linux.go, read as its root_unix.go does): the first of the files
// that exists, and every file of the directories, unless SSL_CERT_FILE and
// SSL_CERT_DIR name others. TestSystemRootsDERIsTheSystemPool holds the
// result equal to x509.SystemCertPool.
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
// RootPool reads them back: each certificate's length (a uvarint), then its
// DER. It parses none of them; RootPool drops those crypto/x509 cannot
// parse, as crypto/x509 does when it loads them. Elsewhere than on Linux,
// where crypto/x509 loads the roots otherwise, and when no file could be
// read, it is an error.
func SystemRootsDER() ([]byte, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("system roots: read from files only on Linux, not on %s", runtime.GOOS)
	}
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
	if len(pems) == 0 {
		return nil, errors.New("system roots: no certificate file could be read")
	}
	seen := map[[sha256.Size]byte]bool{}
	var out []byte
	for _, rest := range pems {
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			// What crypto/x509's AppendCertsFromPEM skips.
			if block.Type != "CERTIFICATE" || len(block.Headers) != 0 {
				continue
			}
			sum := sha256.Sum256(block.Bytes)
			if seen[sum] {
				continue
			}
			seen[sum] = true
			out = binary.AppendUvarint(out, uint64(len(block.Bytes)))
			out = append(out, block.Bytes...)
		}
	}
	return out, nil
}

// RootPool parses SystemRootsDER's certificates into a pool, for
// Options.RootCAs, leaving out those crypto/x509 cannot parse, as it does
// when it loads the system's. Malformed framing is an error.
func RootPool(roots []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	for len(roots) > 0 {
		n, size := binary.Uvarint(roots)
		if size <= 0 || n > uint64(len(roots)-size) {
			return nil, errors.New("root certificates: malformed length")
		}
		der := roots[size : size+int(n)]
		roots = roots[size+int(n):]
		if cert, err := x509.ParseCertificate(der); err == nil {
			pool.AddCert(cert)
		}
	}
	return pool, nil
}
