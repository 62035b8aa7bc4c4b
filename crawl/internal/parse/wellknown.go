package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// SchemaVersions are the NodeInfo schema versions understood, lowest first.
var SchemaVersions = []string{"1.0", "1.1", "2.0", "2.1", "2.2"}

const schemaPrefix = "nodeinfo.diaspora.software/ns/schema/"

// Link is the NodeInfo document a discovery document points to.
type Link struct {
	Version string // schema version, one of SchemaVersions
	Href    string // as given; the caller checks scheme and host
}

// ParseWellKnown reads /.well-known/nodeinfo (a JRD) and returns its links
// to supported schema versions in order of preference: highest version
// first, and for one version in the document's order. It
// tolerates what servers really send: links as an array, as a single
// object or as a rel→href object, and rel URLs with either http or https.
func ParseWellKnown(body []byte) ([]Link, error) {
	if err := CheckDepth(body); err != nil {
		return nil, err
	}
	var doc struct {
		Links json.RawMessage `json:"links"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", shortJSONError(err))
	}
	links, err := wellKnownLinks(doc.Links)
	if err != nil {
		return nil, err
	}
	var all []Link
	for _, l := range links {
		if v, ok := schemaOf(l.rel); ok && l.href != "" {
			all = append(all, Link{Version: v, Href: l.href})
		}
	}
	if len(all) == 0 {
		return nil, errors.New("no link to a supported NodeInfo schema")
	}
	// Stable: links of one version keep the document's order. An href
	// given for several versions is kept once, for the highest.
	slices.SortStableFunc(all, func(a, b Link) int { return rank(b.Version) - rank(a.Version) })
	var out []Link
	for _, l := range all {
		if !slices.ContainsFunc(out, func(o Link) bool { return o.Href == l.Href }) {
			out = append(out, l)
		}
	}
	return out, nil
}

type relHref struct{ rel, href string }

func wellKnownLinks(raw json.RawMessage) ([]relHref, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("no links")
	}
	type link struct {
		Rel  json.RawMessage `json:"rel"`
		Href json.RawMessage `json:"href"`
	}
	switch raw[0] {
	case '[':
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err != nil {
			return nil, fmt.Errorf("links: %w", shortJSONError(err))
		}
		var out []relHref
		for _, el := range arr {
			var l link
			if json.Unmarshal(el, &l) == nil {
				out = append(out, relHref{jsonString(l.Rel), jsonString(l.Href)})
			}
		}
		return out, nil
	case '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("links: %w", shortJSONError(err))
		}
		if rel, ok := m["rel"]; ok {
			return []relHref{{jsonString(rel), jsonString(m["href"])}}, nil
		}
		var out []relHref
		for k, v := range m {
			href := jsonString(v)
			if href == "" {
				var l link
				if json.Unmarshal(v, &l) == nil {
					href = jsonString(l.Href)
				}
			}
			out = append(out, relHref{k, href})
		}
		// Map order is random; sort so that the same document always
		// yields the same link.
		slices.SortFunc(out, func(a, b relHref) int { return strings.Compare(a.rel, b.rel) })
		return out, nil
	}
	return nil, errors.New("links is neither an array nor an object")
}

func schemaOf(rel string) (string, bool) {
	rel = strings.TrimSpace(rel)
	rest, ok := strings.CutPrefix(rel, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(rel, "http://")
	}
	if !ok {
		return "", false
	}
	v, ok := strings.CutPrefix(rest, schemaPrefix)
	if !ok {
		return "", false
	}
	v = strings.TrimSuffix(v, "/")
	return v, rank(v) >= 0
}

func rank(v string) int {
	for i, s := range SchemaVersions {
		if s == v {
			return i
		}
	}
	return -1
}

// jsonString returns raw as a string if it is a JSON string, else "".
func jsonString(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	if p, ok := plainString(raw); ok {
		return string(p)
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// shortJSONError drops encoding/json's type details, which can quote
// attacker-chosen field names at length. Other errors (a read error such as
// a size cap, ErrTooDeep) pass through unchanged so callers can test them.
func shortJSONError(err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("invalid JSON at byte %d", syn.Offset)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("unexpected JSON %s at byte %d", typ.Value, typ.Offset)
	}
	return err
}
