package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fediverse-observer/observer"
)

// The texts kept from a NodeInfo document are cleaned and cut by
// observer.CleanText to the caps the root package sets (MaxNameRunes and
// so on), which the sandbox's orchestrator and the site builder hold them
// to as well.

// MaxDocumentVersionRunes caps the document's own version text as kept:
// schema versions are three characters, and anything much longer is not
// one.
const MaxDocumentVersionRunes = 20

// The paths of the informational fields a check may find unusable, in the
// order ParseNodeInfo reads them and NodeInfo.Unusable lists them.
const (
	FieldVersion                  = "version"
	FieldSoftwareVersion          = "software.version"
	FieldProtocols                = "protocols"
	FieldServices                 = "services"
	FieldUsage                    = "usage"
	FieldUsageUsers               = "usage.users"
	FieldUsageUsersTotal          = "usage.users.total"
	FieldUsageUsersActiveMonth    = "usage.users.activeMonth"
	FieldUsageUsersActiveHalfyear = "usage.users.activeHalfyear"
	FieldUsageLocalPosts          = "usage.localPosts"
	FieldOpenRegistrations        = "openRegistrations"
	FieldMetadata                 = "metadata"
	FieldMetadataNodeName         = "metadata.nodeName"
	FieldMetadataNodeDescription  = "metadata.nodeDescription"
	FieldInstance                 = "instance"
	FieldInstanceName             = "instance.name"
	FieldInstanceDescription      = "instance.description"
)

// UnusableFields lists every field path NodeInfo.Unusable may name, in its
// order.
var UnusableFields = []string{
	FieldVersion, FieldSoftwareVersion, FieldProtocols, FieldServices,
	FieldUsage, FieldUsageUsers, FieldUsageUsersTotal, FieldUsageUsersActiveMonth,
	FieldUsageUsersActiveHalfyear, FieldUsageLocalPosts, FieldOpenRegistrations,
	FieldMetadata, FieldMetadataNodeName, FieldMetadataNodeDescription,
	FieldInstance, FieldInstanceName, FieldInstanceDescription,
}

// NodeInfo is what a check keeps from a NodeInfo document. Nil pointers
// and empty texts mean the document did not say, or said it in a form that
// could not be used; Unusable tells the two apart.
type NodeInfo struct {
	Version           string // the document's own version field, at most MaxDocumentVersionRunes
	Software          string // lower case, at most observer.MaxSoftwareRunes
	SoftwareVersion   string // at most observer.MaxVersionRunes
	Users             *int64
	ActiveMonth       *int64
	ActiveHalfyear    *int64
	LocalPosts        *int64
	OpenRegistrations *bool
	Name              string // at most observer.MaxNameRunes
	Description       string // at most observer.MaxDescriptionRunes
	// Unusable names the informational fields present with a value that
	// could not be used (a path of UnusableFields, in its order): recorded
	// as unknown, and listed so operators can see which software sends what.
	Unusable []string
}

// ParseNodeInfo reads a NodeInfo document. Only what makes a host a
// Fediverse server is required: a JSON object (within MaxDepth) with a
// software name. Every other field is informational: taken when it has a
// usable type or a common spelling of one (a count as "16", a boolean as
// "FALSE" or 1, an empty object as PHP's []), and otherwise recorded as
// unknown and named in Unusable. The document's version is kept as it
// says; the caller compares it with the schema its link named.
func ParseNodeInfo(body []byte) (NodeInfo, error) {
	var ni NodeInfo
	if err := CheckDepth(body); err != nil {
		return ni, err
	}
	var top map[string]json.RawMessage
	if trimmed := body[skipSpace(body, 0):]; len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed) {
		// Valid, so every object in it can be split by members.
		top = members(trimmed)
	} else if err := json.Unmarshal(body, &top); err != nil {
		return ni, fmt.Errorf("not a JSON object: %w", shortJSONError(err))
	}
	if top == nil {
		return ni, errors.New("not a JSON object")
	}
	software, ok := object(top["software"])
	if !ok || software == nil {
		return ni, errors.New("software missing or not an object")
	}
	ni.Software = observer.CleanSoftware(jsonString(software["name"]))
	if ni.Software == "" {
		return ni, errors.New("software.name missing or not a string")
	}
	r := reader{ni: &ni}
	ni.Version = r.version(FieldVersion, top["version"], MaxDocumentVersionRunes)
	ni.SoftwareVersion = r.version(FieldSoftwareVersion, software["version"], observer.MaxVersionRunes)
	r.check(FieldProtocols, top["protocols"], protocolsUsable)
	r.check(FieldServices, top["services"], servicesUsable)
	if usage := r.object(FieldUsage, top["usage"]); usage != nil {
		if users := r.object(FieldUsageUsers, usage["users"]); users != nil {
			ni.Users = r.count(FieldUsageUsersTotal, users["total"])
			ni.ActiveMonth = r.count(FieldUsageUsersActiveMonth, users["activeMonth"])
			half, ok := users["activeHalfyear"]
			if !ok {
				// Funkwhale's NodeInfo 2.1 spells it so
				// (testdata/corpus/nodeinfo/funkwhale-spec-2.1.json).
				half = users["activeHalfYear"]
			}
			ni.ActiveHalfyear = r.count(FieldUsageUsersActiveHalfyear, half)
		}
		ni.LocalPosts = r.count(FieldUsageLocalPosts, usage["localPosts"])
	}
	ni.OpenRegistrations = r.boolean(FieldOpenRegistrations, top["openRegistrations"])
	// The 2.2 instance object is the instance's own word; metadata is the
	// older, informal convention. Both are read, so that an unusable one
	// is listed even when the other gives the text.
	var metaName, metaDesc, instName, instDesc string
	if meta := r.object(FieldMetadata, top["metadata"]); meta != nil {
		metaName = r.text(FieldMetadataNodeName, meta["nodeName"], observer.MaxNameRunes)
		metaDesc = r.text(FieldMetadataNodeDescription, meta["nodeDescription"], observer.MaxDescriptionRunes)
	}
	if inst := r.object(FieldInstance, top["instance"]); inst != nil {
		instName = r.text(FieldInstanceName, inst["name"], observer.MaxNameRunes)
		instDesc = r.text(FieldInstanceDescription, inst["description"], observer.MaxDescriptionRunes)
	}
	ni.Name = cmpOr(instName, metaName)
	ni.Description = cmpOr(instDesc, metaDesc)
	return ni, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// reader reads informational fields, listing those it cannot use.
type reader struct{ ni *NodeInfo }

func (r reader) unusable(field string) { r.ni.Unusable = append(r.ni.Unusable, field) }

// absent reports whether raw says nothing: no member, or null.
func absent(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

func (r reader) check(field string, raw json.RawMessage, usable func(json.RawMessage) bool) {
	if !absent(raw) && !usable(raw) {
		r.unusable(field)
	}
}

// object reads an optional object member; PHP's [] for an empty one is
// taken as {}. It returns nil when the member is absent or unusable.
func (r reader) object(field string, raw json.RawMessage) map[string]json.RawMessage {
	if absent(raw) {
		return nil
	}
	m, ok := object(raw)
	if !ok {
		r.unusable(field)
	}
	return m
}

// object decodes raw, a value of a valid document, as a JSON object, or
// PHP's [] for an empty one (which gives an empty, non-nil map).
func object(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	switch raw[0] {
	case '{':
		return members(raw), true
	case '[':
		var a []json.RawMessage
		if json.Unmarshal(raw, &a) != nil || len(a) != 0 {
			return nil, false
		}
		return map[string]json.RawMessage{}, true
	}
	return nil, false
}

// text reads a string, cleaned and cut to max runes. An empty or blank
// string says nothing and is not unusable.
func (r reader) text(field string, raw json.RawMessage, max int) string {
	return r.textOrNumber(field, raw, max, false)
}

// version is text that may be written as a number too (software.version
// 13, version 2.0).
func (r reader) version(field string, raw json.RawMessage, max int) string {
	return r.textOrNumber(field, raw, max, true)
}

func (r reader) textOrNumber(field string, raw json.RawMessage, max int, numbers bool) string {
	if absent(raw) {
		return ""
	}
	if len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] == '"' {
		return observer.CleanText(jsonString(bytes.TrimSpace(raw)), max)
	}
	if n, ok := jsonNumberText(raw); ok && numbers {
		// A number's text can be any length: cut it like a string.
		return observer.CleanText(n, max)
	}
	r.unusable(field)
	return ""
}

// count reads a usage number: a non-negative integer up to 2^53, as a JSON
// number (a float with a zero fraction too: 1.0e3) or as a string of
// decimal digits ("16", which Pixelfed has sent).
func (r reader) count(field string, raw json.RawMessage) *int64 {
	if absent(raw) {
		return nil
	}
	n, ok := parseCount(raw, true)
	if !ok {
		r.unusable(field)
		return nil
	}
	return n
}

// parseCount reads a non-negative integer up to 2^53 from a JSON number
// (tolerating a float with a zero fraction) or, if digits is set, from a
// string of decimal digits.
func parseCount(raw json.RawMessage, digits bool) (*int64, bool) {
	text, ok := jsonNumberText(raw)
	if !ok && digits {
		s := strings.TrimSpace(jsonString(bytes.TrimSpace(raw)))
		if s != "" && strings.TrimLeft(s, "0123456789") == "" {
			text, ok = s, true
		}
	}
	if !ok {
		return nil, false
	}
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		if n < 0 || n > observer.MaxUsageCount {
			return nil, false
		}
		return &n, true
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > observer.MaxUsageCount || f != math.Trunc(f) {
		return nil, false
	}
	n := int64(f)
	return &n, true
}

// boolean reads a JSON boolean, or a common spelling of one: the strings
// true/false, yes/no, 1/0 in any case ("FALSE", which Akkoma has sent),
// and the numbers 1 and 0.
func (r reader) boolean(field string, raw json.RawMessage) *bool {
	if absent(raw) {
		return nil
	}
	raw = bytes.TrimSpace(raw)
	s := string(raw)
	if raw[0] == '"' {
		s = strings.ToLower(strings.TrimSpace(jsonString(raw)))
	}
	var b bool
	switch s {
	case "true", "yes", "1":
		b = true
	case "false", "no", "0":
		b = false
	default:
		r.unusable(field)
		return nil
	}
	return &b
}

// protocolsUsable: an array of strings (2.x), or the 1.x object of inbound
// and outbound arrays of strings.
func protocolsUsable(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if raw[0] == '[' {
		var ps []string
		return json.Unmarshal(raw, &ps) == nil
	}
	return servicesUsable(raw)
}

// servicesUsable: an object whose inbound and outbound, where given, are
// arrays of strings; PHP's [] for an empty object.
func servicesUsable(raw json.RawMessage) bool {
	m, ok := object(raw)
	if !ok {
		return false
	}
	for _, k := range []string{"inbound", "outbound"} {
		if absent(m[k]) {
			continue
		}
		var ss []string
		if json.Unmarshal(m[k], &ss) != nil {
			return false
		}
	}
	return true
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
