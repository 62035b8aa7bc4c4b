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
// redirect, time and pass as asked). A checker runs a few checks at once
// (PoolOptions.ChecksAtOnce). One that crashes, overruns a deadline,
// exceeds its memory or sends anything invalid is killed with its process
// group and fresh processes take over: the host it was checking alone is
// recorded as checker_failed; hosts it was checking together are checked
// again, each in a checker of its own.
package sandbox
