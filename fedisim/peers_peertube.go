package fedisim

// PeerTube's peers lists, /api/v1/server/followers and /following: pages of
// follows, each with its state.

import (
	"bufio"
	"iter"
	"net/http"
	"strconv"
	"strings"
)

// PeerTubeRejectedHost is the name of the server whose follow host
// rejected (followers true: it asked to follow host; false: host asked to
// follow it): a valid name, never an instance of the world nor on any peers
// list, so a crawler that records one read follows that were rejected.
func PeerTubeRejectedHost(host string, followers bool) string {
	label, _, _ := strings.Cut(host, ".")
	side := "following"
	if followers {
		side = "follower"
	}
	return "rejected-" + side + "-" + label + "-x0.social"
}

// peerTubeEntries yields one side of a PeerTube node's follows, with their
// states: the peers list splits into even entries following this instance
// and odd ones followed by it, all accepted, and one rejected follow comes
// first on each side. state filters as PeerTube's state parameter does (""
// lists every state).
func peerTubeEntries(n *node, followers bool, state string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		if state == "" || state == "rejected" {
			if !yield(PeerTubeRejectedHost(n.inf.Host, followers), "rejected") {
				return
			}
		}
		if state != "" && state != "accepted" {
			return
		}
		want := 1
		if followers {
			want = 0
		}
		k := 0
		for h := range n.peers {
			if k%2 == want && !yield(h, "accepted") {
				return
			}
			k++
		}
	}
}

func writePeerTube(bw *bufio.Writer, n *node, followers bool, state string, start, count int) {
	total := 0
	var b []byte
	b = append(b, `{"data":[`...)
	written := 0
	for h, st := range peerTubeEntries(n, followers, state) {
		if total >= start && written < count {
			if written > 0 {
				b = append(b, ',')
			}
			follower, following := n.inf.Host, h
			if followers {
				follower, following = h, n.inf.Host
			}
			b = append(b, `{"id":`...)
			b = strconv.AppendInt(b, int64(total+1), 10)
			b = append(b, `,"follower":{"name":"peertube","host":`...)
			b = appendJSONString(b, follower)
			b = append(b, `},"following":{"name":"peertube","host":`...)
			b = appendJSONString(b, following)
			b = append(b, `},"state":"`...)
			b = append(b, st...)
			b = append(b, `","score":20,"createdAt":"2024-01-15T08:00:00.000Z","updatedAt":"2024-01-15T08:00:00.000Z"}`...)
			written++
		}
		total++
	}
	b = append(b, `],"total":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	b = append(b, '}')
	bw.Write(b)
}

func servePeerTube(w http.ResponseWriter, r *http.Request, n *node) {
	start, _ := strconv.Atoi(r.URL.Query().Get("start"))
	count := 15
	if c := r.URL.Query().Get("count"); c != "" {
		count, _ = strconv.Atoi(c)
	}
	if start < 0 || count < 0 || count > 100 {
		writeJSON(w, 400, []byte(`{"type":"about:blank","title":"Bad Request","status":400}`))
		return
	}
	state := r.URL.Query().Get("state")
	if state != "" && state != "accepted" && state != "pending" && state != "rejected" {
		writeJSON(w, 400, []byte(`{"type":"about:blank","title":"Bad Request","status":400}`))
		return
	}
	followers := r.URL.Path == pathPTFollowers
	streamJSON(w, func(bw *bufio.Writer) { writePeerTube(bw, n, followers, state, start, count) })
}
