package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/fediverse-observer/observer"
)

// The texts kept from a NodeInfo document are cleaned and cut by
// observer.CleanText to the caps the root package sets (MaxNameRunes and
// so on), which the sandbox's orchestrator and the site builder hold them
// to as well.

// maxCount is the largest usage number accepted: beyond 2^53 JSON numbers
// stop being exact in most implementations, and no instance is that big.
const maxCount = 1 << 53

// NodeInfo is what a check keeps from a valid NodeInfo document. Nil
// pointers mean the document did not say.
type NodeInfo struct {
	Version           string // schema version of the document
	Software          string // lower case, at most observer.MaxSoftwareRunes
	SoftwareVersion   string // at most observer.MaxVersionRunes
	Users             *int64
	ActiveMonth       *int64
	ActiveHalfyear    *int64
	LocalPosts        *int64
	OpenRegistrations *bool
	Name              string // at most observer.MaxNameRunes
	Description       string // at most observer.MaxDescriptionRunes
}

type rawNodeInfo struct {
	Version  json.RawMessage `json:"version"`
	Software *struct {
		Name    json.RawMessage `json:"name"`
		Version json.RawMessage `json:"version"`
	} `json:"software"`
	Protocols json.RawMessage `json:"protocols"`
	Usage     *struct {
		Users *struct {
			Total          json.RawMessage `json:"total"`
			ActiveMonth    json.RawMessage `json:"activeMonth"`
			ActiveHalfyear json.RawMessage `json:"activeHalfyear"`
		} `json:"users"`
		LocalPosts json.RawMessage `json:"localPosts"`
	} `json:"usage"`
	OpenRegistrations json.RawMessage `json:"openRegistrations"`
	Metadata          json.RawMessage `json:"metadata"`
	Instance          json.RawMessage `json:"instance"` // 2.2
}

type nameDesc struct {
	NodeName        json.RawMessage `json:"nodeName"`
	NodeDescription json.RawMessage `json:"nodeDescription"`
	Name            json.RawMessage `json:"name"`
	Description     json.RawMessage `json:"description"`
}

// ParseNodeInfo validates a NodeInfo document fetched through a link to
// schema version want. The rules are the schema's where they matter to the
// observer (version, software.name, protocols, usage numbers,
// openRegistrations), loosened for what real servers send: an upper-case
// software name, versions that are not semver, protocols in the 1.0 object
// form, integral numbers written as floats, missing optional parts.
func ParseNodeInfo(body []byte, want string) (NodeInfo, error) {
	var ni NodeInfo
	if err := CheckDepth(body); err != nil {
		return ni, err
	}
	var raw rawNodeInfo
	if err := json.Unmarshal(body, &raw); err != nil {
		return ni, fmt.Errorf("not a JSON object: %w", shortJSONError(err))
	}
	ni.Version = jsonString(raw.Version)
	if ni.Version == "" {
		if n, ok := jsonNumberText(raw.Version); ok {
			ni.Version = n // a few servers write 2.0 as a number
		}
	}
	switch {
	case ni.Version == "":
		return ni, errors.New("version missing")
	case ni.Version != want:
		return ni, fmt.Errorf("version %q does not match schema %s", observer.CleanText(ni.Version, 20), want)
	}
	if raw.Software == nil {
		return ni, errors.New("software missing")
	}
	ni.Software = observer.CleanSoftware(jsonString(raw.Software.Name))
	if ni.Software == "" {
		return ni, errors.New("software.name missing or not a string")
	}
	ni.SoftwareVersion = observer.CleanText(jsonString(raw.Software.Version), observer.MaxVersionRunes)
	if ni.SoftwareVersion == "" {
		if n, ok := jsonNumberText(raw.Software.Version); ok {
			// A number's text can be any length: cut it like a string.
			ni.SoftwareVersion = observer.CleanText(n, observer.MaxVersionRunes)
		}
	}
	if err := checkProtocols(raw.Protocols); err != nil {
		return ni, err
	}
	if u := raw.Usage; u != nil {
		var err error
		if u.Users != nil {
			if ni.Users, err = count("usage.users.total", u.Users.Total); err != nil {
				return ni, err
			}
			if ni.ActiveMonth, err = count("usage.users.activeMonth", u.Users.ActiveMonth); err != nil {
				return ni, err
			}
			if ni.ActiveHalfyear, err = count("usage.users.activeHalfyear", u.Users.ActiveHalfyear); err != nil {
				return ni, err
			}
		}
		if ni.LocalPosts, err = count("usage.localPosts", u.LocalPosts); err != nil {
			return ni, err
		}
	}
	switch v := bytes.TrimSpace(raw.OpenRegistrations); string(v) {
	case "", "null":
	case "true", "false":
		b := string(v) == "true"
		ni.OpenRegistrations = &b
	default:
		return ni, errors.New("openRegistrations is not a boolean")
	}
	// The 2.2 instance object is the instance's own word; metadata is the
	// older, informal convention.
	var inst, meta nameDesc
	if isObject(raw.Instance) {
		_ = json.Unmarshal(raw.Instance, &inst)
	}
	if isObject(raw.Metadata) {
		_ = json.Unmarshal(raw.Metadata, &meta)
	}
	ni.Name = firstText(observer.MaxNameRunes, inst.Name, meta.NodeName)
	ni.Description = firstText(observer.MaxDescriptionRunes, inst.Description, meta.NodeDescription)
	return ni, nil
}

func checkProtocols(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return errors.New("protocols missing")
	}
	switch raw[0] {
	case '[':
		var ps []json.RawMessage
		if err := json.Unmarshal(raw, &ps); err != nil {
			return fmt.Errorf("protocols: %w", shortJSONError(err))
		}
		for _, p := range ps {
			if len(p) == 0 || p[0] != '"' {
				return errors.New("protocols: an entry is not a string")
			}
		}
		return nil
	case '{':
		// NodeInfo 1.0/1.1: {"inbound": [...], "outbound": [...]}.
		var ps struct {
			Inbound  []string `json:"inbound"`
			Outbound []string `json:"outbound"`
		}
		if err := json.Unmarshal(raw, &ps); err != nil {
			return fmt.Errorf("protocols: %w", shortJSONError(err))
		}
		return nil
	}
	return errors.New("protocols is neither an array nor an object")
}

// count reads an optional usage number: a non-negative integer, tolerating
// a float with a zero fraction (1.0e3). Null or absent means not said.
func count(field string, raw json.RawMessage) (*int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	text, ok := jsonNumberText(raw)
	if !ok {
		return nil, fmt.Errorf("%s is not a number", field)
	}
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		if n < 0 || n > maxCount {
			return nil, fmt.Errorf("%s out of range", field)
		}
		return &n, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > maxCount || f != math.Trunc(f) {
		return nil, fmt.Errorf("%s is not a non-negative integer", field)
	}
	n := int64(f)
	return &n, nil
}

// jsonNumberText returns raw's text if it is a JSON number.
func jsonNumberText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return "", false
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return "", false
	}
	return n.String(), true
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func firstText(max int, candidates ...json.RawMessage) string {
	for _, c := range candidates {
		if s := observer.CleanText(jsonString(c), max); s != "" {
			return s
		}
	}
	return ""
}
