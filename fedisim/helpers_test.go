package fedisim_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fediverse-observer/observer/fedisim"
)

// newClient returns a client that trusts the simulator's CA, sends every
// host to it (as the crawler's --connect-to does), does not follow
// redirects and does not decompress.
func newClient(tb testing.TB, s *fedisim.Sim) *http.Client {
	tb.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CAPEM()) {
		tb.Fatal("CA PEM does not parse")
	}
	addr := s.Addr()
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		},
		DisableCompression:  true,
		MaxIdleConnsPerHost: 8,
		MaxIdleConns:        256,
	}
	tb.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport:     tr,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// fetch performs one request and reads at most 64 MiB of the body.
func fetch(tb testing.TB, c *http.Client, method, url string, body []byte) (response, error) {
	tb.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return response{}, err
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

func mustFetch(tb testing.TB, c *http.Client, method, url string, body []byte) response {
	tb.Helper()
	r, err := fetch(tb, c, method, url, body)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, url, err)
	}
	return r
}

type wellKnown struct {
	Links []struct {
		Rel  string `json:"rel"`
		Href string `json:"href"`
	} `json:"links"`
}

// decodeWellKnown accepts links as an array or as a single object.
func decodeWellKnown(b []byte) (wellKnown, error) {
	var wk wellKnown
	if err := json.Unmarshal(b, &wk); err == nil {
		return wk, nil
	}
	var one struct {
		Links struct {
			Rel  string `json:"rel"`
			Href string `json:"href"`
		} `json:"links"`
	}
	if err := json.Unmarshal(b, &one); err != nil {
		return wk, fmt.Errorf("well-known nodeinfo: %w", err)
	}
	wk.Links = append(wk.Links, one.Links)
	return wk, nil
}

type nodeInfo struct {
	Version  string `json:"version"`
	Software struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"software"`
	OpenRegistrations bool `json:"openRegistrations"`
	Usage             struct {
		Users struct {
			Total          int64 `json:"total"`
			ActiveMonth    int64 `json:"activeMonth"`
			ActiveHalfyear int64 `json:"activeHalfyear"`
		} `json:"users"`
		LocalPosts int64 `json:"localPosts"`
	} `json:"usage"`
	Metadata struct {
		NodeName        string `json:"nodeName"`
		NodeDescription string `json:"nodeDescription"`
	} `json:"metadata"`
	Instance *struct {
		Name string `json:"name"`
	} `json:"instance"`
}

// getNodeInfo follows the well-known document's first link.
func getNodeInfo(tb testing.TB, c *http.Client, host string) (nodeInfo, string) {
	tb.Helper()
	r := mustFetch(tb, c, "GET", "https://"+host+"/.well-known/nodeinfo", nil)
	if r.status != 200 {
		tb.Fatalf("%s well-known: status %d", host, r.status)
	}
	wk, err := decodeWellKnown(r.body)
	if err != nil || len(wk.Links) == 0 {
		tb.Fatalf("%s well-known %s: %v", host, r.body, err)
	}
	link := wk.Links[0]
	if !strings.HasPrefix(link.Href, "https://"+host+"/") {
		tb.Fatalf("%s: href %q on another host", host, link.Href)
	}
	r = mustFetch(tb, c, "GET", link.Href, nil)
	if r.status != 200 {
		tb.Fatalf("%s %s: status %d", host, link.Href, r.status)
	}
	var ni nodeInfo
	if err := json.Unmarshal(r.body, &ni); err != nil {
		tb.Fatalf("%s nodeinfo %s: %v", host, r.body, err)
	}
	return ni, link.Rel
}

// getPeers reads host's whole peers list in its family's shape; status is
// the first non-200 status met, or 200.
func getPeers(tb testing.TB, c *http.Client, host string, family string) ([]string, int) {
	tb.Helper()
	base := "https://" + host
	switch family {
	case "misskey", "sharkey", "firefish", "iceshrimp":
		var out []string
		for offset := 0; ; offset += 100 {
			r := mustFetch(tb, c, "POST", base+"/api/federation/instances", fmt.Appendf(nil, `{"limit":100,"offset":%d,"blocked":false}`, offset))
			if r.status != 200 {
				return out, r.status
			}
			var page []struct {
				Host string `json:"host"`
			}
			if err := json.Unmarshal(r.body, &page); err != nil {
				tb.Fatalf("%s misskey peers: %v", host, err)
			}
			for _, p := range page {
				out = append(out, p.Host)
			}
			if len(page) < 100 {
				return out, 200
			}
		}
	case "mbin":
		r := mustFetch(tb, c, "GET", base+"/api/federated", nil)
		if r.status != 200 {
			return nil, r.status
		}
		var v struct {
			Instances []struct {
				Domain string `json:"domain"`
			} `json:"instances"`
		}
		if err := json.Unmarshal(r.body, &v); err != nil {
			tb.Fatalf("%s mbin peers: %v", host, err)
		}
		var out []string
		for _, i := range v.Instances {
			out = append(out, i.Domain)
		}
		return out, 200
	case "lemmy":
		r := mustFetch(tb, c, "GET", base+"/api/v3/federated_instances", nil)
		if r.status == 404 {
			// Lemmy 1.0 lists them only under /api/v4, a page at a time.
			return getLemmyV4Peers(tb, c, host)
		}
		if r.status != 200 {
			return nil, r.status
		}
		var v struct {
			FI struct {
				Linked  []json.RawMessage `json:"linked"`
				Allowed []json.RawMessage `json:"allowed"`
				Blocked []json.RawMessage `json:"blocked"`
			} `json:"federated_instances"`
		}
		if err := json.Unmarshal(r.body, &v); err != nil {
			tb.Fatalf("%s lemmy peers: %v", host, err)
		}
		var out []string
		for _, raw := range v.FI.Linked {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				out = append(out, s)
				continue
			}
			var o struct {
				Domain string `json:"domain"`
			}
			if err := json.Unmarshal(raw, &o); err != nil {
				tb.Fatalf("%s lemmy entry %s: %v", host, raw, err)
			}
			out = append(out, o.Domain)
		}
		return out, 200
	case "peertube":
		var out []string
		for _, which := range []string{"followers", "following"} {
			for start := 0; ; start += 100 {
				r := mustFetch(tb, c, "GET", base+"/api/v1/server/"+which+"?start="+strconv.Itoa(start)+"&count=100&state=accepted", nil)
				if r.status != 200 {
					return out, r.status
				}
				var page struct {
					Total int `json:"total"`
					Data  []struct {
						Follower  struct{ Host string } `json:"follower"`
						Following struct{ Host string } `json:"following"`
					} `json:"data"`
				}
				if err := json.Unmarshal(r.body, &page); err != nil {
					tb.Fatalf("%s peertube %s: %v", host, which, err)
				}
				for _, d := range page.Data {
					if which == "followers" {
						out = append(out, d.Follower.Host)
					} else {
						out = append(out, d.Following.Host)
					}
				}
				if start+100 >= page.Total {
					break
				}
			}
		}
		return out, 200
	}
	r := mustFetch(tb, c, "GET", base+"/api/v1/instance/peers", nil)
	if r.status != 200 {
		return nil, r.status
	}
	var out []string
	if err := json.Unmarshal(r.body, &out); err != nil {
		tb.Fatalf("%s mastodon peers: %v", host, err)
	}
	return out, 200
}

// getLemmyV4Peers reads Lemmy 1.0's linked instances, following the pages'
// cursors.
func getLemmyV4Peers(tb testing.TB, c *http.Client, host string) ([]string, int) {
	tb.Helper()
	var out []string
	cursor := ""
	for {
		u := "https://" + host + "/api/v4/federated_instances?kind=linked&limit=50"
		if cursor != "" {
			u += "&page_cursor=" + url.QueryEscape(cursor)
		}
		r := mustFetch(tb, c, "GET", u, nil)
		if r.status != 200 {
			return out, r.status
		}
		var page struct {
			Items []struct {
				Instance struct {
					Domain string `json:"domain"`
				} `json:"instance"`
				Blocked json.RawMessage `json:"blocked"`
			} `json:"items"`
			NextPage string `json:"next_page"`
		}
		if err := json.Unmarshal(r.body, &page); err != nil {
			tb.Fatalf("%s lemmy v4 peers: %v", host, err)
		}
		for _, it := range page.Items {
			// A view of an instance not blocked has no "blocked", or null.
			if it.Blocked != nil && string(it.Blocked) != "null" {
				tb.Fatalf("%s: kind=linked listed the blocked %s", host, it.Instance.Domain)
			}
			out = append(out, it.Instance.Domain)
		}
		if page.NextPage == "" {
			return out, 200
		}
		cursor = page.NextPage
	}
}
