package sandbox

import "golang.org/x/sys/unix"

// dropThreadCapabilities empties the calling thread's bounding set (as far
// as it holds CAP_SETPCAP) and clears its ambient and inheritable sets,
// keeping its effective and permitted ones. A process it starts then
// gains no capability from exec: root's are the bounding set and the
// inheritable one. What is left a checker drops itself (dropCapabilities),
// so failures here only cost time and are not reported.
func dropThreadCapabilities() {
	for c := 0; c <= lastCap(); c++ {
		if unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0) != nil {
			break
		}
	}
	unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	unix.Capset(&hdr, &data[0])
}
