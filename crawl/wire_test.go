package crawl_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
)

// emptyGzipMember is a whole gzip stream that decodes to nothing.
var emptyGzipMember = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}

// endlessMembers streams empty gzip members until the client goes away,
// counting what it wrote.
func endlessMembers(sent *atomic.Int64) http.HandlerFunc {
	chunk := bytes.Repeat(emptyGzipMember, 1000)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(200)
		deadline := time.Now().Add(time.Minute) // a safety net only
		for r.Context().Err() == nil && time.Now().Before(deadline) {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}
}

// A body of empty gzip members decodes to nothing, forever: the cap on the
// coded bytes ends it, where the cap on the decoded ones never would.
func TestEndlessEmptyGzipMembersAreCapped(t *testing.T) {
	e := newEnv(t)
	var sent atomic.Int64
	rt := instance("members.social", "mastodon", `[]`)
	rt["/.well-known/nodeinfo"] = endlessMembers(&sent)
	e.host("members.social", rt)
	r, _ := e.check("members.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeTooLarge, "body over 64 KiB cap")
	// The server's count holds what sits in the socket buffers too.
	if n := sent.Load(); n > 8<<20 {
		t.Errorf("the server sent %d bytes to one check, want the 64 KiB cap and the buffers' worth", n)
	}
	if r.Check.WireBytes < 64<<10 || r.Check.WireBytes > 1<<20 {
		t.Errorf("wire_bytes %d, want a little over the 64 KiB cap", r.Check.WireBytes)
	}
}

// The check's own cap bounds what all its responses read, each within its
// body cap.
func TestCheckWireCap(t *testing.T) {
	const wireCap = 100 << 10
	e := newEnv(t, func(o *crawl.Options) { o.MaxCheckWireBytes = wireCap })
	rt := instance("big.social", "mastodon", `[]`)
	rt["/robots.txt"] = text(200, "User-agent: *\nDisallow:\n#"+strings.Repeat("x", 300<<10)+"\n")
	e.host("big.social", rt)
	r, _ := e.check("big.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeTooLarge, "check over 100 KiB cap on bytes read from the network")
	if r.Check.WireBytes != wireCap {
		t.Errorf("wire_bytes %d, want the cap, %d", r.Check.WireBytes, wireCap)
	}
}

// What a check reads off the network is recorded as it came: a gzip body
// counts its coded bytes, decoded is only the pass's summary figure.
func TestWireBytesCountCodedBodies(t *testing.T) {
	e := newEnv(t)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(nodeInfoDoc("2.0", "mastodon") + strings.Repeat(" ", 100<<10)))
	zw.Close()
	var acceptEncoding atomic.Value
	rt := instance("zip.social", "mastodon", `[]`)
	rt["/nodeinfo/2.0"] = func(w http.ResponseWriter, r *http.Request) {
		acceptEncoding.Store(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(zipped.Bytes())
	}
	e.host("zip.social", rt)
	r, _ := e.check("zip.social", crawl.CheckOptions{})
	wantOutcome(t, r, observer.OutcomeAlive, "")
	if got := acceptEncoding.Load(); got != "gzip" {
		t.Errorf("Accept-Encoding %q, want gzip, the one coding the crawler decodes", got)
	}
	if r.Bytes < 100<<10 {
		t.Errorf("decoded bytes %d, want the 100 KiB document", r.Bytes)
	}
	if r.Check.WireBytes < int64(zipped.Len()) || r.Check.WireBytes > 20<<10 {
		t.Errorf("wire_bytes %d, want the %d coded bytes and the other small responses", r.Check.WireBytes, zipped.Len())
	}
}

// A coding the crawler did not ask for is refused, not parsed as if plain.
func TestUnaskedContentEncodingIsRefused(t *testing.T) {
	e := newEnv(t)
	rt := instance("br.social", "mastodon", `[]`)
	rt["/.well-known/nodeinfo"] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "br")
		w.Write([]byte(wellKnownFor("br.social", "2.0")))
	}
	e.host("br.social", rt)
	r, _ := e.check("br.social", crawl.CheckOptions{})
	if r.Check.Outcome == observer.OutcomeAlive || !strings.Contains(r.Check.Error, `content encoding "br" was not asked for`) {
		t.Errorf("outcome %s, error %q; want a failure naming the coding", r.Check.Outcome, r.Check.Error)
	}
}
