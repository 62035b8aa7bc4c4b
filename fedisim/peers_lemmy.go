package fedisim

// Lemmy's peers lists: /api/v3/federated_instances (linked, allowed and
// blocked, before 1.0) and 1.0's paged /api/v4/federated_instances.

import (
	"bufio"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"strings"
)

func writeLemmy(bw *bufio.Writer, n *node) {
	// Lemmy before 0.18 listed bare strings; later versions list objects.
	old := strings.HasPrefix(n.inf.Version, "0.17")
	var b []byte
	bw.WriteString(`{"federated_instances":{"linked":[`)
	k := 0
	var blocked []string
	for h := range n.peers {
		if k > 0 {
			bw.WriteByte(',')
		}
		b = appendLemmyInstance(b[:0], old, int64(k+1), h)
		bw.Write(b)
		if k%50 == 49 && len(blocked) < 3 {
			blocked = append(blocked, h)
		}
		k++
	}
	bw.WriteString(`],"allowed":[],"blocked":[`)
	for k, h := range blocked {
		if k > 0 {
			bw.WriteByte(',')
		}
		b = appendLemmyInstance(b[:0], old, int64(100000+k), h)
		bw.Write(b)
	}
	bw.WriteString(`]}}`)
}

// appendLemmyInstance appends one entry of a /api/v3 list: the bare host
// name (old: Lemmy before 0.18) or an instance object.
func appendLemmyInstance(b []byte, old bool, id int64, host string) []byte {
	if old {
		return appendJSONString(b, host)
	}
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"domain":`...)
	b = appendJSONString(b, host)
	return append(b, `,"published":"2023-07-01T10:00:00.000000Z","updated":null}`...)
}

// lemmyPageLimit is Lemmy's FETCH_LIMIT_MAX: a larger limit is refused.
const lemmyPageLimit = 50

// serveLemmyV4 answers Lemmy 1.0's GET /api/v4/federated_instances: one
// page of at most limit instance views (default 20, 1 to 50), from the
// place page_cursor names, with the next page's cursor while the page is
// full. kind=linked leaves out the blocked instances (LemmyBlockedHosts),
// which kind=all (the default) lists with a "blocked" object; allowed and
// blocked list only those.
func serveLemmyV4(w http.ResponseWriter, r *http.Request, n *node) {
	q := r.URL.Query()
	bad := func(kind string) {
		writeJSON(w, 400, []byte(`{"error":"`+kind+`"}`))
	}
	limit := 20
	if l := q.Get("limit"); l != "" {
		var err error
		if limit, err = strconv.Atoi(l); err != nil || limit < 1 || limit > lemmyPageLimit {
			bad("invalid_fetch_limit")
			return
		}
	}
	kind := q.Get("kind")
	if kind == "" {
		kind = "all"
	}
	if kind != "all" && kind != "linked" && kind != "allowed" && kind != "blocked" {
		bad("invalid_query")
		return
	}
	// The cursor is opaque to clients; here it is the place to start at.
	start := 0
	if c := q.Get("page_cursor"); c != "" {
		v, err := strconv.Atoi(strings.TrimPrefix(c, "I"))
		if !strings.HasPrefix(c, "I") || err != nil || v < 0 {
			bad("couldnt_parse_pagination_token")
			return
		}
		start = v
	}
	type entry struct {
		host    string
		blocked bool
	}
	entries := func(yield func(entry) bool) {
		if kind == "all" || kind == "linked" {
			for h := range n.peers {
				if !yield(entry{h, false}) {
					return
				}
			}
		}
		if kind == "all" || kind == "blocked" {
			for h := range LemmyBlockedHosts(n.inf.Host) {
				if !yield(entry{h, true}) {
					return
				}
			}
		}
	}
	streamJSON(w, func(bw *bufio.Writer) {
		var b []byte
		bw.WriteString(`{"items":[`)
		k, written := 0, 0
		for e := range entries {
			if written == limit {
				break
			}
			if k >= start {
				if written > 0 {
					bw.WriteByte(',')
				}
				b = append(b[:0], `{"instance":{"id":`...)
				b = strconv.AppendInt(b, int64(k+1), 10)
				b = append(b, `,"domain":`...)
				b = appendJSONString(b, e.host)
				b = append(b, `,"published_at":"2025-07-01T10:00:00.000000Z","software":"lemmy","version":"1.0.0"}`...)
				if e.blocked {
					b = append(b, `,"blocked":{"instance_id":`...)
					b = strconv.AppendInt(b, int64(k+1), 10)
					b = append(b, `,"published_at":"2025-08-01T10:00:00.000000Z"}`...)
				}
				b = append(b, '}')
				bw.Write(b)
				written++
			}
			k++
		}
		bw.WriteString(`]`)
		if written == limit {
			bw.WriteString(`,"next_page":"I` + strconv.Itoa(start+limit) + `"`)
		}
		bw.WriteString(`}`)
	})
}

// LemmyBlockedHosts are the instances a simulated Lemmy 1.0 admin blocked:
// names in no peers list, so one discovered can only have come from the
// blocked entries.
func LemmyBlockedHosts(host string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for k := range 3 {
			if !yield(fmt.Sprintf("lemmy-blocked-%d.%s", k, host)) {
				return
			}
		}
	}
}

func (s *Sim) serveLemmy(w http.ResponseWriter, r *http.Request, n *node) {
	if n.inf.PeersPath == pathLemmyPeersV4 {
		serveLemmyV4(w, r, n)
		return
	}
	if s.notModified(w, r, n) {
		return
	}
	streamJSON(w, func(bw *bufio.Writer) { writeLemmy(bw, n) })
}
