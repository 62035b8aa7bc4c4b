package fedisim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
)

// nowKey is the context key of the simulated time an in-process request is
// answered at (WithNow).
type nowKey struct{}

// WithNow returns ctx carrying t: Transport answers the requests made with
// it as the spread model serves at t, whatever the simulator's clock
// (SetNow) says, so checks of one pass, each at its own time, can run at
// once. The day world answers for its current day regardless.
func WithNow(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, nowKey{}, t)
}

// nowFor is the simulated time, as an offset from Day0, the spread model
// answers r at: WithNow's, else the simulator's clock.
func (s *Sim) nowFor(r *http.Request) time.Duration {
	if t, ok := r.Context().Value(nowKey{}).(time.Time); ok {
		return t.Sub(s.cfg.Day0)
	}
	return s.now()
}

// errHandshake is how a client sees the simulator refusing a handshake
// (getCertificate's error): crypto/tls reports the internal_error alert
// the server sends as a remote error.
var errHandshake = errors.New("tls: internal error")

// Transport answers requests in this process as the simulator answers them
// over the network, without sockets, TLS or a listener: what a host serves,
// its headers and its bodies are ServeHTTP's own, and a host the simulator
// would refuse a handshake (not born, dead, never a server) fails as that
// handshake does. Its requests count in Stats as served ones do; the
// hostile hosts' faults below HTTP (certificates, slow connections) are not
// reproduced. With the spread model, crawl.Options.Transport set to it and
// each check's context from WithNow, the observer's crawler runs over a
// million instances in-process (internal/testsupport.ModelChecker).
func (s *Sim) Transport() http.RoundTripper { return inProcess{s} }

type inProcess struct{ s *Sim }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	s := t.s
	host := strings.ToLower(strings.TrimSuffix(req.URL.Hostname(), "."))
	if !s.handshakes(host, s.nowFor(req)) {
		return nil, &net.OpError{Op: "remote error", Err: errHandshake}
	}
	sr := req.Clone(req.Context())
	if sr.Host == "" {
		sr.Host = req.URL.Host
	}
	sr.RequestURI, sr.RemoteAddr = req.URL.RequestURI(), "127.0.0.1:1"
	if sr.Body == nil {
		sr.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	if aborted := serveCatching(s, rec, sr); aborted {
		// The server drops the connection without an answer.
		return nil, fmt.Errorf("fedisim: %s closed the connection: %w", host, io.EOF)
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// serveCatching serves r into w and reports whether the handler dropped
// the connection (http.ErrAbortHandler), as net/http's server would.
func serveCatching(s *Sim, w http.ResponseWriter, r *http.Request) (aborted bool) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			aborted = true
		}
	}()
	s.ServeHTTP(w, r)
	return false
}
