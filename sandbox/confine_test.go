package sandbox_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/sandbox"
)

// What this kernel offers decides what the confined tests must see.
func kernelSeccomp() bool {
	b, err := os.ReadFile("/proc/self/status")
	return err == nil && strings.Contains(string(b), "\nSeccomp:") && runtime.GOARCH == "amd64"
}

func kernelLandlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

func TestConfinedChecker(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("confinement is Linux only")
	}
	allowed, denied := listen(t), listen(t)
	written := filepath.Join(t.TempDir(), "written")
	p, logs := newPool(t, true, func(o *sandbox.PoolOptions) {
		o.Env = append(o.Env, envWrite+"="+written, envPorts+"="+strconv.Itoa(port(allowed)), envDial+"="+allowed.Addr().String()+","+denied.Addr().String())
	})
	rep := p.Report()
	t.Logf("kernel %s: %s", kernelRelease(), rep)
	for _, l := range []string{sandbox.LayerNoFile, sandbox.LayerCPU, sandbox.LayerFSize, sandbox.LayerMemory, sandbox.LayerNoNewPrv} {
		if !rep.Applied(l) {
			t.Errorf("layer %s not applied: %s", l, rep)
		}
	}

	// An ordinary check still works.
	if r := check(t, p, "peers.social"); r.Check.Outcome != observer.OutcomeAlive || len(r.Discoveries) != 2 {
		t.Errorf("confined peers.social: %+v", r)
	}

	if kernelSeccomp() {
		if !rep.Applied(sandbox.LayerSeccomp) {
			t.Errorf("kernel offers seccomp but it was not applied: %s", rep)
		}
		for _, h := range []string{"exec.social", "execve.social", "fork.social", "setpgid.social", "ptrace.social", "prlimit.social", "kill.social",
			"setown.social", "setownex.social", "fiosetown.social"} {
			if r := check(t, p, h); !strings.Contains(r.Check.Error, "operation not permitted") {
				t.Errorf("%s under seccomp: %s %q, want EPERM", h, r.Check.Outcome, r.Check.Error)
			}
		}
		if r := check(t, p, "write.social"); !strings.Contains(r.Check.Error, "operation not permitted") {
			t.Errorf("write under seccomp: %s %q, want EPERM", r.Check.Outcome, r.Check.Error)
		}
	} else if rep.Applied(sandbox.LayerSeccomp) {
		t.Errorf("seccomp reported applied on a kernel without it")
	}

	if abi := kernelLandlockABI(); abi >= 1 {
		if !rep.Applied(sandbox.LayerLandlock) {
			t.Errorf("kernel offers Landlock ABI %d but it was not applied: %s", abi, rep)
		}
		if r := check(t, p, "read.social"); !strings.Contains(r.Check.Error, "permission denied") {
			t.Errorf("reading /etc/passwd under Landlock: %s %q, want permission denied", r.Check.Outcome, r.Check.Error)
		}
		if abi >= 4 {
			if !rep.Applied(sandbox.LayerLLNet) {
				t.Errorf("Landlock ABI %d offers network rules but they were not applied: %s", abi, rep)
			}
			if r := check(t, p, "dial.social"); r.Check.Error != "allowed: ok; denied: permission denied" {
				t.Errorf("dials under Landlock: %q", r.Check.Error)
			}
		}
	} else if rep.Applied(sandbox.LayerLandlock) {
		t.Errorf("Landlock reported applied on a kernel without it")
	}

	// Confined, the memory hog dies by its own limit (RLIMIT_DATA at
	// 256 MiB, below the pool's 512 MiB watchdog).
	if r := check(t, p, "hog.social"); r.Check.Outcome != observer.OutcomeCheckerFailed {
		t.Errorf("confined hog: %s %q", r.Check.Outcome, r.Check.Error)
	}
	if _, err := os.Stat(written); err == nil {
		t.Errorf("a confined checker created a file")
	}
	if n := strings.Count(logs.String(), "checkers confined"); n != 1 {
		t.Errorf("confinement report logged %d times, want once", n)
	}
}

// A checker allowed many ports (one per --connect-to rule of a big staging
// setup, some repeated) reports them summarised: its report stays valid and
// the pool starts.
func TestConfinedManyPorts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("confinement is Linux only")
	}
	var ports []string
	for i := range 500 {
		ports = append(ports, strconv.Itoa(20000+i%450))
	}
	p, _ := newPool(t, true, func(o *sandbox.PoolOptions) {
		o.Env = append(o.Env, envPorts+"="+strings.Join(ports, ","))
	})
	if r := check(t, p, "peers.social"); r.Check.Outcome != observer.OutcomeAlive {
		t.Errorf("peers.social: %s %q", r.Check.Outcome, r.Check.Error)
	}
	l, ok := layer(p.Report(), sandbox.LayerLLNet)
	if !ok {
		t.Fatalf("no %s layer: %s", sandbox.LayerLLNet, p.Report())
	}
	if kernelLandlockABI() >= 4 {
		// 450 distinct ports and 53.
		if want := "TCP connect only to 451 ports: 53 20000 20001 20002 20003 20004 20005 20006 … 443 more, up to 20449"; l.Detail != want {
			t.Errorf("%s detail %q, want %q", l.Name, l.Detail, want)
		}
	}
}

// A checker whose hello the orchestrator refuses is reported with the
// reason, not as a death by the signal that ended it.
func TestRefusedHelloNamesTheReason(t *testing.T) {
	_, err := sandbox.NewPool(context.Background(), sandbox.PoolOptions{
		Args: []string{"-test.run=^$"}, Env: []string{envChild + "=1", envBadHello + "=1"},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err == nil {
		t.Fatal("NewPool accepted a hello with an unclean layer name")
	}
	if msg := err.Error(); !strings.Contains(msg, "hello refused: report layer name: not clean text") || strings.Contains(msg, "signal") {
		t.Errorf("refused hello reported as %q", msg)
	}
}

// A descriptor the orchestrator leaked (opened without O_CLOEXEC, as C code
// may) is closed by a confined checker, and only by a confined one.
func TestInheritedDescriptorClosed(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("confinement is Linux only")
	}
	leaked := filepath.Join(t.TempDir(), "leaked.db")
	fd, err := unix.Open(leaked, unix.O_RDWR|unix.O_CREAT, 0o600) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	for _, confine := range []bool{false, true} {
		p, _ := newPool(t, confine, nil)
		r := check(t, p, "fds.social")
		if has := strings.Contains(r.Check.Error, leaked); has == confine {
			t.Errorf("confined=%v: checker's open files %q", confine, r.Check.Error)
		}
		p.Close()
	}
}

// The same hostile checks unconfined succeed: the confined test's failures
// come from the confinement, not from the fake.
func TestUnconfinedControl(t *testing.T) {
	allowed, denied := listen(t), listen(t)
	p, _ := newPool(t, false, func(o *sandbox.PoolOptions) {
		o.Env = append(o.Env, envDial+"="+allowed.Addr().String()+","+denied.Addr().String())
	})
	for _, h := range []string{"read.social", "exec.social", "fork.social", "setpgid.social", "prlimit.social", "kill.social",
		"setown.social", "setownex.social", "fiosetown.social"} {
		if r := check(t, p, h); r.Check.Error != "ok" {
			t.Errorf("unconfined %s: %q", h, r.Check.Error)
		}
	}
	if r := check(t, p, "dial.social"); r.Check.Error != "allowed: ok; denied: ok" {
		t.Errorf("unconfined dials: %q", r.Check.Error)
	}
	if len(p.Report().Missing()) == 0 {
		t.Errorf("an unconfined checker reported every layer applied")
	}
}

// The real crawler, confined, checks an instance over TLS: the seccomp
// filter and the Landlock rules leave what a TLS client needs (the CA file
// read before confinement, /etc/hosts for "localhost", the allowed port).
func TestConfinedRealCrawler(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("confinement is Linux only")
	}
	caFile, cert := testCert(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/nodeinfo":
			fmt.Fprintf(w, `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"https://%s/nodeinfo/2.0"}]}`, r.Host)
		case "/nodeinfo/2.0":
			fmt.Fprint(w, `{"version":"2.0","software":{"name":"mastodon","version":"4.3.1"},"protocols":["activitypub"],"usage":{"users":{"total":12}},"openRegistrations":true,"metadata":{}}`)
		case "/api/v1/instance/peers":
			fmt.Fprint(w, `["known.social","fresh.social"]`)
		default:
			http.NotFound(w, r)
		}
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	p, logs := newPool(t, true, func(o *sandbox.PoolOptions) {
		o.Env = append(o.Env, envReal+"="+caFile+","+strconv.Itoa(port))
	})
	r := check(t, p, "real.social")
	if r.Check.Outcome != observer.OutcomeAlive || r.Check.Software != "mastodon" {
		t.Fatalf("confined real check: %s %q\n%s", r.Check.Outcome, r.Check.Error, logs)
	}
	if len(r.Discoveries) != 1 || r.Discoveries[0].Host != "fresh.social" || r.Discoveries[0].Via != "real.social" {
		t.Errorf("discoveries %+v, want fresh.social via real.social", r.Discoveries)
	}
}

const (
	envPorts = "SANDBOX_TEST_PORTS" // ConnectPorts for the confined child
	envDial  = "SANDBOX_TEST_DIAL"  // allowed,denied addresses dial.social tries
	envReal  = "SANDBOX_TEST_REAL"  // caFile,port: run the real crawler
)

func realCrawler(spec string) (crawl.Checker, sandbox.ConfineOptions, error) {
	caFile, portText, _ := strings.Cut(spec, ",")
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, sandbox.ConfineOptions{}, err
	}
	c, err := crawl.New(crawl.Options{
		CAFiles:      []string{caFile},
		ConnectTo:    []crawl.ConnectTo{{Port: 443, Addr: "localhost", AddrPort: port}},
		AllowAddrs:   []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		CheckTimeout: 20 * time.Second,
	})
	return c, sandbox.ConfineOptions{MemoryLimit: 256 << 20, ReadPaths: []string{caFile}, ConnectPorts: []uint16{uint16(port)}}, err
}

func dialBoth(spec string) string {
	allowed, denied, _ := strings.Cut(spec, ",")
	res := func(addr string) string {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			if strings.Contains(err.Error(), "permission denied") {
				return "permission denied"
			}
			return err.Error()
		}
		c.Close()
		return "ok"
	}
	return "allowed: " + res(allowed) + "; denied: " + res(denied)
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l
}

func port(l net.Listener) int { return l.Addr().(*net.TCPAddr).Port }

func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "?"
	}
	return unix.ByteSliceToString(u.Release[:])
}

func testCert(t *testing.T) (string, tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test CA"},
		DNSNames:              []string{"*.social"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return file, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
