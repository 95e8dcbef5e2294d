#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Engine death -> supervisor's decision -> engine restarted: gpulaunch (on a private systemd 252,
# tests/integration/harness) against supervisord (Debian's `supervisor`) restarting the same mock.
#
#   bench/supervise_bench.sh [BUILD_DIR] [CRASHES]
#   BENCH_SMOKE=1 bench/supervise_bench.sh BUILD_DIR   one crash each, no figures: the test suite's
#                                                      check that the bench still runs
#
# The engine is bench/supervise_engine.sh: the mock SGLang in `crash` mode (exit 3, 2 s after
# start), stamping its start and end. Decision = gpulaunch's record-exit event time / supervisord's
# "exited:" log line. Restart = the engine's next start stamp. Needs root (harness, apt).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
smoke=${BENCH_SMOKE:-0}
crashes=${2:-5}
((smoke)) && crashes=1
work="$build/bench-supervise"
gpulaunch="$build/src/gpulaunch"
harness="$here/tests/integration/harness/systemd-harness.sh"
rm -rf "$work" && mkdir -p "$work/profiles" "$work/gl" "$work/sv"
bash "$here/mock/install.sh" "$work/venv" >/dev/null

if ! command -v supervisord >/dev/null; then
  # A smoke run installs nothing; scripts/install-deps.sh installs supervisor.
  if ((smoke)); then echo "supervise_bench: supervisord is not installed" >&2; exit 77; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq supervisor >/dev/null
  # The package enables its own daemon where systemd is PID 1; it is not here. Ours is private.
fi

ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b - a) / 1e6 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# --- gpulaunch on systemd ----------------------------------------------------------------------
# The engine stamps into its own state directory, the one place the unit lets it write
# (ProtectSystem=strict), which only the private systemd's namespace sees.
engine_dir=/var/lib/gpulaunch/benchsv/engine
cat > "$work/profiles/benchsv.toml" <<TOML
[engine]
kind = "command"
argv = ["$here/bench/supervise_engine.sh", "--port", "31431", "--model-path", "/models/mock"]
[server]
port = 31431
[restart]
delay = "1s"
max_delay = "1s"
budget = 1000
[env]
BENCH_DIR = "$engine_dir"
BENCH_VENV = "$work/venv"
MOCK_SGLANG_MODE = "crash"
MOCK_SGLANG_CRASH_AFTER = "2"
MOCK_SGLANG_CRASH_EXIT = "3"
MOCK_SGLANG_LOAD_SECONDS = "0.5"
TOML
state="$work/harness"
"$harness" boot "$state" >/dev/null
trap '"$harness" poweroff "$state" >/dev/null 2>&1 || true' EXIT
inside() { "$harness" exec "$state" -- "$@"; }
inside "$gpulaunch" -P "$work/profiles" up benchsv --runtime --force >/dev/null 2>&1 || true
for _ in $(seq 1 $((crashes * 10 + 30))); do
  [ "$(inside sh -c "wc -l < $engine_dir/starts" 2>/dev/null || echo 0)" -gt "$crashes" ] && break
  sleep 1
done
inside cat "$engine_dir/starts" > "$work/gl/starts"
inside cat "$engine_dir/deaths" > "$work/gl/deaths"
inside "$gpulaunch" events benchsv --json > "$work/gl/events.json"
inside "$gpulaunch" -P "$work/profiles" down benchsv --runtime --purge >/dev/null 2>&1 || true
"$harness" poweroff "$state" >/dev/null 2>&1 || true
trap - EXIT
python3 - "$work/gl/events.json" > "$work/gl/decisions" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1])):
    if e["class"] == "crash":
        print(e["time_usec"] * 1000)
PY

# --- supervisord -------------------------------------------------------------------------------
cat > "$work/sv/supervisord.conf" <<CONF
[supervisord]
nodaemon=true
logfile=$work/sv/supervisord.log
pidfile=$work/sv/supervisord.pid
loglevel=info
[program:mock]
command=$here/bench/supervise_engine.sh --port 31432 --model-path /models/mock
autorestart=true
startsecs=1
startretries=1000
stopasgroup=true
killasgroup=true
environment=BENCH_DIR="$work/sv",BENCH_VENV="$work/venv",MOCK_SGLANG_MODE="crash",MOCK_SGLANG_CRASH_AFTER="2",MOCK_SGLANG_CRASH_EXIT="3",MOCK_SGLANG_LOAD_SECONDS="0.5"
stdout_logfile=$work/sv/mock.log
redirect_stderr=true
CONF
supervisord -c "$work/sv/supervisord.conf" &
sv=$!
for _ in $(seq 1 $((crashes * 10 + 30))); do
  [ "$(wc -l 2>/dev/null < "$work/sv/starts" || echo 0)" -gt "$crashes" ] && break
  sleep 1
done
kill "$sv"; wait "$sv" 2>/dev/null || true
# supervisord stopped while it was restarting the mock can leave that start running (it held the
# port into later tests): end whatever this run's own venv still runs, by its unique path.
pkill -TERM -f "^$work/venv/bin/python -m sglang.launch_server" 2>/dev/null || true
for _ in $(seq 1 50); do
  pgrep -f "^$work/venv/bin/python -m sglang.launch_server" >/dev/null || break
  sleep 0.1
done
pkill -KILL -f "^$work/venv/bin/python -m sglang.launch_server" 2>/dev/null || true
# "2026-11-29 17:20:01,123 INFO exited: mock (exit status 3; expected)" -> ns since epoch
grep ' exited: mock' "$work/sv/supervisord.log" | while read -r day time _; do
  echo "$(date -u -d "$day ${time%,*}" +%s)${time#*,}000000"
done > "$work/sv/decisions"

report() {  # DIR NAME
  local dir=$1 name=$2 n i
  n=$(wc -l < "$dir/deaths")
  : > "$dir/to_decision"; : > "$dir/to_restart"
  for i in $(seq 1 "$n"); do
    death=$(sed -n "${i}p" "$dir/deaths")
    decision=$(sed -n "${i}p" "$dir/decisions")
    restart=$(sed -n "$((i + 1))p" "$dir/starts")
    [ -n "$decision" ] && ms "$death" "$decision" >> "$dir/to_decision" && echo >> "$dir/to_decision"
    [ -n "$restart" ] && ms "$death" "$restart" >> "$dir/to_restart" && echo >> "$dir/to_restart"
  done
  printf '%-12s crashes %2s  death->decision median %5s ms (%s)  death->restart median %5s ms (%s)\n' \
    "$name" "$n" "$(grep . "$dir/to_decision" | median)" "$(grep . "$dir/to_decision" | paste -sd, -)" \
    "$(grep . "$dir/to_restart" | median)" "$(grep . "$dir/to_restart" | paste -sd, -)"
}
if ((smoke)); then
  # Each supervisor restarted the engine once and its decision was read: the bench still runs.
  for dir in gl sv; do
    [ "$(wc -l < "$work/$dir/starts")" -ge 2 ] && [ -s "$work/$dir/decisions" ] ||
      { echo "supervise_bench: $dir: no restart or no decision measured" >&2; exit 1; }
  done
  echo "supervise_bench: smoke ok"
  exit 0
fi
report "$work/gl" gpulaunch
report "$work/sv" supervisord
