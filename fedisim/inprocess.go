package fedisim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// nowKey is the context key of the simulated time an in-process request is
// answered at, a *servedAt (WithNow).
type nowKey struct{}

// servedAt is a time requests are answered at, with the spread model's
// last node served at it: a check's requests all go to one host at one
// time, and the node (its software, NodeInfo, peers list) is the same for
// each, so it is made once.
type servedAt struct {
	t    time.Time
	last atomic.Pointer[servedNode]
}

type servedNode struct {
	host string
	n    *node
}

// WithNow returns ctx carrying t: Transport answers the requests made with
// it as the spread model serves at t, whatever the simulator's clock
// (SetNow) says, so checks of one pass, each at its own time, can run at
// once. The day world answers for its current day regardless.
func WithNow(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, nowKey{}, &servedAt{t: t})
}

// servedAtOf is r's WithNow, or nil.
func servedAtOf(r *http.Request) *servedAt {
	at, _ := r.Context().Value(nowKey{}).(*servedAt)
	return at
}

// nowFor is the simulated time, as an offset from Day0, the spread model
// answers r at: WithNow's, else the simulator's clock.
func (s *Sim) nowFor(r *http.Request) time.Duration {
	if at := servedAtOf(r); at != nil {
		return at.t.Sub(s.cfg.Day0)
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
	host := canonicalHost(req.URL.Hostname())
	if !s.handshakes(host, s.nowFor(req)) {
		return nil, &net.OpError{Op: "remote error", Err: errHandshake}
	}
	// The handlers only read the request: a shallow copy with the fields
	// a server sets is what they would see.
	sr := *req
	if sr.Host == "" {
		sr.Host = req.URL.Host
	}
	sr.RequestURI, sr.RemoteAddr = req.URL.RequestURI(), "127.0.0.1:1"
	if sr.Body == nil {
		sr.Body = http.NoBody
	}
	rec := &recorder{header: http.Header{}}
	if aborted := serveCatching(s, rec, &sr); aborted {
		// The server drops the connection without an answer.
		return nil, fmt.Errorf("fedisim: %s closed the connection: %w", host, io.EOF)
	}
	if rec.status == 0 {
		rec.WriteHeader(http.StatusOK)
	}
	resp := &http.Response{
		Status:        strconv.Itoa(rec.status) + " " + http.StatusText(rec.status),
		StatusCode:    rec.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.sent,
		Body:          io.NopCloser(bytes.NewReader(rec.body)),
		ContentLength: int64(len(rec.body)),
		Request:       req,
	}
	return resp, nil
}

// recorder is the response a handler writes, as a server sends it: the
// headers as they were at WriteHeader, a Content-Type sniffed from the
// first bytes when the handler set none, and the body. It does what
// httptest.ResponseRecorder does for these handlers, without its copies.
type recorder struct {
	header, sent http.Header
	status       int
	body         []byte
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status != 0 {
		return
	}
	r.status, r.sent = code, r.header.Clone()
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		if _, ok := r.header["Content-Type"]; !ok && r.header.Get("Transfer-Encoding") == "" {
			r.header.Set("Content-Type", http.DetectContentType(b))
		}
		r.WriteHeader(http.StatusOK)
	}
	r.body = append(r.body, b...)
	return len(b), nil
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
