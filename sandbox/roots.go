package sandbox

import (
	"fmt"
	"io"
	"log/slog"
	"os"
)

// The system's root certificates reach a checker on a pipe, as the
// orchestrator read them once (PoolOptions.Roots): parsing them from the
// system's files was the larger part of a checker's start. The pool reads
// them while its first checkers start, which took as long as the start
// itself when it came first; each checker waits for them on its pipe only
// once its own runtime is up.

// rootsFD is the descriptor a checker finds the root certificates on
// (exec.Cmd.ExtraFiles[2]) when its pool has them.
const rootsFD = knownFD + 2

// maxRootsBytes bounds what ReadRoots reads: thousands of certificates.
const maxRootsBytes = 64 << 20

// poolRoots are the root certificates a pool hands its checkers, being read
// until ready is closed; der is then the certificates, or nil when they
// could not be read.
type poolRoots struct {
	ready chan struct{}
	der   []byte
}

// readRoots has read called beside the caller and its certificates handed
// to every checker (send).
func readRoots(read func() ([]byte, error), log *slog.Logger) *poolRoots {
	r := &poolRoots{ready: make(chan struct{})}
	go func() {
		defer close(r.ready)
		der, err := read()
		if err != nil {
			log.Debug("checkers load the system roots themselves", "why", err)
			return
		}
		r.der = der
	}()
	return r
}

// send writes the certificates to a checker's pipe once they are read, and
// closes it; it gives up when the checker is discarded first. A checker
// that dies before it read them makes the write fail, which is its start's
// failure, not this one's.
func (r *poolRoots) send(w *os.File, discarded <-chan struct{}) {
	defer w.Close()
	select {
	case <-r.ready:
	case <-discarded:
		return
	}
	w.Write(r.der)
}

// ReadRoots reads the root certificates its pool gave a checker
// (PoolOptions.Roots), waiting for them if the pool is still reading them,
// and closes their descriptor; like ReadConnectTo, it is called before
// Confine. None (an empty result) means the pool could not read them: the
// checker loads the system's itself.
func ReadRoots() ([]byte, error) {
	f := os.NewFile(rootsFD, "root certificates")
	defer f.Close()
	der, err := io.ReadAll(io.LimitReader(f, maxRootsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("root certificates on descriptor %d: %w", rootsFD, err)
	}
	if len(der) > maxRootsBytes {
		return nil, fmt.Errorf("root certificates: over %d bytes", maxRootsBytes)
	}
	return der, nil
}

// checkerFiles are the files a checker inherits as descriptors 3 and on:
// the known table, then the --connect-to rules and the root
// certificates' pipe, each where its reader looks for it (a nil entry is a
// closed descriptor).
func (p *Pool) checkerFiles(roots *os.File) []*os.File {
	files := []*os.File{p.opts.Known.file, p.rules, roots}
	for len(files) > 1 && files[len(files)-1] == nil {
		files = files[:len(files)-1]
	}
	return files
}
