#!/usr/bin/env bash
# The offline demo (`make demo`): crawl a simulated Fediverse on loopback
# over two simulated weeks and build the site from what was seen. Nothing
# leaves the machine: bin/fedisim answers for every host name through
# --connect-to, with its own CA, and the address guard lets only 127.0.0.0/8
# through.
#
# Everything goes under $DEMO_DIR (default demo/, git-ignored), which is
# emptied first so that every run starts from the same seed:
#
#   demo/observer.toml   the demo's config (seed list = the simulator's)
#   demo/content/        a copy of the site's content pages
#   demo/sim/            the simulator's CA, seed list, --connect-to rules, addresses and log
#   demo/data/           the crawled snapshots (checks, discoveries, passes)
#   demo/logs/           one log per crawl pass
#   demo/public/         the built site (not public/, so that `make deploy`
#                        never publishes the demo by mistake)
#
# The simulated days are the last 14 days before today (UTC), so that the
# demo's dates look current and `observer serve`, which builds with the
# wall clock, shows the same lists as the demo's own build.
#
# Settings (environment): DEMO_DIR, DEMO_INSTANCES (3000), DEMO_SEED (42),
# DEMO_DAYS (14), DEMO_PASS_HOURS ("6 18": the hours of each day's passes),
# DEMO_DAY0 (YYYY-MM-DD, default DEMO_DAYS days before today),
# DEMO_ISOLATION (crawl --isolation: none, the default, or process), OBSERVER
# and FEDISIM (the binaries, default bin/observer and bin/fedisim).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

DEMO_DIR=${DEMO_DIR:-demo}
DEMO_INSTANCES=${DEMO_INSTANCES:-3000}
DEMO_SEED=${DEMO_SEED:-42}
DEMO_DAYS=${DEMO_DAYS:-14}
DEMO_PASS_HOURS=${DEMO_PASS_HOURS:-"6 18"}
DEMO_ISOLATION=${DEMO_ISOLATION:-none}
OBSERVER=${OBSERVER:-bin/observer}
FEDISIM=${FEDISIM:-bin/fedisim}

die() { echo "demo: $*" >&2; exit 1; }
say() { echo "demo: $*"; }

for tool in curl date; do
  command -v "$tool" >/dev/null || die "needs $tool"
done
[[ -x $OBSERVER ]] || die "$OBSERVER not found: run make build (or make demo)"
[[ -x $FEDISIM ]] || die "$FEDISIM not found: run make build (or make demo)"
# The demo empties data/, content/ and others in DEMO_DIR, so it must not be
# / or hold the repository, whatever the spelling (., .., //, a link to /).
mkdir -p "$DEMO_DIR"
dir=$(cd "$DEMO_DIR" && pwd -P)
rootp=$(pwd -P)
if [[ $dir =~ ^/+$ || $rootp == "$dir" || $rootp == "$dir"/* ]]; then
  die "refusing DEMO_DIR=$DEMO_DIR ($dir holds the repository)"
fi
[[ $DEMO_INSTANCES =~ ^[0-9]+$ && $DEMO_DAYS =~ ^[0-9]+$ && $DEMO_SEED =~ ^[0-9]+$ ]] ||
  die "DEMO_INSTANCES, DEMO_DAYS and DEMO_SEED must be whole numbers"

# Absolute paths: the observer runs inside the demo directory (the site
# directory, where content/ and observer.toml are).
observer=$(cd "$(dirname "$OBSERVER")" && pwd)/$(basename "$OBSERVER")
fedisim=$(cd "$(dirname "$FEDISIM")" && pwd)/$(basename "$FEDISIM")

if [[ -n ${DEMO_DAY0:-} ]]; then
  day0=$DEMO_DAY0
else
  day0=$(date -u -d "today - $DEMO_DAYS days" +%F) || die "needs GNU date (or set DEMO_DAY0=YYYY-MM-DD)"
fi
day0_epoch=$(date -u -d "$day0 00:00:00" +%s) || die "invalid DEMO_DAY0 $day0"
stamp() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }

# A fresh demo directory; only the demo's own subdirectories are removed.
rm -rf "$dir/data" "$dir/sim" "$dir/logs" "$dir/public" "$dir/content" "$dir"/.public.build-*
mkdir -p "$dir/sim" "$dir/logs"
if [[ -d content ]]; then
  cp -R content "$dir/content"
fi

# The simulator: a random free port for TLS and one for its control
# endpoint, both on loopback; it prints them once it listens.
sim_pid=""
cleanup() {
  local rc=$?
  if [[ -n $sim_pid ]] && kill -0 "$sim_pid" 2>/dev/null; then
    kill "$sim_pid" 2>/dev/null || true
    wait "$sim_pid" 2>/dev/null || true
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "starting the simulated Fediverse: $DEMO_INSTANCES instances and the hostile hosts, seed $DEMO_SEED, day 0 = $day0"
"$fedisim" --seed "$DEMO_SEED" --instances "$DEMO_INSTANCES" --hostile \
  --listen 127.0.0.1:0 --control 127.0.0.1:0 --day0 "$day0" --day 0 \
  --ca-out "$dir/sim/ca.pem" --seeds-out "$dir/sim/seeds.txt" --seeds 10 \
  --connect-to-out "$dir/sim/connect-to.txt" \
  --log-level warn >"$dir/sim/fedisim.out" 2>"$dir/sim/fedisim.log" &
sim_pid=$!

connect_to="" control=""
for _ in $(seq 1 300); do
  kill -0 "$sim_pid" 2>/dev/null || { cat "$dir/sim/fedisim.log" >&2; die "the simulator exited at start"; }
  connect_to=$(sed -n 's/^connect-to: //p' "$dir/sim/fedisim.out")
  control=$(sed -n 's/^control: //p' "$dir/sim/fedisim.out")
  if [[ -n $connect_to && -n $control ]]; then
    break
  fi
  sleep 0.1
done
[[ -n $connect_to && -n $control ]] || die "the simulator did not report its addresses within 30 s (see $dir/sim/fedisim.log)"
curl -fsS --max-time 5 "${control}day" >/dev/null || die "the simulator's control endpoint $control does not answer"
say "simulator at ${connect_to#*:443:} (control $control)"

# The demo's config: the simulator's seed list, short check deadlines (every
# real answer comes from loopback in milliseconds; only the hostile hosts
# stall), a per-pass budget so that the demo stays within minutes, and
# state thresholds scaled to two weeks.
cat >"$dir/observer.toml" <<EOF
# Written by scripts/demo.sh for the offline demo; rewritten on every run.
[site]
title = "Fediverse Observer (offline demo)"
base_url = "http://localhost:1313/"
description = "A demo crawl of a simulated Fediverse: $DEMO_INSTANCES generated instances over $DEMO_DAYS days."

[crawl]
contact_url = "https://github.com/fediverse-observer/observer"
seeds = "sim/seeds.txt"
blocklist = "blocklist.txt"
concurrency = 64
duration = "45s"
check_timeout = "5s"

# Two weeks is short for a lifecycle measured in weeks: hosts that stopped
# answering are rechecked daily rather than weekly, and more than three
# failures in a row over a week make a host dead, so that deaths show in the
# demo.
[state]
failures_to_dead = 3
inactive_interval = "29h"
inactive_jitter = "2h"
EOF
cat >"$dir/blocklist.txt" <<'EOF'
# Hosts whose admins asked not to be crawled (see docs/operations.md):
# exact hosts, or *.domain for a domain and all its subdomains.
*.fedi-spam-farm.online
EOF

# Checks run in this process by default: sandboxed checker processes cost
# seconds per pass, which 28 short passes multiply past the demo's three
# minutes, and the simulator's hostile hosts are ours. DEMO_ISOLATION=process
# runs the demo as production does.
# Each host goes to a loopback address of its own, as on the Internet, so
# the crawl is polite per address as it is there.
crawl_flags=(--config observer.toml --data data
  --allow-addr 127.0.0.0/8 --ca-cert sim/ca.pem --quiet --isolation "$DEMO_ISOLATION")
while read -r rule; do
  crawl_flags+=(--connect-to "$rule")
done <"$dir/sim/connect-to.txt"

# The passes: each sets the simulator's clock and the crawl's --now to the
# same moment, day0 + day + hour.
read -r -a hours <<<"$DEMO_PASS_HOURS"
passes=0 cut=0 started=$SECONDS
for ((day = 0; day < DEMO_DAYS; day++)); do
  for hour in "${hours[@]}"; do
    now=$(stamp $((day0_epoch + day * 86400 + hour * 3600)))
    curl -fsS --max-time 5 -X POST "${control}now?t=$now" >/dev/null ||
      die "could not set the simulator's clock to $now"
    passes=$((passes + 1))
    log=$dir/logs/pass-$(printf %02d "$passes").log
    rc=0
    (cd "$dir" && "$observer" crawl "${crawl_flags[@]}" --now "$now") >"$log" 2>&1 || rc=$?
    case $rc in
      0) ;;
      3) cut=$((cut + 1)) ;; # cut short by its budget: the rest is due next pass
      *)
        tail -n 20 "$log" >&2
        die "crawl pass at $now failed with exit code $rc (log: $log)"
        ;;
    esac
    printf 'demo: day %2d %s  %s%s\n' "$day" "${now:11:5}" \
      "$(grep -m1 '^pass ' "$log" | sed 's/^pass [^:]*: //' || true)" \
      "$([[ $rc == 3 ]] && echo '  (cut short: the rest is due next pass)' || true)"
  done
done
say "$passes passes in $((SECONDS - started)) s ($cut cut short); simulator: $(curl -fsS --max-time 5 "${control}stats" || echo '?')"

build_now=$(stamp $((day0_epoch + DEMO_DAYS * 86400)))
say "building the site for $build_now into $dir/public"
(cd "$dir" && "$observer" build --config observer.toml --data data --out public --now "$build_now") ||
  die "observer build failed"

rel=${dir#"$root"/}
echo
echo "The demo site is in $rel/public. To look at it:"
echo
echo "  (cd $rel && $observer serve --config observer.toml --data data)"
echo "      a live preview at http://localhost:1313/, rebuilt with today's clock"
echo
echo "or serve the built files as they are:"
echo
echo "  python3 -m http.server --directory $rel/public --bind 127.0.0.1 1313"
echo
echo "and open http://localhost:1313/ in a browser."
