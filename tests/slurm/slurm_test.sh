#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Slurm tier: the script `gpulaunch render --slurm` prints, submitted with sbatch to a real
# slurmctld and two slurmd (Debian 12's slurm-wlm 22.05.8, tests/slurm/slurm-harness.sh: the
# test's own namespaces, each node its own network namespace), running `gpulaunch run
# --foreground` with the mock SGLang on both nodes:
#   killwait  render reads the cluster's KillWait from scontrol and warns when it is shorter than
#             the drain
#   ready     a 2-node group to ready: both ranks' engines with this job's ports and rendezvous,
#             the endpoints file once rank 0 serves
#   scancel   the engines drain (SIGTERM, not SIGKILL) within the drain time; the endpoints file
#             is removed; the job ends without a requeue
#   timelimit the time limit's SIGTERM to the batch shell alone (--signal=B:TERM, sent here as
#             `scancel --batch --signal=TERM`): the shell passes it to the step, the engines drain,
#             the job ends 0 without a requeue
#   refused   an exit 2 (the check gate refuses: no NVIDIA driver) is never requeued
#   rankdeath rank 1's engine killed: the whole group stops (srun --kill-on-bad-exit), the step
#             starts again in the allocation after the backoff, ready again; once restart.budget + 1
#             steps have ended so, the job requeues itself
#   oom       both ranks' engines hit a CUDA OOM at the default memory share (the mock's
#             MOCK_OOM_ABOVE): the group starts again with the share stepped down, alike on both
#   prolog    the package's Prolog (packaging/slurm/gpulaunch-prolog, PrologFlags=Alloc) on a node
#             whose GPU has uncorrected ECC errors: the node drained with gpulaunch's reason, the
#             job not run there (slurm booted again with the Prolog, so this case runs last)
#   sbcast    --cache-archive: the job sbcasts a `cache export` archive to every node; the ranks
#             share one cache root, so one imports it (run --foreground --cache-archive, under
#             the upkeep lock) and the other finds the caches current; no start removes them
#
#   slurm_test.sh GPULAUNCH_BINARY SOURCE_DIR WORK_DIR FAKE_NVML_DIR [CASE..]
#
# The check gate of `run --foreground` judges the node as on a real cluster: the jobs see two GPUs
# through tests/fakes/nvml (LD_LIBRARY_PATH, GPULAUNCH_FAKE_NVML: sbatch exports the submitting
# environment), the machine's CUDA toolkit (/usr/local/cuda) and a model directory; the refused
# case submits without the fake library, so the gate finds no driver.
# Exit 77 (CTest's skip) only where the machine cannot run it (slurm-harness.sh: not root,
# namespaces refused, the packages absent outside CI).
set -uo pipefail

if (($# < 4)); then
  echo "usage: $0 GPULAUNCH_BINARY SOURCE_DIR WORK_DIR FAKE_NVML_DIR [CASE..]" >&2
  exit 2
fi
binary=$(realpath "$1")
source_dir=$(realpath "$2")
harness=$source_dir/tests/slurm/slurm-harness.sh

if [[ ${GL_SLURM_INSIDE:-} != 1 ]]; then
  mkdir -p "$3"
  work=$(realpath "$3")
  rm -rf "${work:?}"/*
  GL_SLURM_INSIDE=1 exec bash "$harness" enter "$work" -- bash "$0" "$binary" "$source_dir" "$work" \
    "$(realpath "$4")" "${@:5}"
fi

work=$3
fake_nvml_dir=$4
shift 4
cases=("$@")
# Every case by default; naming cases runs only those (slurm_test.sh BINARY SRC WORK NVML oom ..).
((${#cases[@]})) || cases=(killwait refused ready scancel timelimit rankdeath sbcast oom prolog)
readonly drain=5 kill_wait=20 server_port=31501
failures=0
submit_env=(env)
submit_args=()
ok() { echo "ok   $*"; }
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}

bash "$harness" boot "$work" "KillWait=$kill_wait" || exit 1
export SLURM_CONF=$work/slurm.conf
# Everything the jobs write stays under WORK_DIR: sbatch exports this environment to the job.
export HOME=$work/home XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state \
  XDG_CACHE_HOME=$work/cache TMPDIR=$work/tmp
mkdir -p "$HOME" "$XDG_CONFIG_HOME/gpulaunch/profiles" "$XDG_STATE_HOME" "$XDG_CACHE_HOME" \
  "$TMPDIR" "$work/jobs"
bash "$source_dir/mock/install.sh" "$work/venv" >/dev/null || exit 1
profiles=$XDG_CONFIG_HOME/gpulaunch/profiles
mkdir -p "$work/model"
printf 'driver 580.95.05\ncuda 13000\ngpu 12 0 97887 GPU-a0 Fake\ngpu 12 0 97887 GPU-a1 Fake\n' >"$work/nvml"
export LD_LIBRARY_PATH=$fake_nvml_dir GPULAUNCH_FAKE_NVML=$work/nvml

# profile NAME [EXTRA TOML]: a two-node mock SGLang group.
profile() {
  cat >"$profiles/$1.toml" <<TOML
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
port = $server_port
ready_timeout = "60s"
drain_timeout = "${drain}s"
[restart]
delay = "1s"
budget = 2
[env]
MOCK_SGLANG_LOAD_SECONDS = "1"
${2:-}
TOML
}

# submit NAME: render and sbatch; sets $job, $out, $endpoints.
submit() {
  "$binary" render --slurm "$1" --no-gres --gpulaunch-bin "$binary" "${submit_args[@]}" \
    --scontrol "$(command -v scontrol)" >"$work/jobs/$1.sbatch" 2>"$work/jobs/$1.render" ||
    { fail "render --slurm $1: $(cat "$work/jobs/$1.render")"; return 1; }
  job=$(cd "$work/jobs" && "${submit_env[@]}" sbatch --parsable -o "$work/jobs/%j.out" "$1.sbatch") ||
    { fail "sbatch $1"; return 1; }
  out=$work/jobs/$job.out
  endpoints=$work/jobs/gpulaunch-$1-$job.endpoints.json
}

# wait_for SECONDS COMMAND..: until COMMAND succeeds; fails after SECONDS.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}
job_state() { squeue -h -j "$job" -o %T 2>/dev/null; }
job_gone() { [[ -z $(job_state) ]]; }
field() { scontrol show job "$job" 2>/dev/null | grep -o "$1=[^ ]*" | head -n 1 | cut -d= -f2; }
engines() { pgrep -f 'sglang( serve|\.launch_server) ' || true; }
no_engines() { [[ -z $(engines) ]]; }
two_engines() { (($(engines | wc -l) == 2)); }

case_killwait() {
  profile kw
  sed -i 's/^drain_timeout = .*/drain_timeout = "30s"/' "$profiles/kw.toml"
  "$binary" render --slurm kw --no-gres --scontrol "$(command -v scontrol)" >/dev/null \
    2>"$work/kw.err"
  if grep -qF "warning: the cluster's KillWait ($kill_wait s) is shorter than server.drain_timeout (30 s)" "$work/kw.err"; then
    ok "killwait: render warns that KillWait $kill_wait s cuts a 30 s drain"
  else
    fail "killwait: no warning: $(cat "$work/kw.err")"
  fi
  "$binary" render --slurm kw --no-gres --scontrol /nonexistent/scontrol >/dev/null 2>"$work/kw.err"
  grep -qF "could not read the cluster's KillWait" "$work/kw.err" &&
    ok "killwait: an unreachable scontrol is said" || fail "killwait: $(cat "$work/kw.err")"
}

case_refused() {
  # No GPU here: the check gate refuses (exit 2), and an exit 2 is never requeued.
  profile refused
  submit_env=(env -u GPULAUNCH_FAKE_NVML -u LD_LIBRARY_PATH)
  submit refused || return
  submit_env=(env)
  wait_for 60 job_gone || { fail "refused: job $job still $(job_state)"; scancel "$job"; return; }
  local code restarts
  code=$(field ExitCode) restarts=$(field Restarts)
  [[ $code == 2:0 && $restarts == 0 ]] &&
    ok "refused: exit 2, not requeued" || fail "refused: ExitCode=$code Restarts=$restarts"
  grep -q "not requeued" "$out" && ok "refused: the job's output says so" ||
    fail "refused: output: $(tail -n 5 "$out")"
}

# Shared by ready and scancel: one job to ready.
start_ready() {
  profile grp
  submit grp || return 1
  local start=$SECONDS
  if ! wait_for 90 test -s "$endpoints"; then
    fail "ready: no endpoints file within 90 s (job $(job_state)); output: $(tail -n 20 "$out")"
    return 1
  fi
  ok "ready: endpoints file after $((SECONDS - start)) s"
  local port=$((server_port + (job % 200) * 10)) rdv=$((5000 + (job % 200) * 10))
  python3 - "$endpoints" "$port" <<'PY' && ok "ready: endpoints name rank 0 on node1:$port, model mock" ||
import json, sys
e = json.load(open(sys.argv[1]))
assert e == [{"rank": 0, "host": "node1", "port": int(sys.argv[2]), "model": "mock"}], e
PY
    fail "ready: endpoints $(cat "$endpoints")"
  two_engines || fail "ready: engines: $(engines | xargs)"
  local pid rank_seen=""
  for pid in $(engines); do
    local argv
    argv=$(tr '\0' ' ' <"/proc/$pid/cmdline")
    [[ $argv == *"--port $port"* && $argv == *"--dist-init-addr node1:$rdv"* ]] ||
      fail "ready: engine $pid: $argv"
    [[ $argv =~ --node-rank\ ([0-9]) ]] && rank_seen+=${BASH_REMATCH[1]}
  done
  [[ $(echo "$rank_seen" | grep -o . | sort | tr -d '\n') == 01 ]] &&
    ok "ready: ranks 0 and 1, port $port, rendezvous node1:$rdv" || fail "ready: ranks '$rank_seen'"
}

case_ready() {
  start_ready || return
  [[ ${cases[*]} == *scancel* ]] || { scancel "$job"; wait_for 30 job_gone; }
}

case_scancel() {
  if ! two_engines; then start_ready || return; fi
  local t0 t1
  t0=$(date +%s%N)
  scancel "$job"
  wait_for $((drain + 5)) no_engines || fail "scancel: engines still up $((drain + 5)) s later"
  t1=$(date +%s%N)
  ok "scancel: both engines gone in $(((t1 - t0) / 1000000)) ms (drain $drain s, KillWait $kill_wait s)"
  wait_for 30 job_gone || fail "scancel: job $job still $(job_state)"
  [[ ! -e $endpoints ]] && ok "scancel: endpoints file removed" || fail "scancel: endpoints left"
  [[ $(field Restarts) == 0 ]] && ok "scancel: not requeued" || fail "scancel: requeued"
  grep -q "signal 9\|SIGKILL\|Killed" "$out" && fail "scancel: a SIGKILL: $(tail -n 20 "$out")"
}

case_timelimit() {
  start_ready || return
  local t0 t1
  t0=$(date +%s%N)
  scancel --batch --signal=TERM "$job"
  wait_for $((drain + 5)) no_engines || fail "timelimit: engines still up $((drain + 5)) s later"
  t1=$(date +%s%N)
  ok "timelimit: the batch shell's SIGTERM drained both engines in $(((t1 - t0) / 1000000)) ms"
  wait_for 30 job_gone || fail "timelimit: job $job still $(job_state)"
  [[ ! -e $endpoints ]] && ok "timelimit: endpoints file removed" || fail "timelimit: endpoints left"
  local code restarts
  code=$(field ExitCode) restarts=$(field Restarts)
  [[ $code == 0:0 && $restarts == 0 ]] && ok "timelimit: the job ended 0, not requeued" ||
    fail "timelimit: ExitCode=$code Restarts=$restarts: $(tail -n 10 "$out")"
}

case_prolog() {
  local prolog=$source_dir/packaging/slurm/gpulaunch-prolog
  [[ -f $prolog ]] || { fail "prolog: no $prolog"; return; }
  mkdir -p "$work/noderoot"
  # As slurmd runs it (no PATH, its own environment): gpulaunch judges a fixture node (the
  # machine's /dev/shm and toolkits are not this test's) whose GPUs are the fake NVML's, node2's
  # GPU 1 with 3 uncorrected ECC errors.
  cp "$work/nvml" "$work/nvml-node1"
  { cat "$work/nvml"; echo "ecc 1 3"; } >"$work/nvml-node2"
  cat >"$work/gl-check" <<SH
#!/bin/sh
if [ "\$1" = check ]; then exec "$binary" "\$@" --root "$work/noderoot"; fi
exec "$binary" "\$@"
SH
  cat >"$work/prolog" <<SH
#!/bin/sh
export GPULAUNCH="$work/gl-check" SCONTROL="$(command -v scontrol)" LD_LIBRARY_PATH="$fake_nvml_dir"
export GPULAUNCH_FAKE_NVML="$work/nvml-\$SLURMD_NODENAME" GPULAUNCH_PROLOG_LOG="$work/prolog.log"
exec "$prolog"
SH
  chmod 755 "$work/gl-check" "$work/prolog"
  bash "$harness" stop "$work"
  bash "$harness" boot "$work" "KillWait=$kill_wait" "Prolog=$work/prolog" "PrologFlags=Alloc" ||
    { fail "prolog: slurm did not boot with the Prolog"; return; }
  profile grp
  submit grp || return
  local reason
  wait_for 60 eval '[[ $(sinfo -h -n node2 -o %t) == drain* ]]' ||
    { fail "prolog: node2 not drained: $(sinfo -h -N -o '%N %t %E')"; scancel "$job"; return; }
  reason=$(scontrol show node node2 | grep -o 'Reason=.*' | head -n 1)
  [[ $reason == Reason=gpulaunch:* ]] && ok "prolog: node2 drained, $reason" ||
    fail "prolog: reason '$reason'"
  [[ $(sinfo -h -n node1 -o %t) != drain* ]] && ok "prolog: node1 (healthy) not drained" ||
    fail "prolog: node1 drained too"
  [[ -z $(engines) ]] && ok "prolog: no engine started" || fail "prolog: engines: $(engines | xargs)"
  scancel "$job"
  wait_for 30 job_gone
}

engine_of_rank() {
  local pid
  for pid in $(engines); do
    [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == *"--node-rank $1 "* ]] && echo "$pid"
  done
}

case_rankdeath() {
  profile grp
  submit grp || return
  local round t0 t1 victim
  # budget 2: the first death starts the group again in the allocation; the second spends the
  # budget, so the third step's gate refuses at once (75) and the job requeues itself; the
  # requeue's first step forgives the failures and the group starts again.
  for round in 1 2; do
    wait_for 90 test -s "$endpoints" ||
      { fail "rankdeath: round $round not ready: $(tail -n 20 "$out")"; break; }
    victim=$(engine_of_rank 1)
    [[ -n $victim ]] || { fail "rankdeath: no rank 1 engine"; break; }
    t0=$(date +%s%N)
    kill -KILL "$victim"
    wait_for 30 no_engines || { fail "rankdeath: rank 0 still up: $(engines | xargs)"; break; }
    t1=$(date +%s%N)
    ok "rankdeath: round $round: rank 1 killed, whole group stopped in $(((t1 - t0) / 1000000)) ms"
    wait_for 5 test ! -e "$endpoints" || fail "rankdeath: endpoints file left after the group stopped"
    if ((round == 1)); then
      wait_for 60 two_engines || { fail "rankdeath: round $round: not started again"; break; }
      t1=$(date +%s%N)
      grep -q "starting it again in this allocation ($round of 3)" "$out" &&
        ok "rankdeath: round $round: started again in the allocation $(((t1 - t0) / 1000000)) ms after the kill" ||
        fail "rankdeath: $(tail -n 5 "$out")"
    fi
  done
  wait_for 30 grep -q "crash-loop budget of 2 failures spent" "$out" &&
    ok "rankdeath: the second death spent the budget of 2" ||
    fail "rankdeath: no budget line: $(tail -n 5 "$out")"
  wait_for 30 grep -q "crash loop: 2 failures in a row (budget 2)" "$out" &&
    ok "rankdeath: the third step's gate refused without starting an engine" ||
    fail "rankdeath: no gate refusal: $(tail -n 5 "$out")"
  wait_for 30 eval '[[ $(field Restarts) == 1 ]]' &&
    ok "rankdeath: after 3 steps ended with 75, the job requeued itself" ||
    fail "rankdeath: Restarts=$(field Restarts) state $(job_state): $(tail -n 10 "$out")"
  # The requeue's first step forgives the failures (the step-down levels stay): the group serves
  # again on the new allocation instead of refusing at once. Slurm 22.05.8 makes a requeued job
  # eligible 121 s after the requeue (Reason=BeginTime), set once the job has finished completing
  # (an update before that is overwritten, as under load in CI): the test moves it to now, as an
  # administrator can, whenever the job waits for it.
  local started=$SECONDS deadline=$((SECONDS + 90))
  while ((SECONDS < deadline)) && ! two_engines; do
    [[ $(squeue -h -j "$job" -o '%T:%r' 2>/dev/null) == PENDING:BeginTime ]] &&
      scontrol update JobId="$job" StartTime=now
    sleep 0.5
  done
  if two_engines; then
    grep -q "forgave 2 failure(s) of an earlier run (--reset-crash-loop)" "$out" &&
      ok "rankdeath: the requeued job forgave the 2 failures and started the group again ($((SECONDS - started)) s)" ||
      fail "rankdeath: engines again, but no forgiveness line: $(grep -i forgave "$out")"
  else
    fail "rankdeath: the requeued job did not start the group: $(job_state): $(tail -n 5 "$out")"
  fi
  scancel "$job"
  wait_for 30 job_gone
  wait_for 30 no_engines
}

case_oom() {
  profile oom 'MOCK_OOM_ABOVE = "0.9"'
  submit oom || return
  if ! wait_for 120 test -s "$endpoints"; then
    fail "oom: not ready after the step-down: $(tail -n 30 "$out")"
  else
    local pid shares=""
    for pid in $(engines); do
      [[ $(tr '\0' ' ' <"/proc/$pid/cmdline") =~ --mem-fraction-static\ ([0-9.]+) ]] &&
        shares+="${BASH_REMATCH[1]} "
    done
    read -r -a list <<<"$shares"
    if ((${#list[@]} == 2)) && [[ ${list[0]} == "${list[1]}" ]] &&
      python3 -c "import sys; sys.exit(not float(sys.argv[1]) <= 0.9)" "${list[0]}"; then
      ok "oom: both ranks stepped down alike, to --mem-fraction-static ${list[0]}"
    else
      fail "oom: shares '$shares'"
    fi
  fi
  scancel "$job"
  wait_for 30 job_gone
  wait_for 30 no_engines
}

case_sbcast() {
  # The archive, made as `up`'s caches would be on a node that compiled: a FlashInfer object and a
  # Triton kernel in the profile's caches, exported with root's records of a scratch state root.
  profile seed "[caches]
root = \"$work/seed-cache\""
  local seed=$work/seed-state
  "$binary" prepare-caches --profile=seed --snapshot="$profiles/seed.toml" --state-root="$seed" \
    >/dev/null 2>&1
  mkdir -p "$work/seed-cache/flashinfer/.cache/flashinfer/0.6.7/120/cached_ops/norm" \
    "$work/seed-cache/triton/ABCD"
  echo "flashinfer object" >"$work/seed-cache/flashinfer/.cache/flashinfer/0.6.7/120/cached_ops/norm/norm.so"
  head -c 100000 /dev/urandom >"$work/seed-cache/triton/ABCD/kernel.cubin"
  "$binary" cache export seed -o "$work/seed.tar.zst" --state-root "$seed" >"$work/export.out" 2>&1 ||
    { fail "sbcast: cache export: $(cat "$work/export.out")"; return; }
  # The job's profile: the same, its caches elsewhere (what a node without them has).
  profile warm "[caches]
root = \"$work/node-cache\""
  submit_args=(--cache-archive "$work/seed.tar.zst")
  submit warm || return
  submit_args=()
  wait_for 90 test -s "$endpoints" || fail "sbcast: not ready: $(tail -n 20 "$out")"
  # Both ranks share one cache root and state directory here (a shared home): the first imports
  # under the lock, the second finds the caches current and keeps them.
  (($(grep -c "gpulaunch: imported triton into $work/node-cache/triton" "$out") == 1)) &&
    ok "sbcast: one rank imported the archive" || fail "sbcast: imports: $(grep -i import "$out")"
  grep -q "gpulaunch: '$work/tmp/gpulaunch-warm-$job.cache.tar.zst' not imported: the caches are current" "$out" &&
    ok "sbcast: the other, sharing the cache root, found them current and kept them" ||
    fail "sbcast: $(grep -i "import\|current" "$out")"
  grep -q "removed $work/node-cache/flashinfer" "$out" &&
    fail "sbcast: the start removed the imported flashinfer cache: $(grep removed "$out")" ||
    ok "sbcast: no start removed what was imported"
  cmp -s "$work/seed-cache/triton/ABCD/kernel.cubin" "$work/node-cache/triton/ABCD/kernel.cubin" &&
    ok "sbcast: the ranks imported the seeded caches before their engines started" ||
    fail "sbcast: caches not imported: $(grep -i "cache\|import" "$out" | tail -n 5)"
  grep -q "caches not seeded\|sbcast of .* failed" "$out" && fail "sbcast: $(grep "caches not seeded\|gpulaunch-slurm" "$out")"
  scancel "$job"
  wait_for 30 job_gone
  [[ ! -e $work/tmp/gpulaunch-warm-$job.cache.tar.zst ]] &&
    ok "sbcast: the node's copy removed when the step ended" || fail "sbcast: the node's copy is left"
}

for name in "${cases[@]}"; do
  "case_$name"
done
bash "$harness" stop "$work"
if ((failures)); then
  echo "--- slurmctld.log (tail)"
  tail -n 30 "$work/log/slurmctld.log"
  for f in "$work"/jobs/*.out; do
    echo "--- $f"
    tail -n 30 "$f"
  done
  echo "FAIL: $failures failure(s)"
  exit 1
fi
echo "PASS"
