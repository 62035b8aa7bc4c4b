package funcs

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"html/template"
)

// Encoding is the encoding namespace: JSON and base64.
type Encoding struct{}

// Jsonify encodes v as JSON; with options (dict "indent" "  " "prefix" ""
// "noHTMLEscape" true) indented. <, > and & are escaped unless
// noHTMLEscape is set, so the result is safe in a script.
func (*Encoding) Jsonify(args ...any) (template.HTML, error) {
	var v any
	var opts map[string]any
	switch len(args) {
	case 1:
		v = args[0]
	case 2:
		m, err := toStringMap(args[0])
		if err != nil {
			return "", fmt.Errorf("jsonify: options: %w", err)
		}
		opts, v = m, args[1]
	default:
		return "", errors.New("jsonify: want a value and at most options")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if opts != nil {
		prefix, _ := toString(opts["prefix"])
		indent, _ := toString(opts["indent"])
		if prefix != "" || indent != "" {
			enc.SetIndent(prefix, indent)
		}
		if b, ok := opts["noHTMLEscape"].(bool); ok && b {
			enc.SetEscapeHTML(false)
		}
	}
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("jsonify: %w", err)
	}
	return template.HTML(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// Base64Encode encodes text as base64.
func (*Encoding) Base64Encode(v any) (string, error) {
	s, err := toString(v)
	return base64.StdEncoding.EncodeToString([]byte(s)), err
}

// Base64Decode decodes base64.
func (*Encoding) Base64Decode(v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", err
	}
	b, err := base64.StdEncoding.DecodeString(s)
	return string(b), err
}

// HexEncode encodes text as hexadecimal.
func (*Encoding) HexEncode(v any) (string, error) {
	s, err := toString(v)
	return hex.EncodeToString([]byte(s)), err
}

// HexDecode decodes hexadecimal.
func (*Encoding) HexDecode(v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", err
	}
	b, err := hex.DecodeString(s)
	return string(b), err
}

// Crypto is the crypto namespace: hashes of text, in hexadecimal.
type Crypto struct{}

func hexHash(h hash.Hash, v any) (string, error) {
	s, err := toString(v)
	if err != nil {
		return "", err
	}
	h.Write([]byte(s))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// MD5 is the MD5 of text.
func (*Crypto) MD5(v any) (string, error) { return hexHash(md5.New(), v) }

// SHA1 is the SHA-1 of text.
func (*Crypto) SHA1(v any) (string, error) { return hexHash(sha1.New(), v) }

// SHA256 is the SHA-256 of text.
func (*Crypto) SHA256(v any) (string, error) { return hexHash(sha256.New(), v) }

func newHash(name string) (func() hash.Hash, error) {
	switch name {
	case "md5":
		return md5.New, nil
	case "sha1":
		return sha1.New, nil
	case "sha256":
		return sha256.New, nil
	case "sha512":
		return sha512.New, nil
	}
	return nil, fmt.Errorf("hash %q is not supported (md5, sha1, sha256, sha512)", name)
}

// Hash is the hash namespace: non-cryptographic hashes.
type Hash struct{}

// FNV32a is the 32-bit FNV-1a hash of text, as a number.
func (*Hash) FNV32a(v any) (int, error) {
	s, err := toString(v)
	if err != nil {
		return 0, fmt.Errorf("hash.FNV32a: %w", err)
	}
	h := fnv.New32a()
	h.Write([]byte(s))
	return int(h.Sum32()), nil
}

// HMAC is the HMAC of message under key, with the hash named, in
// hexadecimal.
func (*Crypto) HMAC(name, key, message any) (string, error) {
	n, err := toString(name)
	if err != nil {
		return "", err
	}
	h, err := newHash(n)
	if err != nil {
		return "", fmt.Errorf("hmac: %w", err)
	}
	k, m, err := str2("hmac", key, message)
	if err != nil {
		return "", err
	}
	mac := hmac.New(h, []byte(k))
	mac.Write([]byte(m))
	return hex.EncodeToString(mac.Sum(nil)), nil
}
