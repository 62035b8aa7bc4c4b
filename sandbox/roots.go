package sandbox

import (
	"fmt"
	"os"
)

// The system's root certificates reach a checker on an inherited file, as
// DER the orchestrator read once (PoolOptions.Roots): parsing them from
// the system's files was the larger part of a checker's start.

// rootsFD is the descriptor a checker finds the root certificates on
// (exec.Cmd.ExtraFiles[2]) when its pool has them.
const rootsFD = knownFD + 2

// maxRootsBytes bounds what ReadRoots reads: thousands of certificates.
const maxRootsBytes = 64 << 20

// rootsFile writes the DER certificates into a sealed memory file and
// returns a read-only descriptor of it; none without certificates.
func rootsFile(der []byte) (*os.File, error) {
	if len(der) == 0 {
		return nil, nil
	}
	ro, err := sealedFile("observer-roots", func(f *os.File) error {
		_, err := f.Write(der)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("root certificates: %w", err)
	}
	return ro, nil
}

// ReadRoots reads the root certificates its pool gave a checker
// (PoolOptions.Roots) and closes their descriptor; like ReadConnectTo, it
// is called before Confine.
func ReadRoots() ([]byte, error) {
	return readInherited(rootsFD, "root certificates", maxRootsBytes)
}

// checkerFiles are the files a checker inherits as descriptors 3 and on:
// the known table, then the --connect-to rules and the root
// certificates, each where its reader looks for it (a nil entry is a
// closed descriptor).
func (p *Pool) checkerFiles() []*os.File {
	files := []*os.File{p.opts.Known.file, p.rules, p.roots}
	for len(files) > 1 && files[len(files)-1] == nil {
		files = files[:len(files)-1]
	}
	return files
}
