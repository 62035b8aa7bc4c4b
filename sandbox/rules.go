package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// A checker's --connect-to rules reach it on an inherited file, not on its
// command line: a test world of 20,000 instances has a rule each, which
// together come near Linux's limit on a process's arguments, and any user
// could read them in ps. The pool writes them once into a sealed memory
// file that every checker reads.

// connectToFD is the descriptor a checker finds its rules on
// (exec.Cmd.ExtraFiles[1]) when its pool has any (PoolOptions.ConnectTo).
const connectToFD = knownFD + 1

// maxRulesBytes bounds what ReadConnectTo reads: a million rules of a
// long host name each.
const maxRulesBytes = 512 << 20

// rulesFile writes rules, one a line, into a memory file sealed against
// change, and returns a read-only descriptor of it; none without rules.
func rulesFile(rules []string) (*os.File, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	for _, r := range rules {
		if strings.ContainsAny(r, "\n\x00") {
			return nil, fmt.Errorf("connect-to rule %q: a line break or NUL in it", r)
		}
	}
	ro, err := sealedFile("observer-connect-to", func(f *os.File) error {
		_, err := io.WriteString(f, strings.Join(rules, "\n"))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("connect-to rules: %w", err)
	}
	return ro, nil
}

// ReadConnectTo reads the --connect-to rules its pool gave a checker
// (PoolOptions.ConnectTo) and closes their descriptor. A checker started
// with rules calls it before it builds its crawler, and so before Confine,
// which closes every descriptor it inherited.
func ReadConnectTo() ([]string, error) {
	buf, err := readInherited(connectToFD, "connect-to rules", maxRulesBytes)
	if err != nil || len(buf) == 0 {
		return nil, err
	}
	return strings.Split(string(buf), "\n"), nil
}

// readInherited reads the whole of a sealed memory file inherited as
// descriptor fd, at most max bytes, and closes the descriptor.
func readInherited(fd uintptr, what string, max int64) ([]byte, error) {
	f := os.NewFile(fd, what)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s on descriptor %d: %w", what, fd, err)
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, over %d", what, st.Size(), max)
	}
	// Every checker of the pool shares the file's offset: read at
	// offsets, never moving it.
	buf := make([]byte, st.Size())
	if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return buf, nil
}
