package crawl_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
)

// The pages of a paged peers list share the one 32 MiB cap of a peers list:
// a server that keeps serving full pages of about 1 MiB cannot make a check
// read more than a single list could. The list is then too large, as a
// single list over the cap is: dropped, and the host stays alive.
func TestPagedPeersShareOneCap(t *testing.T) {
	const (
		capPeers = 32 << 20
		page     = 1 << 20 // about; 100 entries padded to 10 KiB each
	)
	pad := strings.Repeat("x", 10<<10)
	cases := []struct {
		software, path string
		entry          func(page int64, i int) string
		open, close    string
	}{
		{"misskey", "/api/federation/instances",
			func(p int64, i int) string { return fmt.Sprintf(`{"host":"p%d-%d.social","pad":"%s"}`, p, i, pad) }, "[", "]"},
		{"peertube", "/api/v1/server/followers",
			func(p int64, i int) string {
				return fmt.Sprintf(`{"follower":{"host":"p%d-%d.social"},"pad":"%s"}`, p, i, pad)
			}, `{"total":1000000,"data":[`, "]}"},
	}
	for _, tc := range cases {
		t.Run(tc.software, func(t *testing.T) {
			e := newEnv(t)
			rt := instance("big.social", tc.software, "")
			var pages, served atomic.Int64 // counted by the server: what it managed to send
			rt[tc.path] = func(w http.ResponseWriter, r *http.Request) {
				p := pages.Add(1)
				write := func(s string) bool {
					n, err := w.Write([]byte(s))
					served.Add(int64(n))
					return err == nil
				}
				if !write(tc.open) {
					return
				}
				for i := range 100 {
					sep := ","
					if i == 0 {
						sep = ""
					}
					if !write(sep + tc.entry(p, i)) {
						return
					}
				}
				write(tc.close)
			}
			e.host("big.social", rt)
			r, _ := e.check("big.social", crawl.CheckOptions{FetchPeers: true})
			wantOutcome(t, r, observer.OutcomeAlive, "peers: ")
			if !strings.Contains(r.Check.Error, "32 MiB") {
				t.Errorf("error %q does not name the 32 MiB cap", r.Check.Error)
			}
			if r.Check.PeersFetched || len(r.Discoveries) != 0 {
				t.Errorf("a list over the cap was kept: fetched %v, %d discoveries", r.Check.PeersFetched, len(r.Discoveries))
			}
			// The last page asked for may have been sent whole while the
			// client stopped reading it.
			if n := served.Load(); n > capPeers+page+64<<10 {
				t.Errorf("server sent %d MiB in %d pages for one check's peers list", n>>20, pages.Load())
			}
			if r.Bytes > capPeers+64<<10 {
				t.Errorf("check read %d bytes", r.Bytes)
			}
		})
	}
}
