package parse

import "encoding/json"

// members splits obj, a JSON object that is known to be valid (a value of
// a document json.Valid accepted), into its members as json.Unmarshal into
// a map[string]json.RawMessage does: keys unquoted, the last of duplicate
// keys kept, each value its bytes without the white space around them. It
// is one scan, where encoding/json validates again and copies each value.
// The values share obj's memory.
func members(obj []byte) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	i := skipSpace(obj, 1)
	if obj[i] == '}' {
		return m
	}
	for {
		kend := stringEnd(obj, i)
		key := keyString(obj[i:kend])
		i = skipSpace(obj, skipSpace(obj, kend)+1) // past ':'
		vend := valueEnd(obj, i)
		m[key] = json.RawMessage(obj[i:vend])
		i = skipSpace(obj, vend)
		if obj[i] == '}' {
			return m
		}
		i = skipSpace(obj, i+1) // past ','
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index past the closing quote of the string opening at
// b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd is the index past the value starting at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}

// keyString is the value of a JSON string, quotes included, as
// encoding/json decodes it.
func keyString(raw []byte) string {
	if s, ok := plainString(raw); ok {
		return string(s)
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}
