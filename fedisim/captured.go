package fedisim

import (
	"fmt"
	"net/http"
	"strings"
)

// Captured is an instance served from documents a real server sent
// (the corpus in crawl/internal/parse/testdata/corpus), so that a crawl
// meets them exactly as captured: each path answers its body byte for byte,
// as JSON; any other path (robots.txt and the peers lists included, unless
// given) answers 404.
type Captured struct {
	Host   string            // the host it answers as (lower case)
	Routes map[string][]byte // path → body
}

// CapturedNodeInfo is a Captured instance whose only captured document is a
// NodeInfo document, served at /nodeinfo/<schema>: fedisim writes the
// discovery document that links to it, on host, for that schema version.
func CapturedNodeInfo(host, schema string, doc []byte) Captured {
	path := "/nodeinfo/" + schema
	wellKnown := fmt.Sprintf(`{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/%s","href":"https://%s%s"}]}`, schema, host, path)
	return Captured{Host: host, Routes: map[string][]byte{"/.well-known/nodeinfo": []byte(wellKnown), path: doc}}
}

// capturedHosts indexes cfg.Captured by host; a host given twice, or one
// that is not lower case, is a configuration error.
func capturedHosts(cs []Captured) (map[string]Captured, error) {
	m := make(map[string]Captured, len(cs))
	for _, c := range cs {
		if c.Host == "" || c.Host != strings.ToLower(c.Host) {
			return nil, fmt.Errorf("fedisim: captured host %q is not a lower-case host name", c.Host)
		}
		if _, dup := m[c.Host]; dup {
			return nil, fmt.Errorf("fedisim: captured host %s given twice", c.Host)
		}
		m[c.Host] = c
	}
	return m, nil
}

func (c Captured) serve(w http.ResponseWriter, r *http.Request) {
	body, ok := c.Routes[r.URL.Path]
	if !ok || r.Method != http.MethodGet {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// isCaptured reports whether host is served from captured documents.
func (s *Sim) isCaptured(host string) bool {
	_, ok := s.captured[host]
	return ok
}
