//go:build race

package sandbox_test

// The race detector's shadow memory does not fit a confined checker's
// RLIMIT_DATA.
const raceEnabled = true
