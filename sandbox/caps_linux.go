package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// dropCapabilities drops every capability of every thread: the bounding set
// first (it takes CAP_SETPCAP, if held), then the ambient set, then the
// effective, permitted and inheritable sets. A checker started by root
// would otherwise keep them all (no_new_privs only stops gaining more):
// CAP_NET_RAW and CAP_NET_ADMIN open sockets Landlock's port rules do not
// govern, CAP_SYS_ADMIN and CAP_DAC_OVERRIDE much more. What every thread
// holds afterwards is read back from /proc, and anything left is an error.
// A checker whose threads hold nothing to begin with has nothing to drop.
func dropCapabilities(r *Report) error {
	before, err := heldCapabilities()
	if err != nil {
		r.add(LayerCaps, false, "read capabilities: %v", err)
		return fmt.Errorf("%s: %w", LayerCaps, err)
	}
	if before == (capSets{}) {
		// Started so by its pool (PoolOptions.DropCapabilities): a
		// broadcast to every thread per capability would change nothing.
		r.add(LayerCaps, true, "none held from the start, bounding set empty")
		return nil
	}
	var boundErr error
	for c := 0; c <= lastCap(); c++ {
		if boundErr = allThreads(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0); boundErr != nil {
			break
		}
	}
	// EINVAL: a kernel older than 4.3 has no ambient set to clear.
	if err := allThreads(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		r.add(LayerCaps, false, "clear the ambient set: %v", err)
		return fmt.Errorf("%s: clear the ambient set: %w", LayerCaps, err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := allThreads(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&none[0])), 0); err != nil {
		r.add(LayerCaps, false, "capset: %v", err)
		return fmt.Errorf("%s: capset: %w", LayerCaps, err)
	}
	after, err := heldCapabilities()
	if err != nil {
		r.add(LayerCaps, false, "read capabilities: %v", err)
		return fmt.Errorf("%s: %w", LayerCaps, err)
	}
	if after.held != 0 {
		r.add(LayerCaps, false, "still held: %#x", after.held)
		return fmt.Errorf("%s: capabilities %#x still held", LayerCaps, after.held)
	}
	switch {
	case after.bounding == 0:
		r.add(LayerCaps, true, "none held (%#x dropped), bounding set empty", before.held)
	case boundErr != nil && before.held&(1<<unix.CAP_SETPCAP) == 0:
		// Without CAP_SETPCAP the bounding set cannot be emptied; it
		// only limits what an exec could grant, and there is none.
		r.add(LayerCaps, true, "none held; bounding set kept (no CAP_SETPCAP), unused under no_new_privs")
	default:
		r.add(LayerCaps, false, "bounding set %#x left: %v", after.bounding, boundErr)
		return fmt.Errorf("%s: bounding set %#x left: %w", LayerCaps, after.bounding, boundErr)
	}
	return nil
}

// allThreads makes a system call on every thread of the process, as the
// kernel keeps capabilities per thread.
func allThreads(nr, a1, a2, a3 uintptr) error {
	if _, _, errno := psx.Syscall3(nr, a1, a2, a3); errno != 0 {
		return errno
	}
	return nil
}

// lastCap is the highest capability this kernel knows.
func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n
		}
	}
	return unix.CAP_LAST_CAP
}

// capSets are the capabilities of the process's threads, or-ed together:
// held is the effective, permitted, inheritable and ambient sets.
type capSets struct{ held, bounding uint64 }

func heldCapabilities() (capSets, error) {
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil || len(tasks) == 0 {
		return capSets{}, fmt.Errorf("list threads: %v", err)
	}
	var s capSets
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH) {
			continue // the thread has exited
		}
		if err != nil {
			return capSets{}, err
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			name, value, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			var into *uint64
			switch name {
			case "CapInh", "CapPrm", "CapEff", "CapAmb":
				into = &s.held
			case "CapBnd":
				into = &s.bounding
			default:
				continue
			}
			v, err := strconv.ParseUint(strings.TrimSpace(value), 16, 64)
			if err != nil {
				return capSets{}, fmt.Errorf("%s %s: %w", t, name, err)
			}
			*into |= v
		}
	}
	return s, nil
}
