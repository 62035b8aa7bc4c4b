package fedisim

// Misskey's peers list, POST /api/federation/instances: pages of instance
// objects, some of them blocked.

import (
	"bufio"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"strconv"
	"strings"
)

// misskeyBlocked is how many instances each simulated Misskey admin has
// blocked, at most: one ahead of the first peer, then one after every 50th.
const misskeyBlocked = 3

// MisskeyBlockedHost is the name of the k-th instance host's admin blocked
// (k from 0): a valid name, never an instance of the world nor on any peers
// list, so a crawler that records one read the blocklist.
func MisskeyBlockedHost(host string, k int) string {
	label, _, _ := strings.Cut(host, ".")
	return "blocked-" + label + "-x" + strconv.Itoa(k) + ".social"
}

// misskeyEntries yields a Misskey node's instances as federation/instances
// lists them: its peers with a few blocked instances among them. blocked
// filters as Misskey does: nil lists both, false only the unblocked, true
// only the blocked.
func misskeyEntries(n *node, blocked *bool) iter.Seq2[string, bool] {
	return func(yield func(string, bool) bool) {
		want := func(isBlocked bool) bool { return blocked == nil || *blocked == isBlocked }
		k, b := 0, 0
		for h := range n.peers {
			if k%50 == 0 && b < misskeyBlocked {
				if want(true) && !yield(MisskeyBlockedHost(n.inf.Host, b), true) {
					return
				}
				b++
			}
			if want(false) && !yield(h, false) {
				return
			}
			k++
		}
	}
}

func writeMisskey(bw *bufio.Writer, n *node, blocked *bool, offset, limit int) {
	var b []byte
	bw.WriteByte('[')
	k := 0
	for h, isBlocked := range misskeyEntries(n, blocked) {
		if k >= offset+limit {
			break
		}
		if k >= offset {
			if k > offset {
				bw.WriteByte(',')
			}
			b = append(b[:0], `{"id":"`...)
			b = strconv.AppendUint(b, mix(uint64(k)+uint64(len(h)))%1e12, 36)
			b = append(b, `","firstRetrievedAt":"2024-03-01T12:00:00.000Z","host":`...)
			b = appendJSONString(b, h)
			b = append(b, `,"usersCount":0,"notesCount":0,"followingCount":0,"followersCount":0,"isNotResponding":false,"isSuspended":false,"isBlocked":`...)
			b = strconv.AppendBool(b, isBlocked)
			b = append(b, `,"softwareName":null,"softwareVersion":null,"openRegistrations":null,"name":null,"description":null,"maintainerName":null,"maintainerEmail":null,"iconUrl":null,"faviconUrl":null,"themeColor":null,"infoUpdatedAt":null}`...)
			bw.Write(b)
		}
		k++
	}
	bw.WriteByte(']')
}

func serveMisskey(w http.ResponseWriter, r *http.Request, n *node) {
	if r.Method != http.MethodPost {
		writeJSON(w, 405, []byte(`{"error":{"message":"Unsupported HTTP method.","code":"METHOD_NOT_ALLOWED"}}`))
		return
	}
	var q struct {
		Limit   *int  `json:"limit"`
		Offset  int   `json:"offset"`
		Blocked *bool `json:"blocked"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&q); err != nil && err != io.EOF {
		writeJSON(w, 400, []byte(`{"error":{"message":"Invalid param.","code":"INVALID_PARAM"}}`))
		return
	}
	limit := 30
	if q.Limit != nil {
		limit = *q.Limit
	}
	if limit < 1 || limit > 100 || q.Offset < 0 {
		writeJSON(w, 400, []byte(`{"error":{"message":"Invalid param.","code":"INVALID_PARAM"}}`))
		return
	}
	streamJSON(w, func(bw *bufio.Writer) { writeMisskey(bw, n, q.Blocked, q.Offset, limit) })
}
