// Package parse reads the documents a check fetches from untrusted hosts:
// robots.txt, the NodeInfo discovery document, NodeInfo itself and the peers
// lists of each software family. It does no I/O beyond the readers it is
// given, so every parser can be fuzzed on its own.
package parse

import (
	"errors"
	"fmt"
	"io"
)

// MaxDepth is the deepest nesting of JSON arrays and objects accepted. Real
// documents need fewer than ten levels; the limit keeps a 100 000-deep
// document from costing encoding/json time and stack.
const MaxDepth = 64

// ErrTooDeep reports JSON nested deeper than MaxDepth.
var ErrTooDeep = errors.New("JSON nested too deeply")

// depthScanner tracks nesting over a byte stream, outside strings. It does
// not validate JSON; the decoder that follows does.
type depthScanner struct {
	depth    int
	inString bool
	escaped  bool
	max      int
}

func (s *depthScanner) feed(b []byte) error {
	for _, c := range b {
		if s.inString {
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
			}
			continue
		}
		switch c {
		case '"':
			s.inString = true
		case '[', '{':
			s.depth++
			if s.depth > s.max {
				return fmt.Errorf("%w (over %d levels)", ErrTooDeep, s.max)
			}
		case ']', '}':
			s.depth--
		}
	}
	return nil
}

// CheckDepth returns ErrTooDeep if b nests arrays and objects deeper than
// MaxDepth. It is a linear byte scan, cheap enough to run before decoding.
func CheckDepth(b []byte) error {
	s := depthScanner{max: MaxDepth}
	return s.feed(b)
}

// DepthReader wraps r so that reading fails with ErrTooDeep as soon as the
// stream nests deeper than MaxDepth, for documents decoded as a stream.
func DepthReader(r io.Reader) io.Reader {
	return &depthReader{r: r, s: depthScanner{max: MaxDepth}}
}

type depthReader struct {
	r   io.Reader
	s   depthScanner
	err error
}

func (d *depthReader) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	n, err := d.r.Read(p)
	if ferr := d.s.feed(p[:n]); ferr != nil {
		d.err = ferr
		return 0, ferr
	}
	return n, err
}
