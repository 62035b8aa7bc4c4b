//go:build linux && !amd64

package sandbox

// The filter is written for amd64's system call numbers only.
const seccompSupported = false

func installSeccomp() error { return nil }
