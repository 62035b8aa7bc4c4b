package observer

// Host is an instance's host name as the program records it: the canonical
// ASCII form (IDNA to ASCII, lower case, no trailing dot) of a name with a
// public suffix, at most MaxHostBytes long. A Host is made only at the trust
// boundaries, by hostname.Normalize (a peers list's entries, a redirect's
// target, the checker's report, the seed list, `observer add`, the
// blocklist), or read back from the program's own snapshots, which hold
// nothing else. Past those boundaries a Host is not validated again: the
// type says it was.
type Host string
