package hostname

// Exposed to the differential fuzz test only.
var (
	FastASCII     = fastASCII
	NormalizeSlow = normalizeSlow
)
