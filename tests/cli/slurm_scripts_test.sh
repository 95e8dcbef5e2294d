#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The package's Slurm prolog and epilog (packaging/slurm/) as slurmd runs them: the environment
# Slurm 22.05 gives them (SLURMD_NODENAME, SLURM_JOB_ID, SLURM_JOB_UID, SLURM_JOB_GPUS), a fake
# `scontrol` first on PATH recording its argv, GPUs from the fake NVML (tests/fakes/nvml). The
# prolog: a healthy node and a warning run the job, a critical one drains with the finding as the
# reason and exits 1, a check that cannot run lets the job run. The epilog: a leftover of the job
# ended (root's and another job's processes left alone), memory the driver keeps drains.
# Usage: slurm_scripts_test.sh GPULAUNCH SOURCE_DIR FAKE_NVML_DIR. Root (processes of another uid).
set -uo pipefail
gl=${1:?gpulaunch binary}
src=${2:?source directory}
nvml_dir=${3:?fake NVML directory}
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root to run processes as another user"; exit 77; }
prolog=$src/packaging/slurm/gpulaunch-prolog
epilog=$src/packaging/slurm/gpulaunch-epilog
scratch=$(mktemp -d)
cleanup() {
  while read -r pid; do kill -9 "$pid" 2>/dev/null; done <"$scratch/pids"
  rm -rf "$scratch"
}
trap cleanup EXIT
failures=0
check() {
  local what=$1
  shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi
}

mkdir -p "$scratch/bin" "$scratch/node"
: >"$scratch/pids"
# scontrol: each call's arguments, one per line, then a blank line.
cat >"$scratch/bin/scontrol" <<SH
#!/bin/sh
for arg in "\$@"; do printf '%s\n' "\$arg"; done >>"$scratch/scontrol.calls"
echo >>"$scratch/scontrol.calls"
SH
# gpulaunch judging the fixture node under --root (the host's own /dev/shm, toolkits and CDI
# specs are not this test's), its GPUs from the fake NVML.
cat >"$scratch/bin/gpulaunch" <<SH
#!/bin/sh
if [ "\$1" = check ]; then exec "$gl" "\$@" --root "$scratch/node"; fi
exec "$gl" "\$@"
SH
chmod +x "$scratch/bin/scontrol" "$scratch/bin/gpulaunch"
nvml=$scratch/nvml.txt
gpus() { printf 'driver 580.95.05\ncuda 13000\ngpu 9 0 81559 GPU-aaaa NVIDIA H100 80GB HBM3\ngpu 9 0 81559 GPU-bbbb NVIDIA H100 80GB HBM3\n' >"$nvml"; }
slurm() {  # the Prolog/Epilog environment of slurmd (prep_script_slurmd.c _build_env)
  env -i PATH="$scratch/bin:/usr/bin:/bin" GPULAUNCH="$scratch/bin/gpulaunch" \
    LD_LIBRARY_PATH="$nvml_dir" GPULAUNCH_FAKE_NVML="$nvml" \
    SLURMD_NODENAME=node7 SLURM_JOB_ID=42 SLURM_JOB_UID=65534 SLURM_JOB_USER=nobody \
    SLURM_SCRIPT_CONTEXT="$1" "${@:2}"
}
calls() { cat "$scratch/scontrol.calls" 2>/dev/null; }

echo "== prolog"
gpus
slurm prolog_slurmd "$prolog" 2>"$scratch/err"
check "a healthy node runs the job (exit 0)" test $? = 0
check "... and nothing is drained" test -z "$(calls)"

gpus
echo "persistence 1 0" >>"$nvml"
slurm prolog_slurmd "$prolog" 2>"$scratch/err"
check "a node with a warning runs the job (exit 0)" test $? = 0
check "... and nothing is drained" test -z "$(calls)"

gpus
echo "ecc 1 3" >>"$nvml"
slurm prolog_slurmd "$prolog" 2>"$scratch/err"
status=$?
check "a critical node refuses the job (exit 1)" test $status = 1
expected="update
nodename=node7
state=drain
reason=gpulaunch: gpu-ecc-uncorrected: GPU 1: uncorrected ECC errors since the driver loaded: memory on this GPU returned data it could not correct, and the process that read it was killed (Xid 48/94/95)
"
check "... drained with the finding as the reason: $(calls)" test "$(calls)" = "$expected"
check "... and says so in slurmd's log" grep -q "^gpulaunch-prolog: job 42: node7 drained: gpulaunch: gpu-ecc-uncorrected" "$scratch/err"
rm -f "$scratch/scontrol.calls"

gpus
echo "lost 1" >>"$nvml"
slurm prolog_slurmd "$prolog" 2>"$scratch/err"
check "a GPU fallen off the bus refuses the job (exit 1)" test $? = 1
check "... reason gpu-lost" grep -qx "reason=gpulaunch: gpu-lost: GPU 1 fell off the bus: the driver cannot reach it (GPU is lost)" "$scratch/scontrol.calls"
rm -f "$scratch/scontrol.calls"

env -i PATH="$scratch/bin:/usr/bin:/bin" GPULAUNCH=/nonexistent/gpulaunch SLURMD_NODENAME=node7 \
  SLURM_JOB_ID=42 "$prolog" 2>"$scratch/err"
check "a check that cannot run lets the job run (exit 0)" test $? = 0
check "... drains nothing" test -z "$(calls)"
check "... and says why" grep -q "could not run (exit 127)" "$scratch/err"

echo "== epilog"
# A process of the job's user (nobody) holding GPU 0, with the job's id in its environment as
# slurmstepd gives every task; one of root's and one of another job of the same user beside it.
start() {  # UID JOB: a sleep in its own session; its pid
  local uid=$1 job=$2 as=()
  [[ $uid == 0 ]] || as=(setpriv --reuid="$uid" --regid="$uid" --clear-groups)
  env -i SLURM_JOB_ID="$job" setsid "${as[@]}" sleep 300 </dev/null >/dev/null 2>&1 &
  echo $! | tee -a "$scratch/pids"
}
alive() { [[ -d /proc/$1 ]] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
ours=$(start 65534 42)
roots=$(start 0 42)
other=$(start 65534 43)
sleep 0.2
gpus
printf 'process 0 %s 2048 live\nprocess 0 %s 1024 live\nprocess 1 %s 512 live\n' "$ours" "$roots" "$other" >>"$nvml"
slurm epilog_slurmd env SLURM_JOB_GPUS=0,1 GPULAUNCH_EPILOG_GRACE=2 GPULAUNCH_EPILOG_WAIT=5 \
  "$epilog" 2>"$scratch/err"
status=$?
cat "$scratch/err"
check "the job's GPUs are released (exit 0)" test $status = 0
check "... its leftover process is gone" bash -c "! $(declare -f alive); alive $ours"
check "... root's process is left alone" alive "$roots"
check "... another job's process is left alone" alive "$other"
check "... nothing is drained" test -z "$(calls)"
check "... the log names what was ended" grep -q "SIGTERM pid $ours (sleep) on GPU 0, 2048 MiB" "$scratch/err"
check "... and what was left" grep -q "left alone: pid $roots (sleep) on GPU 0, 1024 MiB: root's" "$scratch/err"

# The driver keeps the memory of an ended process listed: drained with the reason.
held=$(start 65534 42)
sleep 0.2
gpus
printf 'process 0 %s 2048\n' "$held" >>"$nvml"
slurm epilog_slurmd env SLURM_JOB_GPUS=0 GPULAUNCH_EPILOG_GRACE=1 GPULAUNCH_EPILOG_WAIT=1 \
  "$epilog" 2>"$scratch/err"
status=$?
check "memory still held after the wait fails the epilog (exit 1)" test $status = 1
check "... drains the node with the reason: $(calls)" grep -qx "reason=gpulaunch: gpu-memory-held: job 42's processes ended, their GPU memory still held 1000 ms later: pid $held (sleep) on GPU 0, 2048 MiB" "$scratch/scontrol.calls"
check "... the process itself was ended" bash -c "! $(declare -f alive); alive $held"

echo "== $failures failure(s)"
[[ $failures == 0 ]]
