package sandbox

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/hostname"
)

// The wire format. Every message is one frame: a 4-byte big-endian length,
// then that many bytes, the first of which is the message type. A receiver
// checks the length against the limit for what it expects before it
// allocates anything, so a hostile peer cannot make it allocate more than one
// frame's limit, and allocates as the bytes arrive, so a length it does not
// send costs nothing.
//
// Orchestrator to checker:
//
//	'K' known table, once, first: uvarint count of hosts in the table, which
//	    is the sealed memory file on descriptor 3 (SharedKnown)
//	'Q' check request: JSON wireRequest; several may be under way, each
//	    answered by the result with its id, in any order
//
// Checker to orchestrator:
//
//	'H' hello, once, after confinement and the known table: JSON Report
//	'R' result: uvarint id, uvarint length + JSON observer.Check,
//	    uvarint length + JSON trace steps, uvarint bytes read,
//	    uvarint new peers over the per-list cap, uvarint n, n × (1-byte via kind, 1-byte length, host)
//
// Discoveries carry no time: theirs is the check's. Their via is either the
// checked host (kind 0) or "redirect" (kind 1), so a checker cannot
// attribute discoveries to another host.
const (
	msgKnown   = 'K'
	msgRequest = 'Q'
	msgHello   = 'H'
	msgResult  = 'R'

	// maxRequestFrame bounds every frame the orchestrator sends;
	// maxResultFrame bounds every frame a checker sends (the hello too,
	// which the orchestrator reads like a result), a result's discoveries
	// included.
	maxRequestFrame = 64 << 10
	maxResultFrame  = 4 << 20

	// frameChunk is the most readFrame allocates before the bytes arrive.
	frameChunk = 64 << 10

	maxTraceSteps  = 256
	maxStepText    = 1024 // runes
	maxPeersCount  = 1 << 40
	maxBytes       = 1 << 50
	maxPassIDBytes = 128
	maxLayers      = 32
)

// MaxDiscoveries is the most discoveries one result may carry (fewer if
// their names do not fit the 4 MiB result frame); a checker keeps the first
// ones and drops the rest, which are heard of again from other peers lists.
// Set crawl.Options.MaxNewPeers no higher.
const MaxDiscoveries = 200_000

var errFrameTooLarge = errors.New("frame too large")

// writeFrame writes one frame of type t.
func writeFrame(w io.Writer, t byte, payload []byte) error {
	buf := make([]byte, 5, 5+len(payload))
	binary.BigEndian.PutUint32(buf, uint32(len(payload)+1))
	buf[4] = t
	buf = append(buf, payload...)
	_, err := w.Write(buf)
	return err
}

// readFrame reads one frame of at most limit bytes (type included) and
// returns its type and payload.
func readFrame(r io.Reader, limit int) (byte, []byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 {
		return 0, nil, errors.New("empty frame")
	}
	if uint64(n) > uint64(limit) {
		return 0, nil, fmt.Errorf("%w: %d bytes, limit %d", errFrameTooLarge, n, limit)
	}
	// The buffer grows with what arrives, so a header that promises a full
	// frame and a peer that then sends nothing costs a few kilobytes, not
	// the limit.
	var buf bytes.Buffer
	buf.Grow(min(int(n), frameChunk))
	if _, err := buf.ReadFrom(io.LimitReader(r, int64(n))); err != nil {
		return 0, nil, err
	}
	if buf.Len() < int(n) {
		return 0, nil, io.ErrUnexpectedEOF
	}
	b := buf.Bytes()
	return b[0], b[1:], nil
}

// wireRequest is one check request.
type wireRequest struct {
	ID         uint64        `json:"id"`
	Host       observer.Host `json:"host"`
	FetchPeers bool          `json:"fetch_peers"`
	CheckedAt  time.Time     `json:"checked_at"`
	PassID     string        `json:"pass_id"`
	// The peers list's validators for a conditional request, and the
	// address the orchestrator holds for this check ("" for none).
	observer.PeersValidators
	Addr string `json:"addr,omitempty"`
}

// checkHeaderValue accepts "" or printable ASCII of at most limit bytes:
// what a validator may be on the way to a checker (the crawler drops one
// that is not well-formed beyond that before sending it).
func checkHeaderValue(name, v string, limit int) error {
	if len(v) > limit {
		return fmt.Errorf("%s of %d bytes, limit %d", name, len(v), limit)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return fmt.Errorf("%s is not printable ASCII", name)
		}
	}
	return nil
}

// addr is the request's pinned address; the zero value when none.
func (q wireRequest) addr() netip.AddrPort {
	a, _ := netip.ParseAddrPort(q.Addr)
	return a
}

func (q wireRequest) validate() error {
	if n, err := hostname.Normalize(string(q.Host)); err != nil || n != q.Host {
		return fmt.Errorf("request host %q is not a normalised host name", observer.CleanText(string(q.Host), 80))
	}
	if q.CheckedAt.IsZero() {
		return errors.New("request without checked_at")
	}
	if len(q.PassID) > maxPassIDBytes || !utf8.ValidString(q.PassID) {
		return errors.New("request pass_id too long or not UTF-8")
	}
	if err := checkHeaderValue("request peers_etag", q.PeersETag, observer.MaxETagBytes); err != nil {
		return err
	}
	if err := checkHeaderValue("request peers_last_modified", q.PeersLastModified, observer.MaxLastModifiedBytes); err != nil {
		return err
	}
	if q.Addr != "" {
		if a, err := netip.ParseAddrPort(q.Addr); err != nil || a.Port() == 0 {
			return fmt.Errorf("request addr %q is not an address and port", observer.CleanText(q.Addr, 60))
		}
	}
	return nil
}

func decodeRequest(payload []byte) (wireRequest, error) {
	var q wireRequest
	if err := strictJSON(payload, &q); err != nil {
		return q, fmt.Errorf("decode request: %w", err)
	}
	return q, q.validate()
}

// wireResult is a decoded result before validation.
type wireResult struct {
	ID    uint64
	Check observer.Check
	Steps []crawl.Step
	Bytes uint64
	// OverListCap is observer.Result.OverListCap.
	OverListCap uint64
	Disc        []wireDiscovery
	Frames      int
}

type wireDiscovery struct {
	Host     observer.Host
	Redirect bool
}

// encodeResult encodes r as a result payload. It keeps the frame within
// maxResultFrame by dropping discoveries beyond the budget (and the trace,
// if even that is not enough), and reports how many discoveries it dropped.
//
// The crawler cleans its own error texts and NodeInfo texts; the error is
// cleaned again here, as the trace is, for any other Checker, since the
// orchestrator refuses a result with an unclean text.
func encodeResult(id uint64, r observer.Result, t crawl.Trace) ([]byte, int, error) {
	r.Check.Error = observer.CleanText(r.Check.Error, observer.MaxErrorRunes)
	return encodeWire(id, r, sanitizeSteps(t.Steps))
}

// encodeWire encodes r and steps as they are; tests use it to forge what a
// compromised checker could send.
func encodeWire(id uint64, r observer.Result, t []crawl.Step) ([]byte, int, error) {
	check, err := json.Marshal(r.Check)
	if err != nil {
		return nil, 0, fmt.Errorf("encode check: %w", err)
	}
	steps, err := json.Marshal(t)
	if err != nil {
		return nil, 0, fmt.Errorf("encode trace: %w", err)
	}
	buf := make([]byte, 0, 64+len(check)+len(steps))
	buf = binary.AppendUvarint(buf, id)
	buf = binary.AppendUvarint(buf, uint64(len(check)))
	buf = append(buf, check...)
	if len(buf)+len(steps)+64 > maxResultFrame {
		steps = []byte("[]")
	}
	buf = binary.AppendUvarint(buf, uint64(len(steps)))
	buf = append(buf, steps...)
	buf = binary.AppendUvarint(buf, uint64(max(r.Bytes, 0)))
	buf = binary.AppendUvarint(buf, uint64(max(r.OverListCap, 0)))

	// Count what fits first: the count precedes the entries.
	budget := maxResultFrame - 1 - len(buf) - binary.MaxVarintLen64
	n := 0
	for _, d := range r.Discoveries {
		if n == MaxDiscoveries || budget < 2+len(d.Host) {
			break
		}
		budget -= 2 + len(d.Host)
		n++
	}
	buf = binary.AppendUvarint(buf, uint64(n))
	for _, d := range r.Discoveries[:n] {
		kind := byte(0)
		if d.Via == observer.ViaRedirect {
			kind = 1
		}
		buf = append(buf, kind, byte(min(len(d.Host), 255)))
		buf = append(buf, d.Host[:min(len(d.Host), 255)]...)
	}
	return buf, len(r.Discoveries) - n, nil
}

// decodeResult parses a result payload. It checks the structure only;
// validate checks the values.
func decodeResult(payload []byte) (wireResult, error) {
	var w wireResult
	rd := bytes.NewReader(payload)
	var err error
	if w.ID, err = binary.ReadUvarint(rd); err != nil {
		return w, fmt.Errorf("result id: %w", err)
	}
	check, err := readChunk(rd, maxRequestFrame)
	if err != nil {
		return w, fmt.Errorf("result check: %w", err)
	}
	if err := strictJSON(check, &w.Check); err != nil {
		return w, fmt.Errorf("result check: %w", err)
	}
	steps, err := readChunk(rd, maxResultFrame)
	if err != nil {
		return w, fmt.Errorf("result trace: %w", err)
	}
	if err := strictJSON(steps, &w.Steps); err != nil {
		return w, fmt.Errorf("result trace: %w", err)
	}
	if w.Bytes, err = binary.ReadUvarint(rd); err != nil {
		return w, fmt.Errorf("result bytes: %w", err)
	}
	if w.OverListCap, err = binary.ReadUvarint(rd); err != nil {
		return w, fmt.Errorf("result over list cap: %w", err)
	}
	n, err := binary.ReadUvarint(rd)
	if err != nil {
		return w, fmt.Errorf("result discoveries: %w", err)
	}
	// Each entry takes at least 3 bytes, which bounds n by the payload
	// before anything is allocated for it.
	if n > MaxDiscoveries || n > uint64(rd.Len()/3) {
		return w, fmt.Errorf("result discoveries: count %d too large", n)
	}
	w.Disc = make([]wireDiscovery, 0, n)
	for range n {
		kind, err := rd.ReadByte()
		if err != nil {
			return w, fmt.Errorf("result discovery: %w", io.ErrUnexpectedEOF)
		}
		if kind > 1 {
			return w, fmt.Errorf("result discovery: unknown via kind %d", kind)
		}
		l, err := rd.ReadByte()
		if err != nil || l == 0 || int(l) > rd.Len() {
			return w, errors.New("result discovery: bad host length")
		}
		h := make([]byte, l)
		rd.Read(h)
		w.Disc = append(w.Disc, wireDiscovery{Host: observer.Host(h), Redirect: kind == 1})
	}
	if rd.Len() != 0 {
		return w, fmt.Errorf("result: %d trailing bytes", rd.Len())
	}
	return w, nil
}

func readChunk(rd *bytes.Reader, limit int) ([]byte, error) {
	l, err := binary.ReadUvarint(rd)
	if err != nil {
		return nil, err
	}
	if l > uint64(limit) || l > uint64(rd.Len()) {
		return nil, fmt.Errorf("length %d out of bounds", l)
	}
	b := make([]byte, l)
	rd.Read(b)
	return b, nil
}

// strictJSON decodes exactly one JSON value with no unknown fields.
func strictJSON(b []byte, v any) error {
	if !utf8.Valid(b) {
		return errors.New("not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// expect is what the orchestrator knows about a check it asked for, which
// bounds what the result may say.
type expect struct {
	id      uint64
	req     wireRequest
	elapsed time.Duration // wall time from request to result, measured by the orchestrator
}

// validate turns a decoded result into a Result, or says which field is
// wrong. It accepts only what the in-process crawler can produce, as an
// honest checker sends it (encodeResult): every text exactly as
// observer.CleanText leaves it within its field's cap, so no control, bidi
// override, stray white space or over-long text reaches the data or the
// site from a compromised checker.
func (w wireResult) validate(e expect) (observer.Result, crawl.Trace, error) {
	c := w.Check
	fail := func(format string, args ...any) (observer.Result, crawl.Trace, error) {
		return observer.Result{}, crawl.Trace{}, fmt.Errorf(format, args...)
	}
	if w.ID != e.id {
		return fail("result id %d, want %d", w.ID, e.id)
	}
	if c.Host != e.req.Host {
		return fail("result for host %q, asked for %q", observer.CleanText(string(c.Host), 80), e.req.Host)
	}
	if !c.CheckedAt.Equal(e.req.CheckedAt) {
		return fail("checked_at %s, asked for %s", c.CheckedAt.Format(time.RFC3339Nano), e.req.CheckedAt.Format(time.RFC3339Nano))
	}
	c.CheckedAt = e.req.CheckedAt // same instant; keep the orchestrator's location
	if c.PassID != e.req.PassID {
		return fail("pass_id %q, asked for %q", observer.CleanText(c.PassID, 80), e.req.PassID)
	}
	if !c.Outcome.Valid() {
		return fail("unknown outcome %q", observer.CleanText(string(c.Outcome), 40))
	}
	if c.HTTPStatus != 0 && (c.HTTPStatus < 100 || c.HTTPStatus > 999) {
		return fail("http_status %d out of range", c.HTTPStatus)
	}
	texts := []struct {
		name  string
		s     string
		runes int
	}{
		{"error", c.Error, observer.MaxErrorRunes},
		{"software", c.Software, observer.MaxSoftwareRunes},
		{"version", c.Version, observer.MaxVersionRunes},
		{"name", c.Name, observer.MaxNameRunes},
		{"description", c.Description, observer.MaxDescriptionRunes},
	}
	for _, t := range texts {
		if err := checkText(t.s, t.runes); err != nil {
			return fail("%s: %v", t.name, err)
		}
	}
	// Clean (checked above) and lower-cased: what the crawler records.
	if c.Software != observer.CleanSoftware(c.Software) {
		return fail("software: not lower case")
	}
	if !crawl.RecordedSchemaVersion(c.NodeInfoVersion) {
		return fail("nodeinfo_version %q is not a schema version the crawler records", observer.CleanText(c.NodeInfoVersion, 20))
	}
	if !crawl.RecordedDocumentVersion(c.NodeInfoDocumentVersion) {
		return fail("nodeinfo_document_version %q is not a version text the crawler records", observer.CleanText(c.NodeInfoDocumentVersion, 20))
	}
	if !crawl.RecordedUnusableFields(c.UnusableFields) {
		return fail("unusable_fields %q is not a list of NodeInfo fields the crawler records", observer.CleanText(strings.Join(c.UnusableFields, ","), 200))
	}
	if c.MovedTo != "" {
		if n, err := hostname.Normalize(string(c.MovedTo)); err != nil || n != c.MovedTo {
			return fail("moved_to %q is not a normalised host name", observer.CleanText(string(c.MovedTo), 80))
		}
		if c.Outcome != observer.OutcomeMoved && c.Outcome != observer.OutcomeMoving {
			return fail("moved_to without a move (outcome %s)", c.Outcome)
		}
	}
	counts := []struct {
		name string
		p    *int64
	}{{"users", c.Users}, {"active_month", c.ActiveMonth}, {"active_halfyear", c.ActiveHalfyear}, {"local_posts", c.LocalPosts}}
	for _, n := range counts {
		if n.p != nil && (*n.p < 0 || *n.p > observer.MaxUsageCount) {
			return fail("%s %d out of range", n.name, *n.p)
		}
	}
	if c.PeersCount < 0 || c.PeersCount > maxPeersCount || c.NewPeersCount < 0 || c.NewPeersCount > c.PeersCount {
		return fail("peers counts %d/%d out of range", c.NewPeersCount, c.PeersCount)
	}
	if !c.PeersFetched && (c.PeersCount != 0 || c.NewPeersCount != 0) {
		return fail("peers counted but not fetched")
	}
	if c.PeersNotModified && (c.PeersFetched || (e.req.PeersValidators == (observer.PeersValidators{}))) {
		return fail("peers list not modified, but it was read or not asked for conditionally")
	}
	// The crawler asks for the peers list only when the request says so,
	// and only of a host it found alive (and not opted out); otherwise a
	// checker could report up to MaxDiscoveries peers in every check, not
	// once per peers interval, and for hosts that are not even alive.
	if (c.PeersFetched || c.PeersNotModified) && (!e.req.FetchPeers || c.Outcome != observer.OutcomeAlive) {
		return fail("peers list reported, but not asked for or host not alive (outcome %s)", c.Outcome)
	}
	// A checker reports the validators the crawler kept from the response.
	etagOK, lastModifiedOK := crawl.KeptValidators(c.PeersValidators)
	if !etagOK {
		return fail("peers_etag %q is not an entity tag the crawler keeps", observer.CleanText(c.PeersETag, 80))
	}
	if !lastModifiedOK {
		return fail("peers_last_modified %q is not an HTTP date the crawler keeps", observer.CleanText(c.PeersLastModified, 80))
	}
	// The check cannot have taken longer than the orchestrator waited
	// for it (a second of slack for clock granularity).
	if c.DurationMS < 0 || c.DurationMS > e.elapsed.Milliseconds()+1000 {
		return fail("duration_ms %d out of range (waited %d ms)", c.DurationMS, e.elapsed.Milliseconds())
	}
	if w.Bytes > maxBytes {
		return fail("bytes %d out of range", w.Bytes)
	}
	if w.OverListCap > maxPeersCount {
		return fail("over_list_cap %d out of range", w.OverListCap)
	}
	if w.OverListCap > 0 && !c.PeersFetched {
		return fail("over_list_cap without a list read")
	}
	if c.WireBytes < 0 || c.WireBytes > maxBytes {
		return fail("wire_bytes %d out of range", c.WireBytes)
	}
	if len(w.Disc) > MaxDiscoveries {
		return fail("%d discoveries, limit %d", len(w.Disc), MaxDiscoveries)
	}
	res := observer.Result{Check: c, Bytes: int64(w.Bytes), OverListCap: int64(w.OverListCap)}
	if len(w.Disc) > 0 {
		res.Discoveries = make([]observer.Discovery, 0, len(w.Disc))
	}
	peers := int64(0)
	for _, d := range w.Disc {
		if n, err := hostname.Normalize(string(d.Host)); err != nil || n != d.Host {
			return fail("discovery %q is not a normalised host name", observer.CleanText(string(d.Host), 80))
		}
		via := string(c.Host)
		if d.Redirect {
			// The crawler records a redirect target only for a
			// permanent move, and only that target.
			if c.Outcome != observer.OutcomeMoved || d.Host != c.MovedTo {
				return fail("redirect discovery %q without a move to it", d.Host)
			}
			via = observer.ViaRedirect
		} else {
			peers++
		}
		res.Discoveries = append(res.Discoveries, observer.Discovery{Host: d.Host, DiscoveredAt: c.CheckedAt, Via: via})
	}
	// The checked host's own discoveries are the new peers of a list it
	// read: no more of them than it counted (fewer if some were dropped
	// to fit the frame).
	if peers > 0 && (!c.PeersFetched || peers > c.NewPeersCount) {
		return fail("%d peer discoveries, but peers list read %t with %d new", peers, c.PeersFetched, c.NewPeersCount)
	}
	if len(w.Steps) > maxTraceSteps {
		return fail("trace of %d steps, limit %d", len(w.Steps), maxTraceSteps)
	}
	for i, s := range w.Steps {
		for _, t := range []string{s.Method, s.URL, s.Error, s.Note} {
			if err := checkText(t, maxStepText); err != nil {
				return fail("trace step %d: %v", i, err)
			}
		}
		if s.Status < 0 || s.Status > 999 || s.Bytes < 0 || s.Bytes > maxBytes {
			return fail("trace step %d: numbers out of range", i)
		}
	}
	return res, crawl.Trace{Steps: w.Steps}, nil
}

// checkText requires s to be exactly what observer.CleanText makes of it
// with cap max: valid UTF-8 of at most max runes, without control or bidi
// override characters, white space only as single inner spaces.
func checkText(s string, max int) error {
	if len(s) > 4*max {
		return fmt.Errorf("%d bytes, too long", len(s))
	}
	if !utf8.ValidString(s) {
		return errors.New("not valid UTF-8")
	}
	if utf8.RuneCountInString(s) > max {
		return fmt.Errorf("more than %d characters", max)
	}
	if observer.CleanText(s, max) != s {
		return errors.New("not clean text (control or bidi characters, or stray white space)")
	}
	return nil
}

// sanitizeSteps makes an honest checker's trace fit what the receiver
// accepts: at most maxTraceSteps steps, texts cleaned by observer.CleanText.
func sanitizeSteps(steps []crawl.Step) []crawl.Step {
	if len(steps) > maxTraceSteps {
		steps = append(steps[:maxTraceSteps-1:maxTraceSteps-1], crawl.Step{Note: fmt.Sprintf("(%d more steps dropped)", len(steps)-maxTraceSteps+1)})
	}
	out := make([]crawl.Step, len(steps))
	for i, s := range steps {
		s.Method = observer.CleanText(s.Method, maxStepText)
		s.URL = observer.CleanText(s.URL, maxStepText)
		s.Error = observer.CleanText(s.Error, maxStepText)
		s.Note = observer.CleanText(s.Note, maxStepText)
		s.Status = min(max(s.Status, 0), 999)
		s.Bytes = min(max(s.Bytes, 0), maxBytes)
		out[i] = s
	}
	return out
}
