package parse

import (
	"errors"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrNotStringArray rejects a peers list that is not a JSON array of strings.
var ErrNotStringArray = errors.New("peers list is not a JSON array of strings")

// maxEntry is the longest peers entry passed on; longer strings cannot be
// host names, so they are skipped without being buffered and reported as
// an empty entry (which the caller counts as invalid).
const maxEntry = 1024

const scanBuf = 64 * 1024

// Entry classes, ORed over the bytes of an entry and passed to StringArray's
// callback, so that the caller need not scan the entry again to know whether
// it is already a canonical host name.
const (
	ClassUpper uint8 = 1 << 0 // an ASCII upper-case letter
	ClassOther uint8 = 1 << 1 // a byte outside a-z, A-Z, 0-9, '.', '-'
)

// stopBit marks the bytes that end the fast scan of a string: the closing
// quote, an escape, or a control character (invalid in JSON strings).
const stopBit = 1 << 7

var strTab = func() (t [256]uint8) {
	for i := range t {
		c := byte(i)
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.':
		case c >= 'A' && c <= 'Z':
			t[i] = ClassUpper
		default:
			t[i] = ClassOther
		}
		if c < 0x20 || c == '"' || c == '\\' {
			t[i] |= stopBit
		}
	}
	return t
}()

// Class returns the OR of the classes of b's bytes.
func Class(b []byte) uint8 {
	var acc uint8
	for _, c := range b {
		acc |= strTab[c]
	}
	return acc &^ stopBit
}

// StringArray streams a JSON array of strings from r, calling fn with each
// string's decoded bytes and their class (see ClassUpper). The slice is only
// valid during the call. Anything
// other than one array of strings (with white space around) is rejected
// with ErrNotStringArray; read errors are returned as they are. Memory use
// is a fixed 64 KiB buffer whatever the size of the input.
//
// This is the hot path of peers ingestion (a Mastodon peers list can hold a
// few hundred thousand entries), hence a hand-written scanner rather than
// encoding/json: each entry is located with a tight byte loop and handed
// over without copying or allocating unless it contains escapes.
func StringArray(r io.Reader, fn func(entry []byte, class uint8)) error {
	s := arrayScanner{r: r, buf: make([]byte, scanBuf)}
	return s.run(fn)
}

type arrayScanner struct {
	r        io.Reader
	buf      []byte
	pos, end int
	eof      bool
	err      error
	scratch  []byte
}

// fill reads more input, keeping buf[keep:end]. It reports false at the end
// of input or on a read error (in s.err).
func (s *arrayScanner) fill(keep int) bool {
	if s.eof {
		return false
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:s.end])
		s.pos -= keep
		s.end = n
	}
	if s.end == len(s.buf) {
		return false
	}
	for {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.err = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

// next returns the next non-white-space byte, consuming it; ok is false at
// the end of the input.
func (s *arrayScanner) next() (byte, bool) {
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			s.pos++
			if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return c, true
			}
		}
		if !s.fill(s.pos) {
			return 0, false
		}
	}
}

func (s *arrayScanner) fail() error {
	if s.err != nil {
		return s.err
	}
	return ErrNotStringArray
}

func (s *arrayScanner) run(fn func([]byte, uint8)) error {
	c, ok := s.next()
	if !ok || c != '[' {
		return s.fail()
	}
	c, ok = s.next()
	if !ok {
		return s.fail()
	}
	if c != ']' {
		for {
			if c != '"' {
				return s.fail()
			}
			if err := s.str(fn); err != nil {
				return err
			}
			c, ok = s.next()
			if !ok {
				return s.fail()
			}
			if c == ']' {
				break
			}
			if c != ',' {
				return s.fail()
			}
			if c, ok = s.next(); !ok {
				return s.fail()
			}
		}
	}
	if _, ok := s.next(); ok {
		return ErrNotStringArray // trailing data
	}
	return s.err
}

// str reads a string whose opening quote has been consumed.
func (s *arrayScanner) str(fn func([]byte, uint8)) error {
	start := s.pos
	var class uint8
	for {
		i := s.pos
		buf := s.buf[:s.end]
		for i < len(buf) {
			t := strTab[buf[i]]
			if t&stopBit != 0 {
				break
			}
			class |= t
			i++
		}
		if i < len(buf) {
			if buf[i] == '"' {
				if i-start > maxEntry {
					fn(nil, ClassOther)
				} else {
					fn(buf[start:i], class)
				}
				s.pos = i + 1
				return nil
			}
			s.pos = i
			return s.slowStr(start, fn)
		}
		s.pos = i
		if s.pos-start > maxEntry {
			return s.skipStr(fn)
		}
		if !s.fill(start) {
			return s.fail()
		}
		start = 0
	}
}

// slowStr decodes a string with escapes from buf[start:], where s.pos is at
// the first escape or control byte.
func (s *arrayScanner) slowStr(start int, fn func([]byte, uint8)) error {
	out := append(s.scratch[:0], s.buf[start:s.pos]...)
	for {
		if s.pos >= s.end {
			if !s.fill(s.pos) {
				return s.fail()
			}
			continue
		}
		c := s.buf[s.pos]
		switch {
		case c == '"':
			s.pos++
			s.scratch = out
			if len(out) > maxEntry {
				out = nil
			}
			fn(out, Class(out))
			return nil
		case c < 0x20:
			return ErrNotStringArray
		case c != '\\':
			// Past maxEntry the entry is junk (passed on as nil), so only
			// its length matters: the buffer stays bounded.
			if len(out) <= maxEntry {
				out = append(out, c)
			}
			s.pos++
			continue
		}
		// An escape needs up to 6 bytes (\uXXXX) in the buffer, or 12 for
		// a surrogate pair.
		for s.end-s.pos < 12 && s.fill(s.pos) {
		}
		if s.pos+1 >= s.end {
			return s.fail()
		}
		e := s.buf[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				if s.pos+4 > s.end {
					// The input ended inside the escape: a read error
					// (such as the body cap) is reported as such, as
					// skipStr does.
					return s.fail()
				}
				return ErrNotStringArray
			}
			if r >= 0xD800 && r < 0xDC00 {
				// A high surrogate pairs with an escaped low one that
				// follows; anything else leaves it unpaired (U+FFFD) and
				// is decoded on its own, as encoding/json does.
				r2 := rune(-1)
				if s.pos+6 <= s.end && s.buf[s.pos] == '\\' && s.buf[s.pos+1] == 'u' {
					save := s.pos
					s.pos += 2
					if lo, ok := s.hex4(); ok && lo >= 0xDC00 && lo < 0xE000 {
						r2 = lo
					} else {
						s.pos = save
					}
				}
				r = utf16.DecodeRune(r, r2)
			} else if utf16.IsSurrogate(r) {
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default:
			return ErrNotStringArray
		}
		if len(out) > maxEntry {
			out = out[:maxEntry+1]
		}
	}
}

func (s *arrayScanner) hex4() (rune, bool) {
	if s.pos+4 > s.end {
		return 0, false
	}
	var r rune
	for _, c := range s.buf[s.pos : s.pos+4] {
		d, ok := hexDigit(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | d
	}
	s.pos += 4
	return r, true
}

// hexDigit is the value of the hex digit c.
func hexDigit(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10), true
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10), true
	}
	return 0, false
}

// skipStr consumes the rest of an over-long string and reports it as an
// empty entry. It checks escapes as slowStr does: whether a long string is
// skipped or decoded depends on where the buffer ends, and that must not
// change which inputs are accepted.
func (s *arrayScanner) skipStr(fn func([]byte, uint8)) error {
	escaped := false
	hexLeft := 0 // hex digits still owed to a \u escape
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			s.pos++
			switch {
			case hexLeft > 0:
				if _, ok := hexDigit(c); !ok {
					return ErrNotStringArray
				}
				hexLeft--
			case escaped:
				escaped = false
				switch c {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				case 'u':
					hexLeft = 4
				default:
					return ErrNotStringArray
				}
			case c == '\\':
				escaped = true
			case c == '"':
				fn(nil, ClassOther)
				return nil
			case c < 0x20:
				return ErrNotStringArray
			}
		}
		if !s.fill(s.pos) {
			return s.fail()
		}
	}
}
