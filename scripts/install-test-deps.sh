#!/bin/sh
# install-test-deps.sh: install what `make test` needs beyond Go: Debian's
# chromium for the browser tests (build/browser_test.go, build/demo_test.go),
# curl for the demo script, and iproute2 (ip) for the hostile-server test's
# network namespace (cmd/observer/hostile_test.go), and Debian's hugo
# (0.111.3 on Debian 12), the reference the builder is compared with: the
# public Hugo themes under build/testdata/themes are built with both, and
# scripts/bench-hugo.sh times it. --hugo is accepted and changes nothing.
# Idempotent: installs nothing that is already there. Needs root (apt-get).
set -eu

want=""
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || want="chromium"
command -v curl >/dev/null 2>&1 || want="$want curl"
command -v ip >/dev/null 2>&1 || want="$want iproute2"
command -v hugo >/dev/null 2>&1 || want="$want hugo"
for arg in "$@"; do
	case "$arg" in
	--hugo) ;;
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
