#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# How long after the engine's /health turns 200 does `gpulaunch up` return? Against what users
# write by hand: `systemctl start --no-block` and a loop of `systemctl is-active` plus curl every
# second. Both run in a private systemd (tests/integration/harness) on the mock SGLang, which
# writes the moment its health turned 200 (MOCK_SGLANG_READY_FILE); the clock is shared.
# Usage: bench/up_ready_bench.sh [BUILD_DIR]   (RUNS=N, default 7)
#        BENCH_SMOKE=1 bench/up_ready_bench.sh BUILD_DIR   one run, no figures: the test suite's
#        check that the bench still runs
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=$(cd "${1:-build}" && pwd)
runs=${RUNS:-7}
smoke=${BENCH_SMOKE:-0}
((smoke)) && runs=1
gpulaunch=$build/src/gpulaunch
harness=$root/tests/integration/harness/systemd-harness.sh
work=$build/bench-up
state=$work/state
command -v curl >/dev/null || ((smoke)) || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null

"$harness" poweroff "$state" >/dev/null 2>&1 || true
rm -rf "$work"
mkdir -p "$work/profiles"
bash mock/install.sh "$work/venv" >/dev/null
cat >"$work/profiles/bench.toml" <<TOML
[engine]
kind = "sglang"
venv = "$work/venv"
[model]
path = "/models/bench"
[server]
port = 31100
[env]
MOCK_SGLANG_LOAD_SECONDS = "2"
MOCK_SGLANG_READY_FILE = "/var/lib/gpulaunch/bench/engine/ready"
TOML
"$harness" boot "$state" >/dev/null
trap '"$harness" poweroff "$state" >/dev/null 2>&1 || true' EXIT
inside() { "$harness" exec "$state" -- "$@"; }
unit=gpulaunch-bench.service
G=("$gpulaunch" -P "$work/profiles")
inside "${G[@]}" up bench --runtime --force >/dev/null

# The unit can write only its own state directory (ProtectSystem=strict), which only the
# namespace sees.
latency_ms() {
  local ready
  ready=$(inside cat /var/lib/gpulaunch/bench/engine/ready)
  python3 -c "import sys; print(round((float(sys.argv[1]) - float(sys.argv[2])) * 1000))" "$1" "$ready"
}

up_results=() loop_results=()
for ((i = 0; i < runs; i++)); do
  inside systemctl stop "$unit"
  inside rm -f /var/lib/gpulaunch/bench/engine/ready
  done_at=$(inside sh -c "'$gpulaunch' -P '$work/profiles' up bench --runtime --force >/dev/null && date +%s.%N")
  up_results+=("$(latency_ms "$done_at")")

  inside systemctl stop "$unit"
  inside rm -f /var/lib/gpulaunch/bench/engine/ready
  done_at=$(inside sh -c "systemctl start --no-block $unit; until systemctl is-active -q $unit && curl -sf http://127.0.0.1:31100/health >/dev/null; do sleep 1; done; date +%s.%N")
  loop_results+=("$(latency_ms "$done_at")")
done

if ((smoke)); then
  [[ ${up_results[0]} =~ ^-?[0-9]+$ && ${loop_results[0]} =~ ^-?[0-9]+$ ]] ||
    { echo "up_ready_bench: no latency measured (${up_results[*]} / ${loop_results[*]})" >&2; exit 1; }
  echo "up_ready_bench: smoke ok"
  exit 0
fi
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
up_median=$(median "${up_results[@]}")
loop_median=$(median "${loop_results[@]}")
echo "runs: $runs"
echo "gpulaunch up returns after health 200:        median ${up_median} ms  (${up_results[*]})"
echo "systemctl is-active + curl loop, 1 s polling: median ${loop_median} ms  (${loop_results[*]})"
python3 -c "import sys; u, l = map(float, sys.argv[1:]); print(f'ratio: the loop notices {l / max(u, 1):.1f}x later than up')" "$up_median" "$loop_median"
