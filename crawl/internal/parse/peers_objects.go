package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The other families' peers lists are arrays of objects. They are decoded
// as a token stream, one element at a time, behind DepthReader, so memory
// stays bounded by the largest single element rather than the whole list.

// MisskeyPage reads one page of Misskey's POST /api/federation/instances: an
// array of instance objects, each with a "host". fn gets each host (nil when
// an entry has none); n is the number of entries on the page, which tells
// the caller whether another page may follow.
//
// Entries with "isBlocked": true are instances the admin blocked: they are
// counted in n (they take a place on the page) but fn never gets them. The
// crawler asks for "blocked": false, which Misskey honours, but a fork that
// ignores the parameter must not turn a blocklist into discoveries.
func MisskeyPage(r io.Reader, fn func(host []byte)) (n int, err error) {
	dec := json.NewDecoder(DepthReader(r))
	if err := expectDelim(dec, '['); err != nil {
		return 0, fmt.Errorf("misskey instances: %w", err)
	}
	for dec.More() {
		// Decoded in place, not read as a RawMessage and unmarshalled
		// again: a page's objects are mostly fields nobody reads, and
		// this is the one scan of them. An element that is not an object
		// is a type error, after the decoder has consumed it whole.
		var inst struct {
			Host      json.RawMessage `json:"host"`
			IsBlocked json.RawMessage `json:"isBlocked"`
		}
		err := dec.Decode(&inst)
		var typ *json.UnmarshalTypeError
		if err != nil && !errors.As(err, &typ) {
			return n, fmt.Errorf("misskey instances: %w", shortJSONError(err))
		}
		n++
		if err != nil {
			fn(nil)
			continue
		}
		if string(bytes.TrimSpace(inst.IsBlocked)) == "true" {
			continue
		}
		fn(stringBytes(inst.Host))
	}
	if err := expectEnd(dec, ']'); err != nil {
		return n, fmt.Errorf("misskey instances: %w", err)
	}
	return n, nil
}

// Lemmy reads GET /api/v3/federated_instances and passes on the domains of
// federated_instances.linked and .allowed, never .blocked. Entries are
// objects with "domain" (Lemmy 0.18 and later) or plain strings (earlier).
func Lemmy(r io.Reader, fn func(host []byte)) error {
	dec := json.NewDecoder(DepthReader(r))
	err := objectFields(dec, func(key string) error {
		if key != "federated_instances" {
			return skipValue(dec)
		}
		return objectFields(dec, func(key string) error {
			if key != "linked" && key != "allowed" {
				return skipValue(dec)
			}
			return arrayElements(dec, func(el json.RawMessage) {
				if len(el) > 0 && el[0] == '"' {
					fn(stringBytes(el))
					return
				}
				fn(domainOf(el))
			})
		})
	})
	if err == nil {
		err = expectEOF(dec)
	}
	if err != nil {
		return fmt.Errorf("lemmy federated instances: %w", err)
	}
	return nil
}

// MaxCursor is the longest next-page cursor LemmyPage passes on: the
// crawler sends it back in a query string, and Lemmy's own are a few dozen
// bytes of base64.
const MaxCursor = 1024

// LemmyPage reads one page of Lemmy 1.0's GET /api/v4/federated_instances:
// {"items": [...], "next_page": "…", "prev_page": "…"}, each element an
// instance view naming the instance in instance.domain (Lemmy's 1.0
// alphas called the array "federated_instances"). fn gets each domain (nil
// for an element without one); n is the number of elements, and next the
// cursor of the page after it ("" when there is none).
//
// Elements with a non-null "blocked" are instances the admin blocked: they
// are counted in n but fn never gets them. The crawler asks for
// kind=linked, which leaves them out, but a server that ignores the
// parameter must not turn a blocklist into discoveries.
func LemmyPage(r io.Reader, fn func(host []byte)) (n int, next string, err error) {
	dec := json.NewDecoder(DepthReader(r))
	err = objectFields(dec, func(key string) error {
		switch key {
		case "next_page":
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return shortJSONError(err)
			}
			cursor := stringBytes(raw)
			if len(cursor) > MaxCursor {
				return fmt.Errorf("next_page cursor of %d bytes, over %d", len(cursor), MaxCursor)
			}
			next = string(cursor)
			return nil
		case "items", "federated_instances":
			return arrayElements(dec, func(el json.RawMessage) {
				n++
				var view struct {
					Instance json.RawMessage `json:"instance"`
					Blocked  json.RawMessage `json:"blocked"`
				}
				if !isObject(el) || json.Unmarshal(el, &view) != nil {
					fn(nil)
					return
				}
				if b := bytes.TrimSpace(view.Blocked); len(b) > 0 && string(b) != "null" {
					return
				}
				fn(domainOf(view.Instance))
			})
		}
		return skipValue(dec)
	})
	if err == nil {
		err = expectEOF(dec)
	}
	if err != nil {
		return n, "", fmt.Errorf("lemmy federated instances: %w", err)
	}
	return n, next, nil
}

// Mbin reads Mbin's (and kbin's) GET /api/federated: {"instances": [...]},
// each element an object naming the instance in "domain". It passes on
// every domain (nil for an element without one). /api/defederated has the
// same shape but is Mbin's blocklist; nothing reads it.
func Mbin(r io.Reader, fn func(host []byte)) error {
	dec := json.NewDecoder(DepthReader(r))
	err := objectFields(dec, func(key string) error {
		if key != "instances" {
			return skipValue(dec)
		}
		return arrayElements(dec, func(el json.RawMessage) { fn(domainOf(el)) })
	})
	if err == nil {
		err = expectEOF(dec)
	}
	if err != nil {
		return fmt.Errorf("mbin federated instances: %w", err)
	}
	return nil
}

// domainOf is the "domain" of an instance object, as Lemmy and Mbin list
// them, or nil for anything else.
func domainOf(el json.RawMessage) []byte {
	var inst struct {
		Domain json.RawMessage `json:"domain"`
	}
	if !isObject(el) || json.Unmarshal(el, &inst) != nil {
		return nil
	}
	return stringBytes(inst.Domain)
}

// PeerTubePage reads one page of GET /api/v1/server/followers or
// /api/v1/server/following: {"total": N, "data": [...]}, where each element
// names the other server in follower.host or following.host; side picks
// which ("follower" or "following"). It returns the page's entry count and
// the announced total.
func PeerTubePage(r io.Reader, side string, fn func(host []byte)) (n int, total int64, err error) {
	dec := json.NewDecoder(DepthReader(r))
	err = objectFields(dec, func(key string) error {
		switch key {
		case "total":
			var t json.RawMessage
			if err := dec.Decode(&t); err != nil {
				return err
			}
			if c, ok := parseCount(t, false); ok {
				total = *c
			}
			return nil
		case "data":
			return arrayElements(dec, func(el json.RawMessage) {
				n++
				var follow map[string]json.RawMessage
				var actor struct {
					Host json.RawMessage `json:"host"`
				}
				if !isObject(el) || json.Unmarshal(el, &follow) != nil ||
					!isObject(follow[side]) || json.Unmarshal(follow[side], &actor) != nil {
					fn(nil)
					return
				}
				fn(stringBytes(actor.Host))
			})
		}
		return skipValue(dec)
	})
	if err == nil {
		err = expectEOF(dec)
	}
	if err != nil {
		return n, total, fmt.Errorf("peertube %s: %w", side, err)
	}
	return n, total, nil
}

var errShape = errors.New("unexpected JSON shape")

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return shortJSONError(err)
	}
	if tok != d {
		return errShape
	}
	return nil
}

func expectEnd(dec *json.Decoder, d json.Delim) error {
	if err := expectDelim(dec, d); err != nil {
		return err
	}
	return expectEOF(dec)
}

func expectEOF(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		if err != nil {
			return shortJSONError(err)
		}
		return errors.New("trailing data")
	}
	return nil
}

// objectFields reads an object (or null), calling field for each key with
// the decoder positioned at its value; field must consume the value.
func objectFields(dec *json.Decoder, field func(key string) error) error {
	tok, err := dec.Token()
	if err != nil {
		return shortJSONError(err)
	}
	if tok == nil {
		return nil
	}
	if tok != json.Delim('{') {
		return errShape
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return shortJSONError(err)
		}
		key, ok := tok.(string)
		if !ok {
			return errShape
		}
		if err := field(key); err != nil {
			return err
		}
	}
	return expectDelim(dec, '}')
}

// arrayElements reads an array (or null), one element at a time.
func arrayElements(dec *json.Decoder, el func(json.RawMessage)) error {
	tok, err := dec.Token()
	if err != nil {
		return shortJSONError(err)
	}
	if tok == nil {
		return nil
	}
	if tok != json.Delim('[') {
		return errShape
	}
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return shortJSONError(err)
		}
		el(raw)
	}
	return expectDelim(dec, ']')
}

// skipValue consumes one value token by token, so a large unwanted value
// (Lemmy's blocked list) is never held in memory whole.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return shortJSONError(err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// stringBytes returns the decoded value of a JSON string, or nil. The
// value may share raw's memory.
func stringBytes(raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return nil
	}
	if s, ok := plainString(raw); ok {
		return s
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return []byte(s)
}

// plainString is the value of a valid JSON string (quotes included) that
// is printable ASCII without escapes, as host names are: the common case,
// whose value is its bytes, with nothing to unquote or replace.
func plainString(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return nil, false
	}
	s := raw[1 : len(raw)-1]
	for _, c := range s {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return nil, false
		}
	}
	return s, true
}
