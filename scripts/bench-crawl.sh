#!/bin/sh
# The million-instance crawl benchmark: one full `observer crawl` pass over
# every host of a simulated fediverse (all known, all due), with
# --isolation process and --isolation none, and the figures it gives:
# checks/s, CPU per check (crawl process, checkers, simulator), peak memory
# of the crawl process and of a checker, bytes written per check, peers
# entries read. See BenchmarkCrawlPass in cmd/observer/bench_test.go.
#
# Environment (all optional):
#   OBSERVER_BENCH_INSTANCES    hosts in the pass (default 1000000)
#   OBSERVER_BENCH_CONCURRENCY  --concurrency, or a comma-separated list to compare (default 64)
#   OBSERVER_BENCH_ISOLATION    process,none (default both)
#   BENCH_TIMEOUT               go test -timeout (default 6h: two passes of
#                               up to an hour each at the goal's rate, with room
#                               for a slower machine; a timeout loses every figure)
#   BENCH_OUT                   where the raw output goes (default bench-crawl.txt)
set -eu
cd "$(dirname "$0")/.."

: "${OBSERVER_BENCH_INSTANCES:=1000000}"
: "${OBSERVER_BENCH_CONCURRENCY:=64}"
: "${OBSERVER_BENCH_ISOLATION:=process,none}"
: "${BENCH_TIMEOUT:=6h}"
: "${BENCH_OUT:=bench-crawl.txt}"
export OBSERVER_BENCH_INSTANCES OBSERVER_BENCH_CONCURRENCY OBSERVER_BENCH_ISOLATION

cmd="OBSERVER_BENCH_INSTANCES=$OBSERVER_BENCH_INSTANCES OBSERVER_BENCH_CONCURRENCY=$OBSERVER_BENCH_CONCURRENCY OBSERVER_BENCH_ISOLATION=$OBSERVER_BENCH_ISOLATION go test -run '^\$' -bench CrawlPass -benchtime 1x -timeout $BENCH_TIMEOUT ./cmd/observer"
{
	echo "# command: $cmd"
	echo "# date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "# machine: nproc=$(nproc), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $(go version | cut -d' ' -f3)"
	echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$BENCH_OUT"

status=0
go test -run '^$' -bench CrawlPass -benchtime 1x -timeout "$BENCH_TIMEOUT" ./cmd/observer >>"$BENCH_OUT" 2>&1 || status=$?
echo "# load after:  $(cut -d' ' -f1-3 /proc/loadavg)" >>"$BENCH_OUT"

# The figures: each pass's summary as the benchmark logged it, then the
# result lines one metric per line.
echo
grep -E '^ +bench_test.go:[0-9]+: isolation=|^ {10}' "$BENCH_OUT" | sed 's/^ *bench_test.go:[0-9]*: //' || true
echo
awk '/^BenchmarkCrawlPass/ {
	print $1
	for (i = 3; i < NF; i += 2) printf "  %-22s %s\n", $(i+1), $i
}' "$BENCH_OUT"
tail -n 1 "$BENCH_OUT"
if [ "$status" -ne 0 ]; then
	echo "bench-crawl: go test failed (exit $status); the whole output is in $BENCH_OUT" >&2
	tail -n 30 "$BENCH_OUT" >&2
fi
exit "$status"
