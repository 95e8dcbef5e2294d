#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CUDA OOM -> serving again on a lower memory share, with no one there: gpulaunch (record-exit
# classifies the OOM, the next start steps the share down) against the same engine under a plain
# systemd unit with Restart=on-failure, which starts the same command, so the same OOM, forever.
# Both on a private systemd 252 (tests/integration/harness), with the mock SGLang and mock vLLM in
# a model that needs more room than the engine's default share leaves (MOCK_OOM_ABOVE=0.9: SGLang's
# 0.95 and vLLM's 0.92 run out of memory at every start; 0.9 and 0.87, one step down, serve).
#
#   bench/oom_bench.sh [BUILD_DIR]            RUNS=N (default 3) OOMs per engine under gpulaunch,
#                                             WINDOW=S (default 60) seconds of plain systemd each
#   BENCH_SMOKE=1 bench/oom_bench.sh BUILD_DIR one run each, a 5 s window, no figures: the test
#                                             suite's check that the bench still runs
#
# OOM = the journal's timestamp of the engine's "torch.OutOfMemoryError: CUDA out of memory" line;
# stop recorded = record-exit's cuda-oom event; restarted = the next start's process start; serving
# = its READY=1 (health 200), from the `started` event. Human actions: commands the bench runs
# between `gpulaunch up` and serving (none; it only reads). Needs root (the harness).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=$(cd "${1:-build}" && pwd)
smoke=${BENCH_SMOKE:-0}
runs=${RUNS:-3}
window=${WINDOW:-60}
((smoke)) && runs=1 && window=5
gpulaunch=${GPULAUNCH:-$build/src/gpulaunch} # GPULAUNCH: another build's binary
harness=$root/tests/integration/harness/systemd-harness.sh
work=$build/bench-oom
state=$work/state
load=${LOAD_SECONDS:-2}
((smoke)) && load=0.5

"$harness" poweroff "$state" >/dev/null 2>&1 || true
rm -rf "$work"
mkdir -p "$work/profiles" "$work/out"
bash mock/install.sh "$work/venv" >/dev/null
"$harness" boot "$state" >/dev/null
trap '"$harness" poweroff "$state" >/dev/null 2>&1 || true' EXIT
inside() { "$harness" exec "$state" -- "$@"; }
G=("$gpulaunch" -P "$work/profiles")

# name kind port: a profile for the engine, the restart delay as short as a user would set it.
profile() {
  local load_var=MOCK_SGLANG_LOAD_SECONDS
  [[ $2 == vllm ]] && load_var=MOCK_VLLM_LOAD_SECONDS
  cat >"$work/profiles/$1.toml" <<TOML
[engine]
kind = "$2"
venv = "$work/venv"
[model]
path = "/models/mock"
[server]
port = $3
[restart]
delay = "1s"
max_delay = "1s"
[env]
$load_var = "$load"
MOCK_OOM_ABOVE = "0.9"
TOML
}

# One OOM under gpulaunch: up (its first start runs out of memory), then wait, doing nothing, until
# the unit serves again. Prints "oom_usec stop_usec restart_usec ready_usec share".
gpulaunch_run() {
  local name=$1 kind=$2 flag
  flag=--mem-fraction-static
  [[ $kind == vllm ]] && flag=--gpu-memory-utilization
  inside "${G[@]}" up "$name" --runtime --force >/dev/null 2>&1 || true # the first start OOMs
  for _ in $(seq 1 120); do
    [[ $(inside systemctl is-active "gpulaunch-$name.service" || true) == active ]] && break
    sleep 0.5
  done
  inside journalctl -u "gpulaunch-$name.service" -o json >"$work/out/$name.journal"
  inside "${G[@]}" events "$name" --json >"$work/out/$name.events"
  inside cat "/var/lib/gpulaunch/$name/engine/mock-$kind-argv.json" >"$work/out/$name.argv"
  inside "${G[@]}" down "$name" --runtime --purge >/dev/null 2>&1 || true
  python3 - "$work/out/$name" "$flag" <<'PY'
import json, sys
base, flag = sys.argv[1], sys.argv[2]
oom = None
for line in open(base + ".journal"):
    entry = json.loads(line)
    message = entry.get("MESSAGE")
    if isinstance(message, str) and "CUDA out of memory" in message:
        oom = int(entry["__REALTIME_TIMESTAMP"])
        break
events = json.load(open(base + ".events"))
stop = next(e["time_usec"] for e in events if e["class"] == "cuda-oom")
start = next(e["start"] for e in events if e["class"] == "started" and e["time_usec"] > stop)
argv = json.load(open(base + ".argv"))
share = argv[argv.index(flag) + 1]
print(oom, stop, start["process_start_usec"], start["ready_usec"], share)
PY
}

# The same engine, the same command line, under a unit of its own: Restart=on-failure, RestartSec=1
# (gpulaunch's delay above), and StartLimitIntervalSec=0, without which systemd gives up after five
# starts in 10 s (start-limit-hit) and never serves either. Watched for `window` seconds: the
# OOMs in its journal, and whether its health ever answered 200 (curl every 0.25 s).
plain_run() {
  local name=$1 kind=$2 port=$3 exec load_var=MOCK_SGLANG_LOAD_SECONDS
  exec="$work/venv/bin/sglang serve --model-path /models/mock --port $port"
  if [[ $kind == vllm ]]; then
    exec="$work/venv/bin/vllm serve /models/mock --port $port"
    load_var=MOCK_VLLM_LOAD_SECONDS
  fi
  cat >"$work/out/$name.service" <<UNIT
[Unit]
StartLimitIntervalSec=0
[Service]
ExecStart=$exec
Environment=HOME=/tmp MOCK_OOM_ABOVE=0.9 $load_var=$load
Restart=on-failure
RestartSec=1
UNIT
  inside cp "$work/out/$name.service" /etc/systemd/system/
  inside systemctl daemon-reload
  inside systemctl start --no-block "$name.service"
  inside timeout "$window" sh -c "while :; do
      curl -sf -o /dev/null http://127.0.0.1:$port/health && echo 200 >> /tmp/$name.served
      sleep 0.25; done" >/dev/null 2>&1 || true
  local served ooms restarts
  served=$(inside sh -c "cat /tmp/$name.served 2>/dev/null | wc -l")
  # Starts that ran out of memory: invocations whose lines say so (SGLang prints it twice).
  ooms=$(inside journalctl -u "$name.service" -o json | python3 -c '
import json, sys
print(len({e.get("_SYSTEMD_INVOCATION_ID") for e in map(json.loads, sys.stdin)
           if "CUDA out of memory" in str(e.get("MESSAGE"))}))')
  restarts=$(inside systemctl show -P NRestarts "$name.service")
  inside systemctl stop "$name.service"
  echo "$ooms $restarts $served"
}

command -v curl >/dev/null || ((smoke)) || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null
port=31441 # tests/README's block 31441-31444: one port per engine and side, the runs one by one
for kind in sglang vllm; do
  : >"$work/out/$kind.gl"
  # A profile per run: the history keeps the step-down level, and the next start would serve.
  for ((i = 0; i < runs; i++)); do
    profile "oom$kind$i" "$kind" "$port"
    gpulaunch_run "oom$kind$i" "$kind" >>"$work/out/$kind.gl"
  done
  plain_run "plain$kind" "$kind" $((port + 1)) >"$work/out/$kind.plain"
  port=$((port + 2))
done

python3 - "$work/out" "$smoke" "$window" <<'PY'
import statistics, sys
out, smoke, window = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
ms = lambda a, b: (b - a) / 1000
failed = []
for kind in ("sglang", "vllm"):
    rows = [line.split() for line in open(f"{out}/{kind}.gl") if line.strip()]
    ooms, restarts, served = map(int, open(f"{out}/{kind}.plain").read().split())
    stepped = {"sglang": "0.9", "vllm": "0.87"}[kind]
    if not rows or any(r[4] != stepped for r in rows):
        failed.append(f"{kind}: gpulaunch did not serve on {stepped} ({rows})")
    if ooms < 2 or served:
        failed.append(f"{kind}: plain systemd: {ooms} OOMs, health 200 {served} times")
    if smoke:
        continue
    total = [ms(int(r[0]), int(r[3])) for r in rows]
    recorded = [ms(int(r[0]), int(r[1])) for r in rows]
    restarted = [ms(int(r[1]), int(r[2])) for r in rows]
    ready = [ms(int(r[2]), int(r[3])) for r in rows]
    med = statistics.median
    print(f"{kind}: gpulaunch, {len(rows)} OOMs: OOM -> serving on {rows[0][4]} median "
          f"{med(total):.0f} ms ({', '.join(f'{t:.0f}' for t in total)}); human actions 0")
    print(f"  OOM line -> stop recorded {med(recorded):.0f} ms, -> engine restarted "
          f"{med(restarted):.0f} ms (restart.delay 1s), -> READY=1 {med(ready):.0f} ms")
    print(f"{kind}: plain systemd (Restart=on-failure, RestartSec=1): {ooms} OOMs and {restarts} "
          f"restarts in {window} s, serving never ({served} health 200s)")
if failed:
    print("oom_bench: " + "; ".join(failed), file=sys.stderr)
    sys.exit(1)
if smoke:
    print("oom_bench: smoke ok")
PY
