#!/bin/sh
# install-test-deps.sh: install what `make test` needs beyond Go: Debian's
# chromium for the browser tests (build/browser_test.go, build/demo_test.go),
# curl for the demo script, and iproute2 (ip) for the hostile-server test's
# network namespace (cmd/observer/hostile_test.go). With --hugo, also
# Debian's hugo, which only scripts/bench-hugo.sh uses.
# Idempotent: installs nothing that is already there. Needs root (apt-get).
set -eu

want=""
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || want="chromium"
command -v curl >/dev/null 2>&1 || want="$want curl"
command -v ip >/dev/null 2>&1 || want="$want iproute2"
for arg in "$@"; do
	case "$arg" in
	--hugo) command -v hugo >/dev/null 2>&1 || want="$want hugo" ;;
	*) echo "usage: $0 [--hugo]" >&2; exit 2 ;;
	esac
done

if [ -z "$want" ]; then
	exit 0
fi
echo "installing:$want" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update
# shellcheck disable=SC2086 # word splitting of the package list is intended
apt-get install -y $want
