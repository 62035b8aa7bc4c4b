package fedisim

import (
	"bufio"
	"net/http"
	"strconv"
)

// DefaultFloodPeers is the length of a flooder's peers list by default.
const DefaultFloodPeers = 200_000

// floodHosts are the flooders (Config.Flooders): alive Mastodon hosts whose
// peers lists each name FloodPeers valid host names never seen before, each
// its own registrable domain (so no per-domain budget stops them), and new
// ones every simulated day. None of the names answers.
func (s *Sim) floodHosts() map[string]http.HandlerFunc {
	m := map[string]http.HandlerFunc{}
	for i := range s.cfg.Flooders {
		host := floodHost(i)
		n := &node{inf: hostileInfo(host), fam: &families[0], robots: "User-agent: *\nDisallow:\n"}
		m[host] = func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != pathMastodonPeers {
				s.serveNode(w, r, n)
				return
			}
			prefix := "fl" + strconv.Itoa(i) + "d" + strconv.Itoa(s.Day()) + "n"
			streamJSON(w, func(bw *bufio.Writer) {
				writeMastodon(bw, func(yield func(string) bool) {
					var buf []byte
					for k := range s.cfg.FloodPeers {
						if k%10000 == 0 && r.Context().Err() != nil {
							return
						}
						buf = strconv.AppendInt(append(buf[:0], prefix...), int64(k), 36)
						if !yield(string(append(buf, ".social"...))) {
							return
						}
					}
				})
			})
		}
	}
	return m
}

func floodHost(i int) string { return "flooder-" + strconv.Itoa(i) + ".social" }

// Flooders returns the flooders' host names (Config.Flooders of them).
func (s *Sim) Flooders() []string {
	out := make([]string, s.cfg.Flooders)
	for i := range out {
		out[i] = floodHost(i)
	}
	return out
}
