package duck

// SetFoldBuckets makes the fold use buckets of about checks new checks and
// hosts known hosts, and returns a function that restores the sizes.
func SetFoldBuckets(checks, hosts int64) (restore func()) {
	oldChecks, oldHosts := foldBucketChecks, foldBucketHosts
	foldBucketChecks, foldBucketHosts = checks, hosts
	return func() { foldBucketChecks, foldBucketHosts = oldChecks, oldHosts }
}
