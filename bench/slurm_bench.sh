#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A two-node group as a Slurm job: the script `gpulaunch render --slurm` prints against the
# srun-and-poll script users write today (sbatch; `srun` of the engine on every node; `until curl
# /health; sleep 5`; as NVIDIA's srt-slurm, SGLang's and TRT-LLM's Slurm recipes do), on a real
# slurmctld and two slurmd (tests/slurm/slurm-harness.sh: the bench's own namespaces, each node a
# network namespace of its own), the mock SGLang on both nodes:
#   start overhead   from the slowest rank answering health 200 (seen by this bench, polling both
#                    ranks every 20 ms) to the job saying the group serves (gpulaunch: the
#                    endpoints file; srun-and-poll: its "ready" line after its curl loop)
#   rank death       rank 1's engine SIGKILLed -> rank 0's engine gone (the whole group stopped);
#                    srun-and-poll leaves rank 0 running: reported as "> CAP s"
#   node verdict     `gpulaunch check --node` as the package's prolog runs it (median of 20 runs,
#                    goal <= 50 ms); the recipes judge no node
#
#   bench/slurm_bench.sh [BUILD_DIR] [ROUNDS]        LOAD_SECONDS=2 (the mock's load), CAP=20
#   BENCH_SMOKE=1 bench/slurm_bench.sh BUILD_DIR     one round each, a 1 s cap, no figures
#
# Needs root and Debian's slurmctld, slurmd and slurm-client (exit 77 without them, as the tier).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
rounds=${2:-3}
smoke=${BENCH_SMOKE:-0}
load=${LOAD_SECONDS:-2}
cap=${CAP:-20}
if ((smoke)); then rounds=1 load=1 cap=1; fi
gpulaunch=${GPULAUNCH:-$build/src/gpulaunch}
harness=$here/tests/slurm/slurm-harness.sh
work=$build/bench-slurm

if [[ ${GL_SLURM_INSIDE:-} != 1 ]]; then
  mkdir -p "$work"
  rm -rf "${work:?}"/*
  GL_SLURM_INSIDE=1 BENCH_ROUNDS=$rounds exec bash "$harness" enter "$work" -- bash "$0" "$build"
fi
rounds=${BENCH_ROUNDS:-$rounds}

bash "$harness" boot "$work" KillWait=20 || exit 1
export SLURM_CONF=$work/slurm.conf
export HOME=$work/home XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state \
  XDG_CACHE_HOME=$work/cache TMPDIR=$work/tmp
mkdir -p "$HOME" "$XDG_CONFIG_HOME/gpulaunch/profiles" "$XDG_STATE_HOME" "$XDG_CACHE_HOME" \
  "$TMPDIR" "$work/jobs" "$work/model"
bash "$here/mock/install.sh" "$work/venv" >/dev/null || exit 1
printf 'driver 580.95.05\ncuda 13000\ngpu 12 0 97887 GPU-a0 Fake\ngpu 12 0 97887 GPU-a1 Fake\n' >"$work/nvml"
export LD_LIBRARY_PATH=$build/tests/fakes/nvml GPULAUNCH_FAKE_NVML=$work/nvml
readonly port=31501
cat >"$XDG_CONFIG_HOME/gpulaunch/profiles/grp.toml" <<TOML
[engine]
kind = "sglang"
venv = "$work/venv"
[model]
path = "$work/model"
served_name = "mock"
[parallelism]
tp = 2
nodes = 2
dist_init_addr = "rank0:5000"
[toolkit]
cuda_home = "/usr/local/cuda"
[server]
host = "0.0.0.0"
port = $port
ready_timeout = "60s"
drain_timeout = "5s"
[restart]
delay = "1s"
[env]
MOCK_SGLANG_LOAD_SECONDS = "$load"
TOML
"$gpulaunch" render --slurm grp --no-gres --gpulaunch-bin "$gpulaunch" >"$work/jobs/gl.sbatch" 2>"$work/render.err" ||
  { echo "FAIL: render --slurm: $(cat "$work/render.err")"; exit 1; }
# What users write today (the engine started by srun on each node, health polled from bash).
cat >"$work/jobs/poll.sbatch" <<SCRIPT
#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
head=\$(scontrol show hostnames "\$SLURM_JOB_NODELIST" | head -n 1)
port=\$(($port + (SLURM_JOB_ID % 200) * 10))
srun --ntasks-per-node=1 bash -c "export MOCK_SGLANG_LOAD_SECONDS=$load; exec $work/venv/bin/python -m sglang.launch_server \\
  --model-path $work/model --served-model-name mock --tp-size 2 --nnodes 2 --node-rank \\\$SLURM_NODEID \\
  --dist-init-addr \$head:5000 --host 0.0.0.0 --port \$port" &
until curl -sf "http://\$head:\$port/health" >/dev/null; do sleep 5; done
echo "ready"
wait
SCRIPT

now_ms() { echo $(($(date +%s%N) / 1000000)); }
engines() { pgrep -f 'sglang( serve|\.launch_server) ' || true; }
engine_of_rank() {
  local pid
  for pid in $(engines); do
    [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == *"--node-rank $1 "* ]] && echo "$pid"
  done
}
healthy() { curl -sf -m 1 "http://$1:$2/health" >/dev/null 2>&1; }

# round KIND: one job; prints "overhead_ms death_ms" (death_ms empty when rank 0 outlived CAP).
round() {
  local kind=$1 job jport signal t_healthy="" t_signal="" h1=0 h2=0 t0 deadline victim survivor
  job=$(cd "$work/jobs" && sbatch --parsable -o "$work/jobs/%j.out" "$kind.sbatch") || return 1
  jport=$((port + (job % 200) * 10))
  if [[ $kind == gl ]]; then signal=$work/jobs/gpulaunch-grp-$job.endpoints.json; fi
  deadline=$((SECONDS + 90))
  while ((SECONDS < deadline)); do
    ((h1)) || { healthy node1 "$jport" && h1=1; }
    ((h2)) || { healthy node2 "$jport" && h2=1; }
    if ((h1 && h2)) && [[ -z $t_healthy ]]; then t_healthy=$(now_ms); fi
    if [[ -z $t_signal ]]; then
      if [[ $kind == gl ]]; then [[ -s $signal ]] && t_signal=$(now_ms); else
        grep -q '^ready$' "$work/jobs/$job.out" 2>/dev/null && t_signal=$(now_ms); fi
    fi
    # Both are awaited: the job may say it serves before this poll saw rank 1 answer (the ready
    # signal follows rank 0's health; the mock's ranks load independently, and under load one
    # curl here can take most of a second). The overhead is then negative.
    [[ -n $t_signal && -n $t_healthy ]] && break
    sleep 0.02
  done
  [[ -n $t_signal && -n $t_healthy ]] || {
    echo "FAIL: $kind job $job: $([[ -n $t_signal ]] && echo "said it serves" || echo "never said it serves"), $([[ -n $t_healthy ]] && echo "both ranks answered" || echo "ranks answering: node1 $h1 node2 $h2") within 90 s" >&2
    tail -n 5 "$work/jobs/$job.out" >&2
    scancel "$job"
    return 1
  }
  victim=$(engine_of_rank 1)
  survivor=$(engine_of_rank 0)
  t0=$(now_ms)
  kill -KILL "$victim"
  local stopped=""
  deadline=$(($(now_ms) + cap * 1000))
  while (($(now_ms) < deadline)); do
    kill -0 "$survivor" 2>/dev/null || { stopped=$(($(now_ms) - t0)); break; }
    sleep 0.005
  done
  scancel "$job"
  local wait_until=$((SECONDS + 30))
  while [[ -n $(squeue -h -j "$job" 2>/dev/null) || -n $(engines) ]] && ((SECONDS < wait_until)); do sleep 0.1; done
  echo "$((t_signal - t_healthy)) $stopped"
}

declare -A overhead death
for kind in gl poll; do
  for ((i = 1; i <= rounds; i++)); do
    result=$(round "$kind") || { bash "$harness" stop "$work"; exit 1; }
    read -r o d <<<"$result"
    overhead[$kind]+="$o "
    death[$kind]+="${d:-none} "
  done
done
# The node verdict the package's prolog runs before each job (`check --node`, the fake NVML's two
# GPUs): the wall time of each of 20 runs; the recipes run none.
node_ms=()
for ((i = 0; i < (smoke ? 1 : 20); i++)); do
  t0=$(date +%s%N)
  "$gpulaunch" check --node --json >/dev/null 2>&1
  rc=$?
  node_ms+=($((($(date +%s%N) - t0) / 1000000)))
  ((rc <= 1)) || { echo "FAIL: check --node exited $rc" >&2; bash "$harness" stop "$work"; exit 1; }
done
bash "$harness" stop "$work"

if ((smoke)); then
  echo "ok: both scripts ran a 2-node group to ready and lost a rank (no figures in smoke mode)"
  exit 0
fi
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "-") }'; }
deaths() {
  local list=$1 kept
  kept=$(tr ' ' '\n' <<<"$list" | grep -v '^$' | grep -v none | median)
  if grep -q none <<<"$list"; then echo "> ${cap} s ($(grep -o none <<<"$list" | wc -l) of $rounds never)"; else echo "$kept ms"; fi
}
echo "Two-node group on Slurm 22.05 (rounds: $rounds, mock load ${load} s), medians:"
printf '%-34s %-24s %-24s\n' "" "gpulaunch render --slurm" "srun + curl poll (5 s)"
printf '%-34s %-24s %-24s\n' "start overhead beyond slowest rank" \
  "$(median <<<"${overhead[gl]}") ms" "$(median <<<"${overhead[poll]}") ms"
printf '%-34s %-24s %-24s\n' "rank death -> whole group stopped" "$(deaths "${death[gl]}")" \
  "$(deaths "${death[poll]}")"
printf '%-34s %-24s %-24s\n' "node verdict (prolog), 20 runs" "$(median <<<"${node_ms[*]}") ms" "(none)"
echo "(each: ${overhead[gl]}| ${overhead[poll]}; deaths ${death[gl]}| ${death[poll]}; check --node ${node_ms[*]})"
