//go:build !linux

package sandbox

// dropThreadCapabilities does nothing outside Linux, where a checker is
// not confined either.
func dropThreadCapabilities() {}
