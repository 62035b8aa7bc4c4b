package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrNotObject reports a document that is not the JSON object expected.
var ErrNotObject = errors.New("not a JSON object")

// StatusNetPrivate reads GNU social's and Friendica's
// /api/statusnet/config.json and reports whether site.private is set: the
// admin's way of saying the site is not public. A missing flag is false;
// anything that is not a JSON object with an object "site" is an error.
func StatusNetPrivate(b []byte) (bool, error) {
	var doc struct {
		Site *struct {
			Private json.RawMessage `json:"private"`
		} `json:"site"`
	}
	if err := decodeObject(b, &doc); err != nil {
		return false, err
	}
	if doc.Site == nil {
		return false, errors.New("no site object")
	}
	return truthy(doc.Site.Private), nil
}

// SiteInfoHidden reads Hubzilla's /siteinfo.json (and its relatives') and
// reports whether hide_in_statistics is set: the admin asked directories
// and statistics sites to leave the site out.
func SiteInfoHidden(b []byte) (bool, error) {
	var doc struct {
		Hide json.RawMessage `json:"hide_in_statistics"`
	}
	if err := decodeObject(b, &doc); err != nil {
		return false, err
	}
	return truthy(doc.Hide), nil
}

func decodeObject(b []byte, v any) error {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if err := CheckDepth(b); err != nil {
		return err
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return ErrNotObject
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	return nil
}

// truthy accepts the spellings PHP software writes a true flag in: true,
// 1, "1", "true" (any case). Everything else, missing included, is false,
// so only an explicit yes opts a site out.
func truthy(raw json.RawMessage) bool {
	switch string(bytes.TrimSpace(raw)) {
	case "true", "1", `"1"`, `"true"`, `"True"`, `"TRUE"`:
		return true
	}
	return false
}
