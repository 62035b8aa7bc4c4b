package fedisim_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/fedisim"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// A captured instance answers each of its paths with its body byte for
// byte, everything else with 404, and is reachable whatever the day.
func TestCapturedInstancesServeTheirBytes(t *testing.T) {
	doc := []byte("{\n\t\"software\": {\"name\": \"akkoma\"}, \"openRegistrations\": \"FALSE\"}  ")
	s := testsupport.StartSim(t, fedisim.Config{Instances: 1, Captured: []fedisim.Captured{
		fedisim.CapturedNodeInfo("captured.social", "2.1", doc),
		{Host: "raw.example", Routes: map[string][]byte{"/.well-known/nodeinfo": []byte(`{"links":{}}`)}},
	}})
	s.SetDay(20)
	c := newClient(t, s)
	r := mustFetch(t, c, http.MethodGet, "https://captured.social/nodeinfo/2.1", nil)
	if r.status != 200 || !bytes.Equal(r.body, doc) || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("document: %d %q %q", r.status, r.body, r.header.Get("Content-Type"))
	}
	wk, err := decodeWellKnown(mustFetch(t, c, http.MethodGet, "https://captured.social/.well-known/nodeinfo", nil).body)
	if err != nil || len(wk.Links) != 1 || wk.Links[0].Rel != "http://nodeinfo.diaspora.software/ns/schema/2.1" ||
		wk.Links[0].Href != "https://captured.social/nodeinfo/2.1" {
		t.Errorf("discovery document: %+v, %v", wk, err)
	}
	if r := mustFetch(t, c, http.MethodGet, "https://raw.example/.well-known/nodeinfo", nil); string(r.body) != `{"links":{}}` {
		t.Errorf("raw discovery document: %q", r.body)
	}
	for _, u := range []string{"https://captured.social/robots.txt", "https://captured.social/api/v1/instance/peers", "https://raw.example/nodeinfo/2.1"} {
		if r := mustFetch(t, c, http.MethodGet, u, nil); r.status != 404 {
			t.Errorf("%s: %d, want 404", u, r.status)
		}
	}
	if r := mustFetch(t, c, http.MethodPost, "https://captured.social/nodeinfo/2.1", []byte("{}")); r.status != 404 {
		t.Errorf("POST: %d, want 404", r.status)
	}
}

func TestCapturedHostsMustBeDistinctAndLowerCase(t *testing.T) {
	for _, cs := range [][]fedisim.Captured{
		{{Host: "a.social"}, {Host: "a.social"}},
		{{Host: "A.social"}},
		{{Host: ""}},
	} {
		if _, err := fedisim.New(fedisim.Config{Instances: 1, Captured: cs}); err == nil {
			t.Errorf("%+v accepted", cs)
		}
	}
}
