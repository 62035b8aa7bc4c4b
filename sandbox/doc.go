// Package sandbox runs checks in untrusted, resource-limited child
// processes and brings back validated results: a check parses what hostile
// servers send, and a parser's flaw exploited there reaches a confined
// process that can do little but answer, not the crawl that writes the
// data (docs/security.md).
//
// The orchestrator side is Pool, a crawl.Checker whose checks run in
// checker processes started by re-executing the running binary with a
// hidden subcommand. The checker side is RunChecker (or Confine followed by
// Serve), after ReadConnectTo and ReadRoots when the pool passes
// --connect-to rules and root certificates, which a confined child could
// not open: the child limits itself (rlimits, memory limit, no_new_privs,
// Landlock, a seccomp filter) before its first network request and answers
// check requests over stdin and stdout.
//
// The two sides speak a small framed protocol (see protocol.go): every
// frame is size-limited, and the orchestrator validates every field of a
// result (host names normalised, outcome in the fixed set, numbers and
// texts bounded, discoveries attributed only to the checked host or to its
// redirect, time and pass as asked). A checker that crashes, overruns its
// deadline, exceeds its memory or sends anything invalid is killed with its
// process group, its host is recorded as checker_failed and a fresh process
// takes over.
package sandbox
