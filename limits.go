package observer

// Limits more than one package holds a value to. Each is named here once,
// so that the code that makes a value and the code that checks it cannot
// disagree.
const (
	// MaxHostBytes is the longest host name accepted, in bytes of its
	// ASCII form (RFC 1035, without the root label's dot).
	MaxHostBytes = 253
	// MaxErrorRunes bounds a check's error text, whatever made it: the
	// crawler cuts its texts to it, the sandbox's orchestrator refuses a
	// checker's longer text and cuts its own to it.
	MaxErrorRunes = 400
	// MaxETagBytes and MaxLastModifiedBytes bound a peers list's
	// validators (PeersValidators): an ETag is an opaque quoted string
	// that no sane server makes long, and an HTTP date is 29 bytes. The
	// crawler keeps nothing longer; the sandbox refuses a request or a
	// report with anything longer.
	MaxETagBytes         = 256
	MaxLastModifiedBytes = 64
	// MaxUsageCount is the largest NodeInfo usage number (users, active
	// users, local posts) kept: beyond 2^53 JSON numbers stop being exact
	// in most implementations, and no instance is that big. The crawler
	// keeps nothing larger; the sandbox refuses a report with anything
	// larger.
	MaxUsageCount = 1 << 53
)
