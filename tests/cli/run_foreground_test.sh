#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `gpulaunch run --foreground` as an ordinary user meets it (a Slurm step, a container): the real
# binary as a throwaway uid (setpriv, HOME in a scratch directory, no root and no systemd
# anywhere) with the mock SGLang (mock/). A CUDA OOM is classified from the captured lines and the
# next start is stepped down, the engine becomes ready, SIGTERM drains it and exits 0; a crash is
# restarted after the backoff until the budget is spent: exit 75; a profile that does not load
# exits 2 and starts nothing; a SIGTERM during the check exits 0 and starts nothing; a state
# directory of another user is refused. The loop's decisions
# are unit tests (tests/unit/run/foreground_test.cpp); this proves the wiring. Ports 31461-31463.
#
#   tests/cli/run_foreground_test.sh GPULAUNCH SOURCE_DIR FAKE_NVML_DIR
set -uo pipefail
gpulaunch=$1
src=$2
fake_nvml=$3
if ((EUID != 0)); then
  echo "SKIP: needs root to drop to a throwaway uid (setpriv)"
  exit 77
fi
failures=0
check() { # description, then a command that must succeed
  local what=$1
  shift
  if "$@"; then echo "ok   $what"; else
    echo "FAIL $what"
    failures=$((failures + 1))
  fi
}
uid=4242
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gl-foreground-XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  # An engine left behind by a failed check: its own process group, as `run` started it.
  for pid in $(sed -n 's/^gpulaunch: started engine, pid \([0-9]*\);.*/\1/p' "$scratch"/*.log 2>/dev/null); do
    kill -KILL -- "-$pid" 2>/dev/null
  done
  [[ -n ${KEEP_SCRATCH:-} ]] && echo "kept $scratch" || rm -rf "$scratch"
}
trap cleanup EXIT
chmod 755 "$scratch"
bash "$src/mock/install.sh" "$scratch/venv" >/dev/null
mkdir -p "$scratch/home/profiles"
# The node `check` judges before each start: one GPU behind the fake NVML (tests/fakes/nvml), a
# toolkit root as the rules read it (version.json, the runtime, the headers; nvcc never run), a
# model directory.
cuda=$scratch/cuda
mkdir -p "$cuda/bin" "$cuda/lib64" "$cuda/include" "$scratch/model" "$scratch/nvml"
printf '{"cuda": {"version": "13.0.2"}, "cuda_nvcc": {"version": "13.0.88"}}\n' >"$cuda/version.json"
printf '#!/bin/sh\nexit 1\n' >"$cuda/bin/nvcc"
chmod 755 "$cuda/bin/nvcc"
: >"$cuda/lib64/libcudart.so.13"
: >"$cuda/include/cuda_runtime.h"
printf '#define CUDA_VERSION 13000\n' >"$cuda/include/cuda.h"
cp "$fake_nvml/libnvidia-ml.so.1" "$scratch/nvml/"
printf 'driver 580.95.05\ncuda 13000\ngpu 12 0 97887 GPU-foreground-0 NVIDIA RTX PRO 6000\n' \
  >"$scratch/nvml/node.txt"
printf '{"architectures": ["LlamaForCausalLM"]}\n' >"$scratch/model/config.json"
chown -R "$uid:$uid" "$scratch/home"
home=$scratch/home

# As the user: HOME in the scratch directory, nothing of root's environment. setpriv and env exec
# the next program, so a background one's $! is gpulaunch itself.
as_user=(setpriv --reuid=$uid --regid=$uid --clear-groups -- env -i HOME="$home" PATH=/usr/bin:/bin
  LD_LIBRARY_PATH="$scratch/nvml" GPULAUNCH_FAKE_NVML="$scratch/nvml/node.txt")
G=("${as_user[@]}" "$gpulaunch" -P "$home/profiles")

# name port [extra [env] lines]: a mock SGLang profile, the restart delay as short as a user sets it.
profile() {
  local name=$1 port=$2
  shift 2
  cat >"$home/profiles/$name.toml" <<TOML
[engine]
kind = "sglang"
venv = "$scratch/venv"
[model]
path = "$scratch/model"
[toolkit]
cuda_home = "$cuda"
[server]
port = $port
drain_timeout = "10s"
[restart]
delay = "1s"
max_delay = "1s"
budget = 2
[env]
MOCK_SGLANG_LOAD_SECONDS = "0.4"
GPULAUNCH_FAKE_NVML = "$scratch/nvml/node.txt"
$(printf '%s\n' "$@")
TOML
  chown "$uid:$uid" "$home/profiles/$name.toml"
}

# waits up to $2 seconds for a line matching $3 in file $1
wait_for() {
  local file=$1 seconds=$2 pattern=$3 i
  for ((i = 0; i < seconds * 10; i++)); do
    grep -q -- "$pattern" "$file" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# --- a CUDA OOM, stepped down, ready, drained on SIGTERM ---
profile oom 31461 'MOCK_OOM_ABOVE = "0.9"'
"${G[@]}" run --foreground oom >"$scratch/oom.log" 2>&1 &
pid=$!
pids+=("$pid")
check "the stepped-down start becomes ready" wait_for "$scratch/oom.log" 40 "engine is serving"
state=$home/.local/state/gpulaunch/oom
check "the CUDA OOM was classified from the engine's own lines (no journal)" \
  grep -q "stop classified as cuda-oom: torch.OutOfMemoryError: CUDA out of memory" "$scratch/oom.log"
check "the next start stepped the memory share down" \
  grep -q "step-down (GPU memory level 1.*--mem-fraction-static" "$scratch/oom.log"
check "the engine's argv has the lower share" \
  python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); sys.exit(0 if float(a[a.index("--mem-fraction-static")+1]) <= 0.9 else 1)' \
  "$state/engine/mock-sglang-argv.json"
check "the metrics file beside the history says it serves, one step down" \
  wait_for "$state/gpulaunch_oom.prom" 5 'gpulaunch_ready{profile="oom"} 1'
check "and counts the CUDA OOM" grep -q 'gpulaunch_stops_total{profile="oom",class="cuda-oom"} 1' \
  "$state/gpulaunch_oom.prom"
kill -TERM "$pid"
wait "$pid"
status=$?
check "SIGTERM drains the engine and exits 0 (got $status)" test "$status" -eq 0
check "the drain was the engine's (SIGTERM forwarded, not a kill)" \
  grep -q "received Terminated, stopping the engine" "$scratch/oom.log"
check "the state directory is the user's own, 0700" \
  test "$(stat -c '%u %a' "$state")" = "$uid 700"
check "the history holds the OOM and the stop" \
  python3 -c 'import json,sys; k=[json.loads(l)["kind"] for l in open(sys.argv[1])]; sys.exit(0 if k[0]=="cuda-oom" and k[-1]=="clean" else 1)' \
  "$state/events.jsonl"
check "the caches are the user's, under XDG's default cache home" \
  test "$(stat -c %u "$home/.cache/gpulaunch/oom")" = "$uid"
check "no line of the run needed root or systemd" \
  bash -c "! grep -qiE 'permission denied|sd_bus|journal' '$scratch/oom.log'"

# --- a crash, restarted after the backoff, until the budget is spent: 75 ---
profile crashy 31462 'MOCK_SGLANG_MODE = "crash"' 'MOCK_SGLANG_CRASH_AFTER = "0.3"'
"${G[@]}" run --foreground crashy >"$scratch/crashy.log" 2>&1
status=$?
check "a spent crash-loop budget exits 75 for a requeue (got $status)" test "$status" -eq 75
check "the crash was restarted after the backoff" grep -q "backing off 1s after crash (failure 1 of 2)" "$scratch/crashy.log"
check "two starts, then the budget's stop" \
  test "$(grep -c 'started engine, pid' "$scratch/crashy.log")" -eq 2
check "the stay-down says why" grep -q "crash-loop budget" "$scratch/crashy.log"
check "and how to try again without systemd" \
  grep -q "then remove '$home/.local/state/gpulaunch/crashy/supervisor.json'" "$scratch/crashy.log"
"${G[@]}" run --foreground crashy >"$scratch/crashy-again.log" 2>&1
check "run again, the spent budget refuses at once (75, no start)" \
  bash -c "! grep -q 'started engine' '$scratch/crashy-again.log' && grep -q 'crash loop: 2 failures in a row' '$scratch/crashy-again.log'"
"${G[@]}" run --foreground crashy --reset-crash-loop >"$scratch/crashy-reset.log" 2>&1
check "--reset-crash-loop forgives the 2 failures, as up does" \
  grep -q "forgave 2 failure(s) of an earlier run (--reset-crash-loop)" "$scratch/crashy-reset.log"
check "and the engine starts again" grep -q "started engine, pid" "$scratch/crashy-reset.log"

# --- a configuration error: 2, nothing started ---
printf '[engine]\nkind = "sglang"\nvenv = "%s/venv"\nbogus_key = 1\n[model]\npath = "/m"\n' \
  "$scratch" >"$home/profiles/bad.toml"
"${G[@]}" run --foreground bad >"$scratch/bad.log" 2>&1
status=$?
check "a profile that does not load exits 2 (got $status)" test "$status" -eq 2
check "with its file:line:col" grep -q "bad.toml:4:1" "$scratch/bad.log"
check "and starts nothing" bash -c "! grep -q 'started engine' '$scratch/bad.log'"

# --- SIGTERM while the start is still judged (a scancel, or srun ending this rank because another
# refused): 0, nothing started. The check is held inside its driver query: the fake NVML reads a
# FIFO, whose writer (below) signals gpulaunch once it waits there, then answers every open. ---
profile early 31463
mkfifo -m 0644 "$scratch/nvml/held"
early_env=("${as_user[@]/#GPULAUNCH_FAKE_NVML=*/GPULAUNCH_FAKE_NVML=$scratch/nvml/held}")
"${early_env[@]}" "$gpulaunch" -P "$home/profiles" run --foreground early >"$scratch/early.log" 2>&1 &
pid=$!
pids+=("$pid")
python3 - "$scratch/nvml/held" "$pid" "$scratch/nvml/node.txt" <<'PY' >"$scratch/early-writer.log" 2>&1 &
import errno, os, signal, sys, time
fifo, pid, content = sys.argv[1], int(sys.argv[2]), open(sys.argv[3], "rb").read()
signalled, deadline = False, time.time() + 60
while time.time() < deadline:
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO until gpulaunch opens it to read
    except OSError as error:
        if error.errno != errno.ENXIO:
            raise
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            sys.exit(0 if signalled else 1)
        time.sleep(0.005)
        continue
    if not signalled:  # gpulaunch waits in its check's driver query: the stop arrives there
        os.kill(pid, signal.SIGTERM)
        signalled = True
    try:
        os.write(fd, content)
    except BrokenPipeError:  # the open met the last reader before it closed: it read already
        pass
    os.close(fd)
sys.exit(1)
PY
writer=$!
wait "$pid"
status=$?
wait "$writer"
check "the FIFO's writer signalled gpulaunch inside its check" test $? -eq 0
check "a SIGTERM during the check exits 0, not the signal's 143 (got $status)" test "$status" -eq 0
check "and says the engine was not started" \
  grep -q "a stop signal arrived during the check; the engine was not started" "$scratch/early.log"
check "and started nothing" bash -c "! grep -q 'started engine' '$scratch/early.log'"

# --- a state directory the user does not own: refused, 2 ---
mkdir -p "$scratch/roots"
"${G[@]}" run --foreground oom --state-dir "$scratch/roots" >"$scratch/owned.log" 2>&1
status=$?
check "another user's state directory is refused with 2 (got $status)" test "$status" -eq 2
check "naming its owner" grep -q "owned by uid 0" "$scratch/owned.log"

((failures == 0)) || {
  echo "--- oom.log"
  cat "$scratch/oom.log"
  echo "--- crashy.log"
  cat "$scratch/crashy.log"
  echo "--- early.log"
  cat "$scratch/early.log" "$scratch/early-writer.log"
  echo "$failures check(s) failed"
  exit 1
}
echo "all run --foreground checks passed"
