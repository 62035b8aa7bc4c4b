#!/bin/sh
# The crawl-memory benchmark: one `observer crawl` pass with 1, 10 and 20
# million known hosts (2000 of them due and checked, concurrency 64,
# --isolation process), and the memory of its whole process tree: the peak
# summed PSS of the crawl, its derivation child and every checker, and the
# peak of a memory cgroup of its own where one can be made. See
# BenchmarkCrawlMemory in cmd/observer/memory_bench_test.go.
#
# Environment (all optional):
#   BENCH_KNOWN                 known-host counts to measure (default "1000000 10000000 20000000")
#   OBSERVER_BENCH_ISOLATION    process,none (default process)
#   OBSERVER_BENCH_CONCURRENCY  --concurrency (default 64)
#   BENCH_OUT                   where the raw output goes (default bench-memory.txt)
#   OBSERVER_BENCH_STATE_MEMORY_LIMIT  [state] memory_limit of the crawl (default: the
#                               config's, 1.5GB, which twenty million hosts' derivation
#                               outgrows: give it 3GB there)
set -eu
cd "$(dirname "$0")/.."

: "${BENCH_KNOWN:=1000000 10000000 20000000}"
: "${BENCH_OUT:=bench-memory.txt}"
{
	echo "# date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "# machine: nproc=$(nproc), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $(go version | cut -d' ' -f3)"
	echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$BENCH_OUT"
status=0
for n in $BENCH_KNOWN; do
	echo "# command: OBSERVER_BENCH_KNOWN=$n go test -run '^\$' -bench CrawlMemory -benchtime 1x -timeout 2h ./cmd/observer" | tee -a "$BENCH_OUT"
	OBSERVER_BENCH_KNOWN=$n go test -run '^$' -bench CrawlMemory -benchtime 1x -timeout 2h ./cmd/observer >>"$BENCH_OUT" 2>&1 || status=$?
done
echo "# load after:  $(cut -d' ' -f1-3 /proc/loadavg)" >>"$BENCH_OUT"
grep -E 'memory_bench_test.go:[0-9]+: isolation=' "$BENCH_OUT" | sed 's/^ *memory_bench_test.go:[0-9]*: //' || true
if [ "$status" -ne 0 ]; then
	echo "bench-memory: go test failed (exit $status); the whole output is in $BENCH_OUT" >&2
fi
exit "$status"
