package parse

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"
)

// members splits a valid object as encoding/json does.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : 1 , "b" :	"x" , "c": {"d" : [ 1 , "]}" ] } , "a\u0062": null, "a": -1.5e3 } `,
		`{"k\"q":"v\\","":[],"x":[{}],"t":true,"f":false}`, "{\"\xff\":\"\xfe\",\"\\ud800\":0}", `{"software":{"name":"mastodon"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		obj := data[skipSpace(data, 0):]
		if len(obj) == 0 || obj[0] != '{' || !json.Valid(obj) {
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("valid object not decoded: %v", err)
		}
		got := members(obj)
		if !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
			t.Fatalf("members %q, encoding/json %q", got, want)
		}
	})
}
