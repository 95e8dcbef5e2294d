#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Engine death -> serving again: gpulaunch (on a private systemd 252, tests/integration/harness)
# against supervisord (Debian's `supervisor`, a private instance with its own configuration in
# the build directory) restarting the same engine after the same crash, and gpulaunch's time
# split by phase from the journal's timestamps.
#
#   bench/restart_bench.sh [BUILD_DIR] [CRASHES]    LOAD_SECONDS=3 (the engine's load), DELAY=1
#                                                   (restart.delay, seconds)
#   BENCH_SMOKE=1 bench/restart_bench.sh BUILD_DIR  one crash each, a 0.5 s load, no figures: the
#                                                   test suite's check that the bench still runs
#
# The engine is bench/supervise_engine.sh: the mock SGLang loading for LOAD_SECONDS, serving
# (/health 200, the moment written to ready.N for its Nth start), then exiting 3 two seconds
# later; it stamps each start and death. Serving = that start's health 200. gpulaunch runs it as
# a `kind = "command"` profile with `restart.delay = max_delay = DELAY` (budget out of reach);
# supervisord with `autorestart=true`. Needs root (harness, apt).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
smoke=${BENCH_SMOKE:-0}
crashes=${2:-7}
load=${LOAD_SECONDS:-3}
delay=${DELAY:-1}
if ((smoke)); then crashes=1 load=0.5; fi
crash_after=$(awk -v l="$load" 'BEGIN { print l + 2 }')
work="$build/bench-restart"
gpulaunch="$build/src/gpulaunch"
harness="$here/tests/integration/harness/systemd-harness.sh"
rm -rf "$work" && mkdir -p "$work/profiles" "$work/gl" "$work/sv"
load_before=$(cut -d" " -f1-3 /proc/loadavg)
bash "$here/mock/install.sh" "$work/venv" >/dev/null

if ! command -v supervisord >/dev/null; then
  # A smoke run installs nothing; scripts/install-deps.sh installs supervisor.
  if ((smoke)); then echo "restart_bench: supervisord is not installed" >&2; exit 77; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq supervisor >/dev/null
  # The package enables its own daemon where systemd is PID 1; it is not here. Ours is private.
fi
# Waits (up to a bound) until the engine has served after its last death: ready.(CRASHES+1).
served_again() {  # COMMAND-PREFIX... DIR
  local dir=${*: -1}
  for _ in $(seq 1 $((crashes * (${load%.*} + ${delay%.*} + 6) + 40))); do
    "${@:1:$#-1}" test -s "$dir/ready.$((crashes + 1))" && return 0
    sleep 1
  done
  echo "restart_bench: the engine did not serve again $crashes time(s) in $dir" >&2
  return 1
}
engine_env() {  # the engine's environment, the same under both supervisors
  printf '%s\n' "BENCH_VENV=$work/venv" MOCK_SGLANG_MODE=crash "MOCK_SGLANG_CRASH_AFTER=$crash_after" \
    MOCK_SGLANG_CRASH_EXIT=3 "MOCK_SGLANG_LOAD_SECONDS=$load"
}

# --- gpulaunch on systemd ----------------------------------------------------------------------
# The engine stamps into its own state directory, the one place the unit lets it write
# (ProtectSystem=strict), which only the private systemd's namespace sees.
engine_dir=/var/lib/gpulaunch/benchrs/engine
{
  cat <<TOML
[engine]
kind = "command"
argv = ["$here/bench/supervise_engine.sh", "--port", "31451", "--model-path", "/models/mock"]
[server]
port = 31451
[restart]
delay = "${delay}s"
max_delay = "${delay}s"
budget = 1000
[env]
BENCH_DIR = "$engine_dir"
TOML
  engine_env | sed 's/^\([^=]*\)=\(.*\)$/\1 = "\2"/'
} > "$work/profiles/benchrs.toml"
state="$work/harness"
"$harness" boot "$state" >/dev/null
trap '"$harness" poweroff "$state" >/dev/null 2>&1 || true' EXIT
inside() { "$harness" exec "$state" -- "$@"; }
inside "$gpulaunch" -P "$work/profiles" up benchrs --runtime --force >/dev/null 2>&1 || true
served_again inside "$engine_dir" || true
inside sh -c "cd $engine_dir && tar cf - starts deaths ready.*" | tar xf - -C "$work/gl"
inside journalctl -u gpulaunch-benchrs.service -o json --no-pager > "$work/gl/journal.json"
inside "$gpulaunch" events benchrs --json > "$work/gl/events.json"
inside "$gpulaunch" -P "$work/profiles" down benchrs --runtime --purge >/dev/null 2>&1 || true
"$harness" poweroff "$state" >/dev/null 2>&1 || true
trap - EXIT

# --- supervisord -------------------------------------------------------------------------------
cat > "$work/sv/supervisord.conf" <<CONF
[supervisord]
nodaemon=true
logfile=$work/sv/supervisord.log
pidfile=$work/sv/supervisord.pid
loglevel=info
[program:mock]
command=$here/bench/supervise_engine.sh --port 31452 --model-path /models/mock
autorestart=true
startsecs=1
startretries=1000
stopasgroup=true
killasgroup=true
environment=BENCH_DIR="$work/sv",$(engine_env | sed 's/=\(.*\)$/="\1"/' | paste -sd, -)
stdout_logfile=$work/sv/mock.log
redirect_stderr=true
CONF
supervisord -c "$work/sv/supervisord.conf" >/dev/null 2>&1 &
sv=$!
served_again env "$work/sv" || true
kill "$sv"; wait "$sv" 2>/dev/null || true
# supervisord stopped while it was restarting the mock can leave that start running (the mock
# drains on SIGTERM after its wrapper is gone): end each process group this run's engines led
# (supervisord makes each program a group leader; bench/supervise_engine.sh writes its pid) that
# still has a member running this run's venv.
leftovers() {
  local group member
  for group in $(cat "$work/sv/pids" 2>/dev/null); do
    for member in $(pgrep -g "$group"); do
      grep -qs "$work/venv" "/proc/$member/cmdline" && { echo "$group"; break; }
    done
  done
}
for group in $(leftovers); do kill -TERM -- "-$group" 2>/dev/null || true; done
for _ in $(seq 1 50); do [ -z "$(leftovers)" ] && break; sleep 0.1; done
for group in $(leftovers); do kill -KILL -- "-$group" 2>/dev/null || true; done

((smoke)) || echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); load average $load_before at the start, $(cut -d" " -f1-3 /proc/loadavg) at the end"
args=(--crashes "$crashes" --delay "$delay")
((smoke)) && args+=(--smoke)
python3 "$here/bench/restart_phases.py" "${args[@]}" "$work/gl" "$work/sv"
