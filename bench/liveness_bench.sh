#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Liveness (server.liveness): how long a wedged engine (/health 200, no forward progress) keeps
# its unit "active", and what the probing costs, against a Kubernetes-style HTTP liveness probe on
# /health.
#
#   bench/liveness_bench.sh [BUILD_DIR] [WEDGES] [WINDOW_SECONDS]
#   BENCH_SMOKE=1 bench/liveness_bench.sh BUILD_DIR   one wedge, no figures: the test suite's
#                                                    check that the bench still runs
#
# 1. Wedge -> classified stop: the mock vLLM on the private systemd 252 (tests/integration/harness)
#    with liveness_interval 5 s and liveness_timeout 10 s (the smallest allowed); the script
#    touches the mock's wedge file (MOCK_WEDGE_FILE) and times record-exit's `stalled` event (its
#    time_usec) and the restart.
# 2. Requests per hour: the mock vLLM at the default interval and timeout, idle and busy with
#    progress (MOCK_BACKGROUND_REQUESTS), counting every request in its access log over WINDOW
#    seconds, scaled to an hour.
# 3. Kubernetes' httpGet liveness on /health (periodSeconds 10, timeoutSeconds 1,
#    failureThreshold 3, its defaults) against the same wedged mock: how many failures it sees.
# Needs root (the harness).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
wedges=${2:-5}
window=${3:-120}
smoke=${BENCH_SMOKE:-0}
((smoke)) && wedges=1
work="$build/bench-liveness"
gpulaunch="$build/src/gpulaunch"
harness="$here/tests/integration/harness/systemd-harness.sh"
rm -rf "$work" && mkdir -p "$work/profiles"
bash "$here/mock/install.sh" "$work/venv" >/dev/null
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

profile() {  # NAME PORT SERVER_KEYS ENV
  cat > "$work/profiles/$1.toml" <<TOML
[engine]
kind = "vllm"
venv = "$work/venv"
[model]
path = "/models/mock"
[server]
port = $2
$3
[restart]
delay = "1s"
max_delay = "1s"
budget = 1000
[env]
MOCK_VLLM_LOAD_SECONDS = "0.5"
$4
TOML
}

state="$work/harness"
"$harness" boot "$state" >/dev/null
trap '"$harness" poweroff "$state" >/dev/null 2>&1 || true' EXIT
inside() { "$harness" exec "$state" -- "$@"; }
gl() { inside "$gpulaunch" -P "$work/profiles" "$@"; }
restarts() { gl status "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["restarts"])'; }
stalls() { gl events "$1" --json | python3 -c 'import json,sys; print(sum(e["class"] == "stalled" for e in json.load(sys.stdin)))'; }

# --- 1. wedge -> classified stop -> restart ----------------------------------------------------
profile benchwedge 31341 $'liveness = "metrics"\nliveness_interval = "5s"\nliveness_timeout = "10s"' \
  "MOCK_WEDGE_FILE = \"$work/wedge\""
gl up benchwedge --runtime --force >/dev/null
: > "$work/to_stop"; : > "$work/to_restart"
for i in $(seq 1 "$wedges"); do
  sleep 3  # serving, probed healthy
  before=$(restarts benchwedge)
  wedged=$(date +%s%N)
  touch "$work/wedge"
  for _ in $(seq 1 600); do [ "$(stalls benchwedge)" -ge "$i" ] && break; sleep 0.1; done
  rm -f "$work/wedge"
  for _ in $(seq 1 600); do [ "$(restarts benchwedge)" -gt "$before" ] && break; sleep 0.1; done
  restarted=$(date +%s%N)
  stop_usec=$(gl events benchwedge --json | python3 -c 'import json,sys; print([e for e in json.load(sys.stdin) if e["class"] == "stalled"][-1]["time_usec"])')
  echo $(((stop_usec * 1000 - wedged) / 1000000)) >> "$work/to_stop"
  echo $(((restarted - wedged) / 1000000)) >> "$work/to_restart"
  for _ in $(seq 1 300); do
    [ "$(gl status benchwedge --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["state"])')" = active ] && break
    sleep 0.1
  done
done
gl events benchwedge --json | python3 -c 'import json,sys; e=[e for e in json.load(sys.stdin) if e["class"] == "stalled"][-1]; print("last stall:", e["evidence"]); print("threads:  ", e.get("thread_dump"))'
gl down benchwedge --runtime --purge >/dev/null 2>&1 || true
if ((smoke)); then  # the wedge was classified as a stall and restarted: the bench still runs
  grep -qE '^-?[0-9]+$' "$work/to_stop" || { echo "liveness_bench: no stall measured" >&2; exit 1; }
  echo "liveness_bench: smoke ok"
  exit 0
fi
printf 'wedge -> classified stop (record-exit event): median %s ms (%s)\n' \
  "$(median < "$work/to_stop")" "$(paste -sd, "$work/to_stop")"
printf 'wedge -> restart (NRestarts, polled every 0.1 s): median %s ms (%s)\n' \
  "$(median < "$work/to_restart")" "$(paste -sd, "$work/to_restart")"

# --- 2. requests per hour at the defaults ------------------------------------------------------
count() {  # NAME ENV -> "health metrics generate"
  profile "$1" 31342 "" "$2"
  gl up "$1" --runtime --force >/dev/null
  sleep 2
  local since
  since=$(inside date '+%Y-%m-%d %H:%M:%S')
  sleep "$window"
  inside journalctl -u "gpulaunch-$1.service" --since "$since" -o cat --no-pager > "$work/$1.log"
  gl down "$1" --runtime --purge >/dev/null 2>&1 || true
  echo "$(grep -c '"GET /health ' "$work/$1.log" || true)" \
    "$(grep -c '"GET /metrics ' "$work/$1.log" || true)" \
    "$(grep -c '"POST /v1/completions ' "$work/$1.log" || true)"
}
per_hour() { awk -v n="$1" -v w="$window" 'BEGIN { printf "%.0f", n * 3600 / w }'; }
read -r idle_h idle_m idle_g <<< "$(count benchidle "")"
read -r busy_h busy_m busy_g <<< "$(count benchbusy $'MOCK_BACKGROUND_REQUESTS = "4"\nMOCK_SLOW_SECONDS = "5"')"
printf 'requests per hour at the default liveness settings (window %s s):\n' "$window"
printf '  idle:               /metrics %s  generation %s  (/health %s, the watchdog feed)\n' \
  "$(per_hour "$idle_m")" "$(per_hour "$idle_g")" "$(per_hour "$idle_h")"
printf '  busy, progressing:  /metrics %s  generation %s  (/health %s)\n' \
  "$(per_hour "$busy_m")" "$(per_hour "$busy_g")" "$(per_hour "$busy_h")"

# --- 3. Kubernetes-style httpGet liveness on /health against the wedge --------------------------
port=31343
MOCK_WEDGE_AFTER=1 MOCK_VLLM_LOAD_SECONDS=0.2 HOME="$work" \
  "$work/venv/bin/vllm" serve /models/mock --host 127.0.0.1 --port "$port" > "$work/k8s.log" 2>&1 &
engine=$!
python3 - "$port" <<'PY'
import sys, time, urllib.request
port = sys.argv[1]
period, timeout, threshold, probes = 1.0, 1.0, 3, 30  # k8s's 10 s period, compressed tenfold
for _ in range(100):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read(); break
    except OSError:
        time.sleep(0.1)
time.sleep(2)  # wedged (MOCK_WEDGE_AFTER=1)
try:
    urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/completions", timeout=2,
                           data=b'{"prompt": "s", "max_tokens": 1}').read()
    print("k8s: the mock did not wedge"); sys.exit(1)
except OSError:
    pass
failures = streak = 0
fired = None
for n in range(probes):
    try:
        ok = urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=timeout).status == 200
    except OSError:
        ok = False
    failures += not ok
    streak = 0 if ok else streak + 1
    if streak >= threshold and fired is None:
        fired = n
    time.sleep(period)
print(f"k8s httpGet /health on the wedged engine: {probes} probes, {failures} failed, "
      f"restart: {'never' if fired is None else f'after probe {fired}'}")
PY
kill "$engine" 2>/dev/null; wait "$engine" 2>/dev/null || true
