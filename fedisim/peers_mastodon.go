package fedisim

// Mastodon's peers list, GET /api/v1/instance/peers: a JSON array of host
// names, conditional on its ETag.

import (
	"bufio"
	"iter"
	"net/http"
)

func writeMastodon(bw *bufio.Writer, peers iter.Seq[string]) {
	var scratch []byte
	bw.WriteByte('[')
	first := true
	for h := range peers {
		if !first {
			bw.WriteByte(',')
		}
		first = false
		scratch = appendJSONString(scratch[:0], h)
		bw.Write(scratch)
	}
	bw.WriteString("]")
}

func (s *Sim) serveMastodon(w http.ResponseWriter, r *http.Request, n *node) {
	if s.notModified(w, r, n) {
		return
	}
	streamJSON(w, func(bw *bufio.Writer) { writeMastodon(bw, n.peers) })
}
