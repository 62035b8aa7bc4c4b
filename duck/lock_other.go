//go:build !unix

package duck

// lockFile does nothing where flock is missing: the observer targets Linux,
// and elsewhere concurrent derivations of one directory are the user's
// responsibility.
func lockFile(path string) (unlock func(), err error) { return func() {}, nil }
