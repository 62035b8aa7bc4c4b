package sandbox

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/hostname"
)

var testAt = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func testExpect() expect {
	return expect{id: 7, req: wireRequest{ID: 7, Host: "a.social", CheckedAt: testAt, PassID: "p1", FetchPeers: true}, elapsed: 5 * time.Second}
}

func goodResult() (observer.Result, crawl.Trace) {
	users := int64(12)
	open := true
	r := observer.Result{
		Check: observer.Check{
			Host: "a.social", CheckedAt: testAt, Outcome: observer.OutcomeAlive, HTTPStatus: 200,
			Software: "mastodon", Version: "4.3.1", NodeInfoVersion: "2.0", NodeInfoDocumentVersion: "2.1", Users: &users, OpenRegistrations: &open,
			UnusableFields: []string{"usage.users.activeMonth", "openRegistrations"},
			Name:           "A <b>place</b> 🐘", Description: "for tests", PeersFetched: true, PeersCount: 3, NewPeersCount: 2,
			DurationMS: 120, PassID: "p1",
		},
		Discoveries: []observer.Discovery{
			{Host: "b.social", DiscoveredAt: testAt, Via: "a.social"},
			{Host: "xn--caf-dma.social", DiscoveredAt: testAt, Via: "a.social"},
		},
		Bytes: 4096,
	}
	return r, crawl.Trace{Steps: []crawl.Step{{Method: "GET", URL: "https://a.social/robots.txt", Status: 404}, {Note: "decided alive"}}}
}

func TestResultRoundTrip(t *testing.T) {
	r, tr := goodResult()
	buf, dropped, err := encodeResult(7, r, tr)
	if err != nil || dropped != 0 {
		t.Fatalf("encode: %v, dropped %d", err, dropped)
	}
	w, err := decodeResult(buf)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	got, gotTrace, err := w.validate(testExpect())
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, r)
	}
	if !reflect.DeepEqual(gotTrace, tr) {
		t.Errorf("trace round trip: %+v", gotTrace)
	}
	r.OverListCap = 5
	buf, _, _ = encodeResult(7, r, tr)
	if w, err := decodeResult(buf); err != nil || w.OverListCap != 5 {
		t.Errorf("over_list_cap round trip: %d, %v", w.OverListCap, err)
	}
}

// A conditional request's validators and pinned address reach the checker,
// and its 304 comes back; forged ones are refused before they are sent.
func TestRequestCarriesValidatorsAndAddress(t *testing.T) {
	q := wireRequest{ID: 1, Host: "a.social", CheckedAt: testAt, PassID: "p1", FetchPeers: true,
		PeersValidators: observer.PeersValidators{PeersETag: `W/"v1"`, PeersLastModified: "Mon, 05 Jan 2026 12:00:00 GMT"}, Addr: "192.0.2.7:443"}
	if err := q.validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
	if a := q.addr(); a.String() != "192.0.2.7:443" {
		t.Errorf("addr = %v", a)
	}
	r, tr := goodResult()
	r.Check.PeersFetched, r.Check.PeersCount, r.Check.NewPeersCount, r.Discoveries = false, 0, 0, nil
	r.Check.PeersNotModified, r.Check.PeersETag = true, q.PeersETag
	buf, _, err := encodeResult(7, r, tr)
	if err != nil {
		t.Fatal(err)
	}
	w, err := decodeResult(buf)
	if err != nil {
		t.Fatal(err)
	}
	e := testExpect()
	e.req = q
	e.req.ID = 7
	got, _, err := w.validate(e)
	if err != nil || !got.Check.PeersNotModified || got.Check.PeersETag != q.PeersETag {
		t.Fatalf("304 result: %+v, %v", got.Check, err)
	}
	for name, mod := range map[string]func(*wireRequest){
		"peers_etag":          func(q *wireRequest) { q.PeersETag = "\"x\"\n" },
		"peers_last_modified": func(q *wireRequest) { q.PeersLastModified = strings.Repeat("x", 65) },
		"addr":                func(q *wireRequest) { q.Addr = "evil.example:443" },
	} {
		bad := q
		mod(&bad)
		if err := bad.validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// Every forged field is rejected with a reason naming it.
func TestValidateRejects(t *testing.T) {
	cases := map[string]func(*observer.Result){
		"outcome":          func(r *observer.Result) { r.Check.Outcome = "hacked" },
		"asked for":        func(r *observer.Result) { r.Check.Host = "b.social" },
		"checked_at":       func(r *observer.Result) { r.Check.CheckedAt = testAt.Add(time.Second) },
		"pass_id":          func(r *observer.Result) { r.Check.PassID = "p2" },
		"http_status":      func(r *observer.Result) { r.Check.HTTPStatus = -1 },
		"name":             func(r *observer.Result) { r.Check.Name = strings.Repeat("x", 201) },
		"description":      func(r *observer.Result) { r.Check.Description = "a\x00b" },
		"software":         func(r *observer.Result) { r.Check.Software = strings.Repeat("é", 101) },
		"error":            func(r *observer.Result) { r.Check.Error = strings.Repeat("e", observer.MaxErrorRunes+1) },
		"moved_to":         func(r *observer.Result) { r.Check.MovedTo = "UPPER.social" },
		"users":            func(r *observer.Result) { n := int64(-1); r.Check.Users = &n },
		"local_posts":      func(r *observer.Result) { n := int64(observer.MaxUsageCount + 1); r.Check.LocalPosts = &n },
		"peers counts":     func(r *observer.Result) { r.Check.NewPeersCount = r.Check.PeersCount + 1 },
		"duration_ms":      func(r *observer.Result) { r.Check.DurationMS = 3_600_000 },
		"not a normalised": func(r *observer.Result) { r.Discoveries[0].Host = "10.0.0.1" },
		"redirect":         func(r *observer.Result) { r.Discoveries[0].Via = observer.ViaRedirect },
		"bytes":            func(r *observer.Result) { r.Bytes = maxBytes + 1 },
		"over_list_cap":    func(r *observer.Result) { r.OverListCap = maxPeersCount + 1 },
		"over_list_cap without a list": func(r *observer.Result) {
			r.Check.PeersFetched, r.Check.PeersCount, r.Check.NewPeersCount, r.Discoveries = false, 0, 0, nil
			r.OverListCap = 1
		},
		"peers_etag": func(r *observer.Result) { r.Check.PeersETag = "\"a\"\r\nSet-Cookie: x" },
		"peers_last_modified": func(r *observer.Result) {
			r.Check.PeersLastModified = strings.Repeat("M", observer.MaxLastModifiedBytes+1)
		},
		// The request carried no validators: a 304 cannot have happened.
		"not modified": func(r *observer.Result) {
			r.Check.PeersFetched, r.Check.PeersCount, r.Check.NewPeersCount, r.Discoveries = false, 0, 0, nil
			r.Check.PeersNotModified = true
		},
	}
	for name, mod := range cases {
		t.Run(name, func(t *testing.T) {
			r, tr := goodResult()
			mod(&r)
			err := forge(r, tr)
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("err = %v, want one naming %q", err, name)
			}
		})
	}
	// A forged trace: too long, or with numbers out of range.
	for name, mod := range map[string]func(*crawl.Trace){
		"trace of":             func(tr *crawl.Trace) { tr.Steps = make([]crawl.Step, maxTraceSteps+1) },
		"numbers out of range": func(tr *crawl.Trace) { tr.Steps[0].Bytes = -1 },
	} {
		t.Run(name, func(t *testing.T) {
			r, tr := goodResult()
			mod(&tr)
			if err := forge(r, tr); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("err = %v, want one naming %q", err, name)
			}
		})
	}
	// Asked conditionally, a list cannot be both not modified and read.
	conditional := testExpect()
	conditional.req.PeersETag = `"v1"`
	r, tr := goodResult()
	r.Check.PeersNotModified = true
	if _, _, err := forgeFor(conditional, r, tr); err == nil || !strings.Contains(err.Error(), "not modified") {
		t.Errorf("a list both not modified and read: err = %v", err)
	}
	r.Check.PeersFetched, r.Check.PeersCount, r.Check.NewPeersCount, r.Discoveries = false, 0, 0, nil
	if _, _, err := forgeFor(conditional, r, tr); err != nil {
		t.Errorf("a list not modified, asked conditionally: %v", err)
	}
	// A result for another request.
	r, tr = goodResult()
	buf, _, _ := encodeResult(8, r, tr)
	w, _ := decodeResult(buf)
	if _, _, err := w.validate(testExpect()); err == nil || !strings.Contains(err.Error(), "id") {
		t.Errorf("wrong id accepted: %v", err)
	}
}

// Discoveries credited to the checked host come only from a peers list the
// crawler read: one the request asked for, of a host found alive, and no
// more of them than the new peers it counted. Otherwise a compromised
// checker could add MaxDiscoveries hosts to every check it answers.
func TestValidateRefusesPeersNotRead(t *testing.T) {
	notAsked := testExpect()
	notAsked.req.FetchPeers = false
	r, tr := goodResult()
	if _, _, err := forgeFor(notAsked, r, tr); err == nil || !strings.Contains(err.Error(), "not asked for") {
		t.Errorf("peers list read though not asked for: err = %v", err)
	}
	for name, mod := range map[string]func(*observer.Result){
		// A list not read, or read by a host then reported dead.
		"not read": func(r *observer.Result) {
			r.Check.PeersFetched, r.Check.PeersCount, r.Check.NewPeersCount = false, 0, 0
		},
		"not alive": func(r *observer.Result) {
			r.Check.Outcome, r.Check.Software, r.Check.NodeInfoVersion = observer.OutcomeUnreachable, "", ""
		},
		// More new peers than the list counted.
		"more than counted": func(r *observer.Result) { r.Check.NewPeersCount = 1 },
	} {
		r, tr := goodResult()
		mod(&r)
		if err := forge(r, tr); err == nil {
			t.Errorf("%s: discoveries accepted: %+v", name, r.Check)
		}
	}
	// Not asked for the list, a check still reports a move's target.
	r, tr = goodResult()
	r.Check.PeersFetched, r.Check.PeersCount, r.Check.NewPeersCount = false, 0, 0
	r.Check.Outcome, r.Check.MovedTo = observer.OutcomeMoved, "b.social"
	r.Discoveries = []observer.Discovery{{Host: "b.social", DiscoveredAt: testAt, Via: observer.ViaRedirect}}
	if _, _, err := forgeFor(notAsked, r, tr); err != nil {
		t.Errorf("a move's target refused: %v", err)
	}
}

// forge encodes r and tr exactly as given, as a compromised checker could,
// and returns what validate makes of them.
func forge(r observer.Result, tr crawl.Trace) error {
	_, _, err := forgeFor(testExpect(), r, tr)
	return err
}

// forgeFor is forge for the request e.
func forgeFor(e expect, r observer.Result, tr crawl.Trace) (observer.Result, crawl.Trace, error) {
	buf, _, err := encodeWire(e.id, r, tr.Steps)
	if err != nil {
		return observer.Result{}, crawl.Trace{}, err
	}
	w, err := decodeResult(buf)
	if err != nil {
		return observer.Result{}, crawl.Trace{}, err
	}
	return w.validate(e)
}

// The orchestrator accepts only texts the crawler can produce: each one as
// observer.CleanText leaves it within its field's cap, the software name in
// lower case as well. Anything else (terminal escapes, bidi overrides,
// leading line breaks or tabs for spreadsheet formulas, line separators)
// would otherwise reach the data and the published site raw.
func TestValidateRefusesUncleanTexts(t *testing.T) {
	unclean := []string{
		"\x1b[2J\x07bell", "\u202Eevil\u202C", "\t=cmd|' /C calc'!A0", "\r\n=1+1", "line\u2028sep",
		"c1\u0085next", "bom\ufeff", "two  spaces", " leading", "trailing ", "nul\x00",
	}
	fields := map[string]func(r *observer.Result, tr *crawl.Trace, s string){
		"name":             func(r *observer.Result, _ *crawl.Trace, s string) { r.Check.Name = s },
		"description":      func(r *observer.Result, _ *crawl.Trace, s string) { r.Check.Description = s },
		"software":         func(r *observer.Result, _ *crawl.Trace, s string) { r.Check.Software = s },
		"version":          func(r *observer.Result, _ *crawl.Trace, s string) { r.Check.Version = s },
		"nodeinfo_version": func(r *observer.Result, _ *crawl.Trace, s string) { r.Check.NodeInfoVersion = s },
		"nodeinfo_document_version": func(r *observer.Result, _ *crawl.Trace, s string) {
			r.Check.NodeInfoDocumentVersion = s
		},
		"error":        func(r *observer.Result, _ *crawl.Trace, s string) { r.Check.Error = s },
		"trace step 0": func(_ *observer.Result, tr *crawl.Trace, s string) { tr.Steps[0].URL = s },
		"trace step 1": func(_ *observer.Result, tr *crawl.Trace, s string) { tr.Steps[1].Note = s },
	}
	for name, set := range fields {
		for _, s := range unclean {
			r, tr := goodResult()
			set(&r, &tr, s)
			if err := forge(r, tr); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s %q: err = %v, want one naming %s", name, s, err, name)
			}
		}
	}
	// Too long for the field's cap, by one rune.
	for name, n := range map[string]int{"name": observer.MaxNameRunes, "description": observer.MaxDescriptionRunes,
		"software": observer.MaxSoftwareRunes, "version": observer.MaxVersionRunes} {
		r, tr := goodResult()
		fields[name](&r, &tr, strings.Repeat("é", n+1))
		if err := forge(r, tr); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s of %d runes: err = %v", name, n+1, err)
		}
	}
	// The crawler lower-cases the software name; other texts keep their case.
	r, tr := goodResult()
	r.Check.Software = "UPPER Software"
	if err := forge(r, tr); err == nil || !strings.Contains(err.Error(), "software") {
		t.Errorf("upper-case software: err = %v", err)
	}
	r, tr = goodResult()
	r.Check.Name, r.Check.Version, r.Check.Description = "UPPER Software", "v4.3.1+Glitch", "Ünïcode, emoji 👩\u200d💻 and <b>markup</b>"
	r.Check.Error, tr.Steps[1].Note = "peers: HTTP 500", "decided alive"
	if err := forge(r, tr); err != nil {
		t.Errorf("clean texts refused: %v", err)
	}
}

// The other fields a checker echoes or reports hold what the crawler can
// produce: a NodeInfo schema version, an HTTP date as the peers list's
// Last-Modified, and a redirect target only for a move.
func TestValidateRefusesOtherForgeries(t *testing.T) {
	for name, mod := range map[string]func(*observer.Result){
		"nodeinfo_version":          func(r *observer.Result) { r.Check.NodeInfoVersion = "<b>2.0</b>" },
		"peers_last_modified":       func(r *observer.Result) { r.Check.PeersLastModified = "=HYPERLINK(1)" },
		"moved_to":                  func(r *observer.Result) { r.Check.MovedTo = "c.social" }, // outcome alive
		"nodeinfo_document_version": func(r *observer.Result) { r.Check.NodeInfoDocumentVersion = strings.Repeat("2", 21) },
	} {
		r, tr := goodResult()
		mod(&r)
		if err := forge(r, tr); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want one naming it", name, err)
		}
	}
	// Shaped like a schema version is not enough: the crawler records
	// only the versions it reads.
	r, tr := goodResult()
	r.Check.NodeInfoVersion = "9.9"
	if err := forge(r, tr); err == nil || !strings.Contains(err.Error(), "nodeinfo_version") {
		t.Errorf("unknown schema version: err = %v, want one naming nodeinfo_version", err)
	}
	// Only the field paths the parser names, each once, in its order.
	for _, fields := range [][]string{{"usage.users.total", "<script>"}, {"openRegistrations", "openRegistrations"},
		{"openRegistrations", "usage.users.total"}, {""}} {
		r, tr := goodResult()
		r.Check.UnusableFields = fields
		if err := forge(r, tr); err == nil || !strings.Contains(err.Error(), "unusable_fields") {
			t.Errorf("unusable fields %q: err = %v, want one naming unusable_fields", fields, err)
		}
	}
	r, tr = goodResult()
	r.Check.PeersLastModified, r.Check.PeersETag = "Mon, 05 Jan 2026 12:00:00 GMT", `W/"v1"`
	if err := forge(r, tr); err != nil {
		t.Errorf("HTTP date refused: %v", err)
	}
}

// An honest checker sends error and trace texts as the crawler wrote them,
// which may quote what a server said (a certificate's names, say);
// encodeResult cleans them so that the orchestrator accepts the result.
func TestEncodeCleansErrorTexts(t *testing.T) {
	r, tr := goodResult()
	r.Check.Error = "tls: certificate is valid for \x1b[2J\u202eevil.example, not a.social"
	tr.Steps[1].Note = "decided\r\nalive\x00"
	buf, _, err := encodeResult(7, r, tr)
	if err != nil {
		t.Fatal(err)
	}
	w, err := decodeResult(buf)
	if err != nil {
		t.Fatal(err)
	}
	got, gotTrace, err := w.validate(testExpect())
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	if got.Check.Error != "tls: certificate is valid for [2Jevil.example, not a.social" || gotTrace.Steps[1].Note != "decided alive" {
		t.Errorf("cleaned: error %q, note %q", got.Check.Error, gotTrace.Steps[1].Note)
	}
}

func TestReadFrameLimits(t *testing.T) {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], maxResultFrame+1)
	if _, _, err := readFrame(bytes.NewReader(hdr[:]), maxResultFrame); !errors.Is(err, errFrameTooLarge) {
		t.Errorf("oversized frame: %v", err)
	}
	if _, _, err := readFrame(bytes.NewReader([]byte{0, 0, 0, 0}), maxResultFrame); err == nil {
		t.Errorf("empty frame accepted")
	}
	if _, _, err := readFrame(bytes.NewReader([]byte{0, 0, 0, 9, 'R', 1}), maxResultFrame); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated frame: %v", err)
	}
	var b bytes.Buffer
	writeFrame(&b, msgHello, []byte(`{"layers":[]}`))
	if typ, p, err := readFrame(&b, maxRequestFrame); err != nil || typ != msgHello || string(p) != `{"layers":[]}` {
		t.Errorf("frame round trip: %q %q %v", typ, p, err)
	}
}

// A peer that promises a full frame and sends a few bytes must not make
// the reader allocate the promise; a frame at the limit still reads whole.
func TestReadFrameAllocatesWhatArrives(t *testing.T) {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], maxResultFrame)
	lying := append(hdr[:], 'R', 1, 2, 3)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, _, err := readFrame(bytes.NewReader(lying), maxResultFrame); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("short frame: %v", err)
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got >= maxResultFrame {
		t.Errorf("ten short frames allocated %d bytes, more than one full frame (%d)", got, maxResultFrame)
	}

	payload := bytes.Repeat([]byte("x"), maxResultFrame-1)
	var b bytes.Buffer
	writeFrame(&b, msgResult, payload)
	typ, p, err := readFrame(&b, maxResultFrame)
	if err != nil || typ != msgResult || !bytes.Equal(p, payload) {
		t.Fatalf("full frame: type %q, %d bytes, %v", typ, len(p), err)
	}
}

func TestKnownCount(t *testing.T) {
	if n, err := decodeKnownCount(binary.AppendUvarint(nil, 1_000_000)); err != nil || n != 1_000_000 {
		t.Fatalf("count 1000000: %d, %v", n, err)
	}
	for _, bad := range [][]byte{nil, {0x80}, {1, 0}, binary.AppendUvarint(nil, 1<<41)} {
		if _, err := decodeKnownCount(bad); err == nil {
			t.Errorf("count %x accepted", bad)
		}
	}
}

func TestEncodeTrimsTrace(t *testing.T) {
	r, _ := goodResult()
	steps := make([]crawl.Step, 1000)
	for i := range steps {
		steps[i] = crawl.Step{Note: strings.Repeat("n", 5000) + "\x00"}
	}
	buf, _, err := encodeResult(7, r, crawl.Trace{Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	w, err := decodeResult(buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, tr, err := w.validate(testExpect()); err != nil || len(tr.Steps) != maxTraceSteps {
		t.Errorf("trimmed trace: %d steps, %v", len(tr.Steps), err)
	}
}

// FuzzDecode feeds arbitrary bytes to the orchestrator's and the checker's
// decoders, frame by frame: nothing may panic, and whatever validates must
// hold the promised properties.
func FuzzDecode(f *testing.F) {
	r, tr := goodResult()
	res, _, _ := encodeResult(7, r, tr)
	var seed bytes.Buffer
	writeFrame(&seed, msgHello, []byte(`{"layers":[{"name":"seccomp","applied":true}]}`))
	writeFrame(&seed, msgResult, res)
	f.Add(seed.Bytes())
	moved := r
	moved.Check.Outcome, moved.Check.MovedTo = observer.OutcomeMoved, "c.social"
	moved.Discoveries = []observer.Discovery{{Host: "c.social", Via: observer.ViaRedirect}}
	res2, _, _ := encodeResult(7, moved, crawl.Trace{})
	f.Add(frame(msgResult, res2))
	f.Add(frame(msgKnown, []byte{2}))
	f.Add(frame(msgRequest, []byte(`{"id":1,"host":"a.social","fetch_peers":true,"checked_at":"2026-11-21T12:00:00Z","pass_id":"p"}`)))
	f.Add([]byte{0, 0, 0, 1, 'R'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})

	f.Fuzz(func(t *testing.T, data []byte) {
		rd := bytes.NewReader(data)
		for {
			typ, payload, err := readFrame(rd, maxResultFrame)
			if err != nil {
				return
			}
			switch typ {
			case msgResult:
				w, err := decodeResult(payload)
				if err != nil {
					continue
				}
				got, gotTrace, err := w.validate(testExpect())
				if err != nil {
					continue
				}
				checkAccepted(t, got, gotTrace)
				// What was accepted survives another trip unchanged.
				again, _, err := encodeResult(7, got, crawl.Trace{})
				if err != nil {
					t.Fatal(err)
				}
				w2, err := decodeResult(again)
				if err != nil {
					t.Fatalf("re-decode: %v", err)
				}
				got2, _, err := w2.validate(testExpect())
				if err != nil || !reflect.DeepEqual(got, got2) {
					t.Fatalf("re-validate: %v\n%+v\n%+v", err, got, got2)
				}
			case msgHello:
				var rep Report
				if strictJSON(payload, &rep) == nil && rep.validate() == nil {
					if len(rep.Layers) > maxLayers {
						t.Fatal("oversized report accepted")
					}
					for _, l := range rep.Layers {
						if observer.CleanText(l.Name, 40) != l.Name || observer.CleanText(l.Detail, 300) != l.Detail {
							t.Fatalf("report layer %q: %q accepted", l.Name, l.Detail)
						}
					}
				}
			case msgKnown:
				if n, err := decodeKnownCount(payload); err == nil && (n < 0 || n > 1<<40) {
					t.Fatalf("known count %d accepted", n)
				}
			case msgRequest:
				if q, err := decodeRequest(payload); err == nil {
					if n, err := hostname.Normalize(string(q.Host)); err != nil || n != q.Host {
						t.Fatalf("request host %q accepted", q.Host)
					}
				}
			}
		}
	})
}

func checkAccepted(t *testing.T, r observer.Result, tr crawl.Trace) {
	t.Helper()
	c := r.Check
	if !c.Outcome.Valid() || c.Host != "a.social" || !c.CheckedAt.Equal(testAt) {
		t.Fatalf("accepted check %+v", c)
	}
	// Texts are exactly what the crawler (and an honest checker) produce.
	for _, x := range []struct {
		s   string
		max int
	}{{c.Error, observer.MaxErrorRunes}, {c.Software, observer.MaxSoftwareRunes}, {c.Version, observer.MaxVersionRunes},
		{c.Name, observer.MaxNameRunes}, {c.Description, observer.MaxDescriptionRunes}} {
		if !utf8.ValidString(x.s) || observer.CleanText(x.s, x.max) != x.s {
			t.Fatalf("accepted text %q", x.s)
		}
	}
	if c.Software != strings.ToLower(c.Software) || !crawl.RecordedSchemaVersion(c.NodeInfoVersion) {
		t.Fatalf("accepted software %q, nodeinfo_version %q", c.Software, c.NodeInfoVersion)
	}
	if c.MovedTo != "" && c.Outcome != observer.OutcomeMoved && c.Outcome != observer.OutcomeMoving {
		t.Fatalf("accepted moved_to %q with outcome %s", c.MovedTo, c.Outcome)
	}
	if c.PeersLastModified != "" {
		if _, err := http.ParseTime(c.PeersLastModified); err != nil {
			t.Fatalf("accepted peers_last_modified %q", c.PeersLastModified)
		}
	}
	for _, st := range tr.Steps {
		for _, s := range []string{st.Method, st.URL, st.Error, st.Note} {
			if observer.CleanText(s, maxStepText) != s {
				t.Fatalf("accepted trace text %q", s)
			}
		}
	}
	for _, d := range r.Discoveries {
		if n, err := hostname.Normalize(string(d.Host)); err != nil || n != d.Host {
			t.Fatalf("accepted discovery %q", d.Host)
		}
		if d.Via != string(c.Host) && d.Via != observer.ViaRedirect || !d.DiscoveredAt.Equal(testAt) {
			t.Fatalf("accepted discovery %+v", d)
		}
	}
}

// The hello's confinement report comes from the untrusted checker and is
// logged: a layer's name and detail must be clean text within their caps.
func TestReportValidateRejects(t *testing.T) {
	for name, rep := range map[string]Report{
		"layers":       {Layers: make([]Layer, maxLayers+1)},
		"name":         {Layers: []Layer{{Name: "seccomp\x1b[2J", Detail: "on"}}},
		"layer detail": {Layers: []Layer{{Name: "seccomp", Detail: "on\u202e"}}},
		"long detail":  {Layers: []Layer{{Name: "seccomp", Detail: strings.Repeat("d", 301)}}},
	} {
		if err := rep.validate(); err == nil {
			t.Errorf("%s: report accepted", name)
		}
	}
	ok := Report{Layers: []Layer{{Name: "seccomp", Detail: "filter of 40 rules"}}}
	if err := ok.validate(); err != nil {
		t.Errorf("a clean report: %v", err)
	}
}

// TestValidateBoundaries pins validate's bounds at their edges, and the
// rules that tie fields together, each with one change to a good result:
// "" means it must be accepted, anything else names the refusal.
func TestValidateBoundaries(t *testing.T) {
	noPeers := func(r *observer.Result) {
		r.Check.PeersFetched, r.Check.PeersCount, r.Check.NewPeersCount, r.Discoveries = false, 0, 0, nil
	}
	moved := func(r *observer.Result, outcome observer.Outcome) {
		noPeers(r)
		r.Check.Outcome, r.Check.MovedTo = outcome, "b.social"
		r.Discoveries = []observer.Discovery{{Host: "b.social", DiscoveredAt: testAt, Via: observer.ViaRedirect}}
	}
	cases := []struct {
		name string
		mod  func(*observer.Result, *crawl.Trace)
		want string
	}{
		{"status 100", func(r *observer.Result, _ *crawl.Trace) { r.Check.HTTPStatus = 100 }, ""},
		{"status 99", func(r *observer.Result, _ *crawl.Trace) { r.Check.HTTPStatus = 99 }, "http_status"},
		{"status 999", func(r *observer.Result, _ *crawl.Trace) { r.Check.HTTPStatus = 999 }, ""},
		{"status 1000", func(r *observer.Result, _ *crawl.Trace) { r.Check.HTTPStatus = 1000 }, "http_status"},
		{"peers count at its cap", func(r *observer.Result, _ *crawl.Trace) { r.Check.PeersCount = maxPeersCount }, ""},
		{"peers count over its cap", func(r *observer.Result, _ *crawl.Trace) { r.Check.PeersCount = maxPeersCount + 1 }, "peers counts"},
		{"new peers negative", func(r *observer.Result, _ *crawl.Trace) { r.Check.NewPeersCount, r.Discoveries = -1, nil }, "peers counts"},
		{"peers counted, list not read", func(r *observer.Result, _ *crawl.Trace) {
			noPeers(r)
			r.Check.PeersCount = 3
		}, "not fetched"},
		{"duration at the wait plus a second", func(r *observer.Result, _ *crawl.Trace) { r.Check.DurationMS = 6000 }, ""},
		{"duration over it", func(r *observer.Result, _ *crawl.Trace) { r.Check.DurationMS = 6001 }, "duration_ms"},
		{"duration negative", func(r *observer.Result, _ *crawl.Trace) { r.Check.DurationMS = -1 }, "duration_ms"},
		// A check answered within the clock's granularity takes 0 ms.
		{"duration zero", func(r *observer.Result, _ *crawl.Trace) { r.Check.DurationMS = 0 }, ""},
		// Zero is a real count (a new instance with no users or posts yet),
		// which the crawler records; refusing it would fail the check.
		{"counts zero", func(r *observer.Result, _ *crawl.Trace) {
			var users, month, halfyear, posts int64
			r.Check.Users, r.Check.ActiveMonth, r.Check.ActiveHalfyear, r.Check.LocalPosts = &users, &month, &halfyear, &posts
		}, ""},
		{"counts at their cap", func(r *observer.Result, _ *crawl.Trace) {
			users, month, halfyear, posts := int64(observer.MaxUsageCount), int64(observer.MaxUsageCount), int64(observer.MaxUsageCount), int64(observer.MaxUsageCount)
			r.Check.Users, r.Check.ActiveMonth, r.Check.ActiveHalfyear, r.Check.LocalPosts = &users, &month, &halfyear, &posts
		}, ""},
		{"moved, redirect discovery", func(r *observer.Result, _ *crawl.Trace) { moved(r, observer.OutcomeMoved) }, ""},
		{"moving names its target too", func(r *observer.Result, _ *crawl.Trace) {
			moved(r, observer.OutcomeMoving)
			r.Discoveries = nil
		}, ""},
		// Only a permanent move's target is recorded as a discovery.
		{"moving, redirect discovery", func(r *observer.Result, _ *crawl.Trace) { moved(r, observer.OutcomeMoving) }, "redirect discovery"},
		{"redirect to another host", func(r *observer.Result, _ *crawl.Trace) {
			moved(r, observer.OutcomeMoved)
			r.Discoveries[0].Host = "c.social"
		}, "redirect discovery"},
		{"moved_to not normalised", func(r *observer.Result, _ *crawl.Trace) {
			moved(r, observer.OutcomeMoved)
			r.Check.MovedTo = "B.social"
		}, "moved_to"},
		{"discovery not normalised", func(r *observer.Result, _ *crawl.Trace) { r.Discoveries[0].Host = "B.social" }, "not a normalised"},
		{"step status 999", func(_ *observer.Result, tr *crawl.Trace) { tr.Steps[0].Status = 999 }, ""},
		{"step status 1000", func(_ *observer.Result, tr *crawl.Trace) { tr.Steps[0].Status = 1000 }, "numbers out of range"},
		{"step bytes at the cap", func(_ *observer.Result, tr *crawl.Trace) { tr.Steps[0].Bytes = maxBytes }, ""},
		{"step bytes over it", func(_ *observer.Result, tr *crawl.Trace) { tr.Steps[0].Bytes = maxBytes + 1 }, "numbers out of range"},
		{"step method unclean", func(_ *observer.Result, tr *crawl.Trace) { tr.Steps[0].Method = "GET\r\n" }, "trace step 0"},
		{"step error unclean", func(_ *observer.Result, tr *crawl.Trace) { tr.Steps[0].Error = "\u202eevil" }, "trace step 0"},
	}
	for _, tc := range cases {
		r, tr := goodResult()
		tc.mod(&r, &tr)
		_, _, err := forgeFor(testExpect(), r, tr)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want one naming %q", tc.name, err, tc.want)
		}
	}

	// A 304 needs a conditional request (either validator will do), for
	// a peers list the request asked for.
	r, tr := goodResult()
	r.Check.PeersFetched, r.Check.PeersCount, r.Check.NewPeersCount, r.Discoveries = false, 0, 0, nil
	r.Check.PeersNotModified = true
	lastModified := testExpect()
	lastModified.req.PeersLastModified = "Mon, 05 Jan 2026 12:00:00 GMT"
	if _, _, err := forgeFor(lastModified, r, tr); err != nil {
		t.Errorf("not modified, asked with Last-Modified only: %v", err)
	}
	lastModified.req.FetchPeers = false
	if _, _, err := forgeFor(lastModified, r, tr); err == nil || !strings.Contains(err.Error(), "not asked for") {
		t.Errorf("not modified, list not asked for: err = %v", err)
	}
}

// TestRequestValidateRejects: what the checker refuses in a request before
// acting on it.
func TestRequestValidateRejects(t *testing.T) {
	good := wireRequest{ID: 1, Host: "a.social", CheckedAt: testAt, PassID: strings.Repeat("p", maxPassIDBytes),
		PeersValidators: observer.PeersValidators{PeersETag: `"v1"`}, Addr: "192.0.2.7:443"}
	if err := good.validate(); err != nil {
		t.Fatalf("good request (pass_id at its cap): %v", err)
	}
	for _, tc := range []struct {
		name string // what the error must name
		mod  func(*wireRequest)
	}{
		{"host", func(q *wireRequest) { q.Host = "A.social" }},
		{"checked_at", func(q *wireRequest) { q.CheckedAt = time.Time{} }},
		{"pass_id", func(q *wireRequest) { q.PassID = strings.Repeat("p", maxPassIDBytes+1) }},
		{"pass_id", func(q *wireRequest) { q.PassID = "p\xff" }},
		{"peers_etag", func(q *wireRequest) { q.PeersETag = "\"v1\x7f\"" }}, // DEL is not printable
		{"addr", func(q *wireRequest) { q.Addr = "192.0.2.7:0" }},
	} {
		bad := good
		tc.mod(&bad)
		if err := bad.validate(); err == nil || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s %+v: err = %v", tc.name, bad, err)
		}
	}
}

// rawResult builds a result payload around check's JSON as given, with an
// empty trace and no discoveries, then tail.
func rawResult(check []byte, tail ...byte) []byte {
	buf := binary.AppendUvarint(nil, 7)
	buf = binary.AppendUvarint(buf, uint64(len(check)))
	buf = append(buf, check...)
	buf = binary.AppendUvarint(buf, 2)
	buf = append(buf, "[]"...)
	buf = binary.AppendUvarint(buf, 0) // bytes
	buf = binary.AppendUvarint(buf, 0) // over the list cap
	return append(buf, tail...)
}

// TestDecodeResultStructure: decodeResult takes exactly the encoding an
// honest checker writes, and nothing looser.
func TestDecodeResultStructure(t *testing.T) {
	r, _ := goodResult()
	check, err := json.Marshal(r.Check)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeResult(rawResult(check, 0)); err != nil {
		t.Fatalf("good payload: %v", err)
	}
	for name, payload := range map[string][]byte{
		"trailing byte":        rawResult(check, 0, 0),
		"via kind 2":           rawResult(check, 1, 2, 8, 'b', '.', 's', 'o', 'c', 'i', 'a', 'l'),
		"unknown check field":  rawResult(append([]byte(`{"extra":1,`), check[1:]...), 0),
		"check then more JSON": rawResult(append(append([]byte{}, check...), " {}"...), 0),
		"check not UTF-8":      rawResult(bytes.Replace(check, []byte("for tests"), []byte("for \xff tests"), 1), 0),
		"check over 64 KiB":    rawResult(append(append([]byte{}, check...), bytes.Repeat([]byte(" "), maxRequestFrame)...), 0),
	} {
		if w, err := decodeResult(payload); err == nil {
			t.Errorf("%s: accepted %+v", name, w)
		}
	}
	// A count the payload cannot hold is refused before anything is
	// allocated for it.
	huge := rawResult(check, binary.AppendUvarint(nil, MaxDiscoveries)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, err := decodeResult(huge); err == nil {
			t.Fatal("a count of MaxDiscoveries with no entries accepted")
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("ten results promising %d discoveries allocated %d KiB", MaxDiscoveries, got>>10)
	}
}
