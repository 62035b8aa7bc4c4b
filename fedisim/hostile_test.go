package fedisim_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fediverse-observer/observer/fedisim"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

func startHostile(t *testing.T) (*fedisim.Sim, *http.Client) {
	t.Helper()
	s := testsupport.StartSim(t, fedisim.Config{Seed: 1, Instances: 300, HostileHosts: true, RecordRequests: true})
	return s, newClient(t, s)
}

func TestHostileList(t *testing.T) {
	s, c := startHostile(t)
	h := s.Hostile()
	for _, name := range []string{
		"hostile-slow-headers.social", "hostile-trickle.social", "hostile-endless.social", "hostile-gzip-bomb.social",
		fedisim.HostileGzipMembers,
		"hostile-deep-json.social", "hostile-huge-header.social", "hostile-redirect-loop.social",
		"hostile-redirect-301.social", "hostile-xredirect-308.social", fedisim.HostileRedirectTarget,
		"hostile-redirect-ip-metadata.social", "hostile-redirect-name-ula.social", fedisim.PrivateLoopback,
		"hostile-tls-expired.social", "hostile-tls-wrong-name.social", "hostile-tls-self-signed.social",
		"hostile-bad-utf8.social", "hostile-nul-bytes.social", "hostile-peers-10m.social", "hostile-peers-junk.social",
		"hostile-nodeinfo-elsewhere.social", "hostile-script-tags.social", "hostile-formula-hyperlink.social",
		"node0." + fedisim.SpamFarmDomain,
	} {
		if h[name] == "" {
			t.Errorf("Hostile() lacks %s", name)
		}
		if inf, ok := s.Instance(name); !ok || inf.Index != -1 {
			t.Errorf("Instance(%s) = %+v, %v", name, inf, ok)
		}
	}
	plain, err := fedisim.New(fedisim.Config{Instances: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Hostile()) != 0 || plain.SpamFarm() != nil {
		t.Error("hostile hosts without Config.HostileHosts")
	}

	// A crawl finds them through the hubs, except the names that stand for
	// private addresses.
	hub := s.Seeds(1)[0]
	peers, _ := getPeers(t, c, hub, "mastodon")
	if !slices.Contains(peers, "hostile-gzip-bomb.social") || !slices.Contains(peers, "node0."+fedisim.SpamFarmDomain) {
		t.Errorf("hub %s does not list the hostile hosts", hub)
	}
	if slices.Contains(peers, fedisim.PrivateMetadata) || slices.Contains(peers, "node1."+fedisim.SpamFarmDomain) {
		t.Errorf("hub %s lists hosts only redirects or the farm should name", hub)
	}
}

func TestHostileSlowHeaders(t *testing.T) {
	s, c := startHostile(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://hostile-slow-headers.social/.well-known/nodeinfo", nil)
	_, err := c.Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a deadline error, got %v", err)
	}
	if got := s.Requests("hostile-slow-headers.social"); !slices.Equal(got, []string{"GET /.well-known/nodeinfo"}) {
		t.Fatalf("Requests = %q", got)
	}
	// robots.txt is not slowed, so that the attack meets the NodeInfo fetch.
	if r := mustFetch(t, c, "GET", "https://hostile-slow-headers.social/robots.txt", nil); r.status != 200 {
		t.Fatalf("robots.txt: %d", r.status)
	}
}

func TestHostileTrickle(t *testing.T) {
	_, c := startHostile(t)
	resp, err := c.Get("https://hostile-trickle.social/.well-known/nodeinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 8)
	n, err := resp.Body.Read(buf)
	if err != nil || n != 1 || buf[0] != '{' {
		t.Fatalf("first read: %q, %v; want exactly one byte", buf[:n], err)
	}
	n, err = resp.Body.Read(buf)
	if err != nil || n != 1 || buf[0] != '"' {
		t.Fatalf("second read: %q, %v; want exactly one byte", buf[:n], err)
	}
}

func TestHostileEndless(t *testing.T) {
	_, c := startHostile(t)
	resp, err := c.Get("https://hostile-endless.social/.well-known/nodeinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	const limit = 20 << 20
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, limit))
	if err != nil || n != limit {
		t.Fatalf("read %d bytes, %v; want the cap of %d", n, err, limit)
	}
}

func TestHostileGzipBomb(t *testing.T) {
	_, c := startHostile(t)
	r := mustFetch(t, c, "GET", "https://hostile-gzip-bomb.social/.well-known/nodeinfo", nil)
	if r.header.Get("Content-Encoding") != "gzip" || r.status != 200 {
		t.Fatalf("status %d, encoding %q", r.status, r.header.Get("Content-Encoding"))
	}
	if len(r.body) > 4<<20 {
		t.Fatalf("compressed body is %d bytes, want a small one", len(r.body))
	}
	zr, err := gzip.NewReader(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	const limit = 1<<30 + 1
	n, err := io.Copy(io.Discard, io.LimitReader(zr, limit))
	if err != nil || n != limit {
		t.Fatalf("inflated %d bytes (%v) from %d; want more than 1 GiB", n, err, len(r.body))
	}
}

func TestHostileDeepJSON(t *testing.T) {
	_, c := startHostile(t)
	wk := mustFetch(t, c, "GET", "https://hostile-deep-json.social/.well-known/nodeinfo", nil)
	if !bytes.Contains(wk.body, []byte(`"https://hostile-deep-json.social/nodeinfo/2.0"`)) {
		t.Fatalf("well-known: %s", wk.body)
	}
	r := mustFetch(t, c, "GET", "https://hostile-deep-json.social/nodeinfo/2.0", nil)
	depth, maxDepth := 0, 0
	for _, b := range r.body {
		switch b {
		case '{', '[':
			depth++
			maxDepth = max(maxDepth, depth)
		case '}', ']':
			depth--
		}
	}
	if depth != 0 || maxDepth < fedisim.DeepJSONDepth {
		t.Fatalf("depth %d (unbalanced %d), want %d", maxDepth, depth, fedisim.DeepJSONDepth)
	}
}

func TestHostileHugeHeader(t *testing.T) {
	s, c := startHostile(t)
	r := mustFetch(t, c, "GET", "https://hostile-huge-header.social/.well-known/nodeinfo", nil)
	if len(r.header.Get("X-Fedisim-Padding")) != fedisim.HugeHeaderLen {
		t.Fatalf("header of %d bytes", len(r.header.Get("X-Fedisim-Padding")))
	}
	strict := newClient(t, s)
	strict.Transport.(*http.Transport).MaxResponseHeaderBytes = 64 << 10
	if _, err := fetch(t, strict, "GET", "https://hostile-huge-header.social/.well-known/nodeinfo", nil); err == nil {
		t.Fatal("a 64 KiB header limit should refuse the response")
	}
}

func TestHostileRedirects(t *testing.T) {
	s, c := startHostile(t)
	const wk = "/.well-known/nodeinfo"
	loc := func(host, path string) (int, string) {
		r := mustFetch(t, c, "GET", "https://"+host+path, nil)
		return r.status, r.header.Get("Location")
	}
	code, first := loc("hostile-redirect-loop.social", wk)
	_, second := loc("hostile-redirect-loop.social", first)
	if code != 302 || first == wk || second != wk {
		t.Errorf("redirect loop: %d %q then %q", code, first, second)
	}
	for _, c3 := range []string{"301", "302", "303", "307", "308"} {
		host := "hostile-redirect-" + c3 + ".social"
		code, l := loc(host, wk)
		if want := "/r" + wk; c3 != strconv.Itoa(code) || l != want {
			t.Errorf("%s: %d %q", host, code, l)
			continue
		}
		ni := mustFetch(t, c, "GET", "https://"+host+"/r"+wk, nil)
		if _, err := decodeWellKnown(ni.body); err != nil || ni.status != 200 {
			t.Errorf("%s: after the redirect: %d %v", host, ni.status, err)
		}
		xhost := "hostile-xredirect-" + c3 + ".social"
		code, l = loc(xhost, wk)
		if strconv.Itoa(code) != c3 || l != "https://"+fedisim.HostileRedirectTarget+wk {
			t.Errorf("%s: %d %q", xhost, code, l)
		}
	}
	getNodeInfo(t, c, fedisim.HostileRedirectTarget)
	for host, want := range map[string]string{
		"hostile-redirect-ip-loopback.social":    "https://127.0.0.2" + wk,
		"hostile-redirect-ip-metadata.social":    "https://169.254.169.254" + wk,
		"hostile-redirect-ip-ipv6-loop.social":   "https://[::1]" + wk,
		"hostile-redirect-ip-ula.social":         "https://[fd00::1]" + wk,
		"hostile-redirect-name-metadata.social":  "https://" + fedisim.PrivateMetadata + wk,
		"hostile-redirect-name-ipv6-loop.social": "https://" + fedisim.PrivateIPv6Loopback + wk,
	} {
		if code, l := loc(host, wk); l != want || code/100 != 3 {
			t.Errorf("%s: %d %q, want %q", host, code, l, want)
		}
	}
	if got := s.Requests(fedisim.PrivateMetadata); len(got) != 0 {
		t.Errorf("the private name was requested: %q", got)
	}
}

func TestHostileTLS(t *testing.T) {
	s, c := startHostile(t)
	for host, check := range map[string]func(error) bool{
		"hostile-tls-expired.social": func(err error) bool {
			var e x509.CertificateInvalidError
			return errors.As(err, &e) && e.Reason == x509.Expired
		},
		"hostile-tls-wrong-name.social": func(err error) bool {
			var e x509.HostnameError
			return errors.As(err, &e)
		},
		"hostile-tls-self-signed.social": func(err error) bool {
			var e x509.UnknownAuthorityError
			return errors.As(err, &e)
		},
	} {
		_, err := fetch(t, c, "GET", "https://"+host+"/.well-known/nodeinfo", nil)
		if !check(err) {
			t.Errorf("%s: %v", host, err)
		}
		if s.Connections(host) != 1 || len(s.Requests(host)) != 0 {
			t.Errorf("%s: %d connections, requests %q", host, s.Connections(host), s.Requests(host))
		}
	}
}

func TestHostileTexts(t *testing.T) {
	_, c := startHostile(t)
	r := mustFetch(t, c, "GET", "https://hostile-bad-utf8.social/nodeinfo/2.0", nil)
	if utf8.Valid(r.body) || !bytes.Contains(r.body, []byte("\xff")) {
		t.Errorf("bad-utf8 nodeinfo is valid UTF-8: %q", r.body)
	}
	ni, _ := getNodeInfo(t, c, "hostile-nul-bytes.social")
	for _, s := range []string{ni.Software.Name, ni.Software.Version, ni.Metadata.NodeName, ni.Metadata.NodeDescription} {
		if !strings.Contains(s, "\x00") {
			t.Errorf("nul-bytes: %q has no NUL", s)
		}
	}
	for host, want := range map[string]string{
		"hostile-script-tags.social":       "<script>alert(1)</script>",
		"hostile-formula-hyperlink.social": `=HYPERLINK(`,
		"hostile-formula-plus.social":      "+cmd",
		"hostile-formula-minus.social":     "-2+3",
		"hostile-formula-at.social":        "@SUM(",
		"hostile-formula-quoted.social":    `"quoted"`,
	} {
		ni, _ := getNodeInfo(t, c, host)
		if !strings.HasPrefix(ni.Metadata.NodeName, want) {
			t.Errorf("%s: name %q, want prefix %q", host, ni.Metadata.NodeName, want)
		}
	}
	wk := mustFetch(t, c, "GET", "https://hostile-nodeinfo-elsewhere.social/.well-known/nodeinfo", nil)
	links, err := decodeWellKnown(wk.body)
	if err != nil || len(links.Links) != 1 || !strings.HasPrefix(links.Links[0].Href, "https://"+fedisim.HostileRedirectTarget+"/") {
		t.Errorf("nodeinfo-elsewhere: %s", wk.body)
	}
}

func TestHostilePeers(t *testing.T) {
	s, c := startHostile(t)
	// The whole list is read without the client's 30 s deadline, which
	// covers the body too: on a loaded machine reading 190 MB can take
	// longer, and the test is about what the list holds, not how fast
	// it comes.
	whole := *c
	whole.Timeout = 0
	resp, err := whole.Get("https://hostile-peers-10m.social/api/v1/instance/peers")
	if err != nil {
		t.Fatal(err)
	}
	entries, bytesRead := 0, 0
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		bytesRead += n
		entries += bytes.Count(buf[:n], []byte{'"'})
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("10m peers: reading after %d bytes: %v", bytesRead, err)
		}
	}
	resp.Body.Close()
	if entries/2 != fedisim.HugePeersLen {
		t.Errorf("10m peers: %d entries in %d bytes", entries/2, bytesRead)
	}

	r := mustFetch(t, c, "GET", "https://hostile-peers-junk.social/api/v1/instance/peers", nil)
	var junk []any
	if err := json.Unmarshal(r.body, &junk); err != nil {
		t.Fatal(err)
	}
	var nonString, long, withPort int
	for _, v := range junk {
		s, ok := v.(string)
		switch {
		case !ok:
			nonString++
		case len(s) >= 300:
			long++
		case strings.Contains(s, ":"):
			withPort++
		}
	}
	if nonString == 0 || long == 0 || withPort == 0 || len(junk) < 100 {
		t.Errorf("junk peers: %d entries, %d non-strings, %d long, %d with ':'", len(junk), nonString, long, withPort)
	}

	farm := s.SpamFarm()
	peers, _ := getPeers(t, c, farm[3], "mastodon")
	if len(peers) != len(farm)-1 || slices.Contains(peers, farm[3]) {
		t.Errorf("spam farm node lists %d of %d siblings", len(peers), len(farm)-1)
	}
	for _, p := range peers {
		if !strings.HasSuffix(p, "."+fedisim.SpamFarmDomain) {
			t.Errorf("spam farm lists %q", p)
		}
	}
}
