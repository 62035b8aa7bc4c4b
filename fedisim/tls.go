package fedisim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"
)

// certAuthority mints leaf certificates on demand: with a million host
// names they cannot be made up front. All leaves share one key, so minting
// is a single ECDSA signature.
type certAuthority struct {
	caCert  *x509.Certificate
	caKey   *ecdsa.PrivateKey
	caPEM   []byte
	leafKey *ecdsa.PrivateKey

	mu     sync.Mutex
	serial int64
	cache  map[string]*tls.Certificate
	order  []string // FIFO ring of cached names
	next   int
	limit  int
	rogue  *ecdsa.PrivateKey // signs the self-signed hostile certificate
	rogueM sync.Once
}

func newCertAuthority(limit int) (*certAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "fedisim test CA", Organization: []string{"fedisim"}},
		NotBefore:             now.Add(-24 * time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate leaf key: %w", err)
	}
	return &certAuthority{
		caCert:  cert,
		caKey:   key,
		caPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		leafKey: leafKey,
		serial:  1,
		cache:   make(map[string]*tls.Certificate, limit),
		order:   make([]string, limit),
		limit:   limit,
	}, nil
}

// Kinds of leaf certificate.
const (
	certGood = iota
	certExpired
	certWrongName
	certSelfSigned
)

// leaf returns the (cached) certificate for name.
func (ca *certAuthority) leaf(name string, kind int) (*tls.Certificate, error) {
	key := name
	if kind != certGood {
		key = fmt.Sprintf("%s#%d", name, kind)
	}
	ca.mu.Lock()
	if c, ok := ca.cache[key]; ok {
		ca.mu.Unlock()
		return c, nil
	}
	ca.serial++
	serial := ca.serial
	ca.mu.Unlock()

	c, err := ca.mint(name, kind, serial)
	if err != nil {
		return nil, err
	}
	ca.mu.Lock()
	defer ca.mu.Unlock()
	if old, ok := ca.cache[key]; ok {
		return old, nil // minted concurrently
	}
	if evict := ca.order[ca.next]; evict != "" {
		delete(ca.cache, evict)
	}
	ca.order[ca.next] = key
	ca.next = (ca.next + 1) % ca.limit
	ca.cache[key] = c
	return c, nil
}

func (ca *certAuthority) mint(name string, kind int, serial int64) (*tls.Certificate, error) {
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    now.Add(-24 * time.Hour),
		NotAfter:     now.Add(90 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	parent, signer := ca.caCert, ca.caKey
	switch kind {
	case certExpired:
		tmpl.NotBefore = now.Add(-60 * 24 * time.Hour)
		tmpl.NotAfter = now.Add(-30 * 24 * time.Hour)
	case certWrongName:
		tmpl.Subject.CommonName = "some-other-name.social"
		tmpl.DNSNames = []string{"some-other-name.social"}
	case certSelfSigned:
		ca.rogueM.Do(func() {
			ca.rogue, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		})
		if ca.rogue == nil {
			return nil, errors.New("generate self-signed key")
		}
		tmpl.Subject.Organization = []string{"not the fedisim CA"}
		parent = tmpl
		signer = ca.rogue
		tmpl.IsCA = true
		tmpl.BasicConstraintsValid = true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	pub := &ca.leafKey.PublicKey
	priv := ca.leafKey
	if kind == certSelfSigned {
		pub, priv = &ca.rogue.PublicKey, ca.rogue
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, fmt.Errorf("mint certificate for %s: %w", name, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse certificate for %s: %w", name, err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv, Leaf: leaf}, nil
}

// getCertificate picks the certificate for the SNI name, and refuses the
// handshake for hosts that are unreachable today.
func (s *Sim) getCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	name := canonicalHost(hello.ServerName)
	s.connections.Add(1)
	if s.cfg.RecordRequests {
		s.mu.Lock()
		s.conns[name]++
		s.mu.Unlock()
	}
	if name == "" {
		return nil, errors.New("fedisim: no SNI")
	}
	kind := certGood
	if h, ok := s.hostile[name]; ok {
		kind = h.cert
	} else if !s.handshakes(name, s.now()) {
		return nil, fmt.Errorf("fedisim: %s is unreachable today", name)
	}
	return s.certs.leaf(name, kind)
}
