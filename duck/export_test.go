package duck

// WindowOnly makes the fold take every host through the windowed fold
// (fold_runs), never fold_single, so tests can compare the two.
func WindowOnly(o DeriveOptions) DeriveOptions {
	o.windowOnly = true
	return o
}

// WithFoldBuckets makes the windowed fold split into buckets of about checks
// checks.
func WithFoldBuckets(o DeriveOptions, checks int64) DeriveOptions {
	o.foldBucketChecks = checks
	return o
}
