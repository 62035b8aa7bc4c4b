package crawl

import (
	"crypto/x509"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fediverse-observer/observer/hostname"
)

// FuzzClassifyRedirect resolves a server's Location against the URL asked
// for, as fetcher.do does, and checks what classifyRedirect lets through: a
// followed redirect goes over https to the default port, without
// credentials, to the checked host or (when robots.txt is fetched) to
// another host's /robots.txt with no query; and the request made for it
// says so too. A redirect not followed is described consistently.
func FuzzClassifyRedirect(f *testing.F) {
	const checked = "alpha.social"
	c, err := New(Options{RootCAs: x509.NewCertPool(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	fe := &fetcher{c: c, host: checked}

	bases := []string{
		"https://alpha.social/.well-known/nodeinfo",
		"https://alpha.social/robots.txt",
		"https://alpha.social/nodeinfo/2.0",
		"https://www.example.com/robots.txt", // after a robots.txt redirect to another host
	}
	locs := []string{
		// check_test.go's TestRedirects and neighbours.
		"https://new.social/.well-known/nodeinfo", "https://NEW.social./x", "http://new.social/",
		"http://old.social/.well-known/nodeinfo", "https://localhost/", "https://8.8.8.8/", "https://10.1.2.3/",
		"/wk", "https://ALPHA.social:443/wk2", "/a", "/.well-known/nodeinfo", "https://127.0.0.2:8443/.well-known/nodeinfo",
		"https://alpha.social:8443/nodeinfo/2.0", "https://victim.social/nodeinfo/2.0",
		// guard_test.go: IP literals.
		"https://169.254.169.254/latest/meta-data/", "https://[::1]/", "https://[::ffff:127.0.0.1]/",
		"https://[64:ff9b::a00:1]/", "https://[fe80::1%25eth0]/", "https://0.0.0.0/",
		// robots_test.go: robots.txt on other hosts.
		"https://www.example.com/robots.txt", "https://www.example.com/", "https://www.example.com/robots.txt?x=1",
		"http://www.example.com/robots.txt", "https://alpha.social/robots-www.txt", "/private/wk", "/private/ni?v=2",
		"https://r1.social/robots.txt", "https://one.example.net/robots.txt",
		// Spellings that must not get another host or port through.
		"https://www.example.com/robots.txt?", "https://www.example.com/%72obots.txt", "https://www.example.com/robots.txt#x",
		"https://www.example.com//robots.txt", "https://www.example.com/x/../robots.txt", "//www.example.com/robots.txt",
		"https://user:secret@alpha.social/", "https://alpha.social@evil.social/", "https://evil.social\\@alpha.social/",
		"https://alpha.social:/x", "https://alpha.social:0443/x", "https://alpha.social:443:443/x", "https:alpha.social/x",
		"https:/alpha.social/x", "HTTPS://ALPHA.SOCIAL/X", "https://xn--bcher-kva.de/robots.txt", "https://bücher.de/robots.txt",
		"https://alpha.social%2eevil.social/", "https://%61lpha.social/", "https://alpha.social./x", "https://alpha.social../x",
		"", "?q", "#f", ".", "..", "https://[alpha.social]/", "https://*.social/", "https://alpha.social\x00/",
	}
	for _, b := range bases {
		for _, l := range locs {
			f.Add(b, l, 301, strings.HasSuffix(b, "/robots.txt"))
		}
	}
	f.Add("https://alpha.social/", "https://www.example.com/robots.txt", 302, false)

	f.Fuzz(func(t *testing.T, base, loc string, status int, robotsTxt bool) {
		u, err := url.Parse(base)
		if err != nil || u.Scheme != "https" || u.User != nil || u.Port() != "" || u.Opaque != "" {
			return
		}
		if h, err := hostname.Normalize(u.Hostname()); err != nil || string(h) != u.Host {
			return // requests go to normalised hosts only
		}
		target, err := u.Parse(loc)
		if err != nil {
			return // fetcher.do stops on an unparsable Location
		}
		redacted := target.Redacted()
		host, stop := fe.classifyRedirect(status, target, robotsTxt)

		if stop != nil {
			if host != "" {
				t.Fatalf("%q from %q: stopped, yet host %q", loc, base, host)
			}
			if stop.Status != status || !utf8.ValidString(stop.URL) || len(stop.URL) > 300+len("…") {
				t.Fatalf("%q from %q: stop %+v", loc, base, stop)
			}
			// The userinfo right after "//", not the same text elsewhere:
			// a path of "/:secret@" is not a password shown.
			if pw, ok := target.User.Password(); ok && pw != "xxxxx" && strings.Contains(stop.URL, "//"+target.User.String()+"@") {
				t.Fatalf("%q from %q: stop URL %q shows the password", loc, base, stop.URL)
			}
			switch {
			case stop.HostErr != nil && stop.Host != "":
				t.Fatalf("%q from %q: host %q and host error %v", loc, base, stop.Host, stop.HostErr)
			case stop.HostErr == nil && stop.Host == "":
				t.Fatalf("%q from %q: stopped with neither host nor host error", loc, base)
			case stop.IP && stop.HostErr == nil, stop.Blocked && !stop.IP:
				t.Fatalf("%q from %q: stop %+v", loc, base, stop)
			case stop.HTTP && target.Scheme == "https":
				t.Fatalf("%q from %q: https target reported as http", loc, base)
			}
			if stop.Host != "" {
				if n, err := hostname.Normalize(string(stop.Host)); err != nil || n != stop.Host {
					t.Fatalf("%q from %q: stop host %q not normalised (%q, %v)", loc, base, stop.Host, n, err)
				}
			}
			return
		}

		// Followed.
		if target.Scheme != "https" || target.User != nil || (target.Port() != "" && target.Port() != "443") {
			t.Fatalf("%q from %q: followed to %q", loc, base, redacted)
		}
		if n, err := hostname.Normalize(target.Hostname()); err != nil || n != host {
			t.Fatalf("%q from %q: followed to host %q, target host %q normalises to %q, %v", loc, base, host, target.Hostname(), n, err)
		}
		otherRobots := robotsTxt && target.EscapedPath() == "/robots.txt" && target.RawQuery == "" && !target.ForceQuery
		if host != checked && !otherRobots {
			t.Fatalf("%q from %q (robots.txt %v): followed to another host's %q", loc, base, robotsTxt, redacted)
		}
		// fetcher.do then asks for the target with its host canonical: the
		// request goes where the checks above say.
		target.Host = string(host)
		req, err := http.NewRequest(http.MethodGet, target.String(), nil)
		if err != nil {
			t.Fatalf("%q from %q: followed to %q, which is no request: %v", loc, base, target, err)
		}
		ru := req.URL
		if ru.Scheme != "https" || ru.User != nil || ru.Port() != "" || ru.Hostname() != string(host) || req.Host != string(host) {
			t.Fatalf("%q from %q: followed to %q, requested as %q (Host %q)", loc, base, target, ru, req.Host)
		}
		if host != checked && (ru.EscapedPath() != "/robots.txt" || ru.RawQuery != "" || ru.ForceQuery) {
			t.Fatalf("%q from %q: another host's robots.txt requested as %q", loc, base, ru)
		}
	})
}
