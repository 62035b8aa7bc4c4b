package fedisim

// Mbin's peers list, /api/federated, and its block list, /api/defederated,
// which a crawler must not read as peers.

import (
	"bufio"
	"fmt"
	"iter"
	"net/http"
)

// writeMbin writes Mbin's {"instances":[{"domain":...}]} (MbinOrg/mbin,
// InstanceRetrieveFederationApi).
func writeMbin(bw *bufio.Writer, hosts iter.Seq[string]) {
	var scratch []byte
	bw.WriteString(`{"instances":[`)
	first := true
	for h := range hosts {
		if !first {
			bw.WriteByte(',')
		}
		first = false
		scratch = append(scratch[:0], `{"domain":`...)
		scratch = appendJSONString(scratch, h)
		scratch = append(scratch, `,"software":null,"version":null}`...)
		bw.Write(scratch)
	}
	bw.WriteString("]}")
}

// mbinBlockedHosts are the hosts a simulated Mbin admin defederated: names
// in no peers list, so one discovered can only have come from the block
// list.
func mbinBlockedHosts(n *node) iter.Seq[string] {
	return func(yield func(string) bool) {
		for k := range 3 {
			if !yield(fmt.Sprintf("defederated-%d.%s", k, n.inf.Host)) {
				return
			}
		}
	}
}

func (s *Sim) serveMbin(w http.ResponseWriter, r *http.Request, n *node) {
	if r.URL.Path == pathMbinBlocked {
		// Its block list: a crawler that read it would take the
		// hosts an admin cut off for peers.
		s.mbinBlockedReads.Add(1)
		streamJSON(w, func(bw *bufio.Writer) { writeMbin(bw, mbinBlockedHosts(n)) })
		return
	}
	if s.notModified(w, r, n) {
		return
	}
	streamJSON(w, func(bw *bufio.Writer) { writeMbin(bw, n.peers) })
}
