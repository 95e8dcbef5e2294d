#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the check benchmark with the fake NVML on the loader path, then counts what one warm
# `gpulaunch check` on the same healthy fixture forks and executes (strace -f; its own execve is
# the one expected). Usage: bench/run.sh [BUILD_DIR] [benchmark flags...]
# BENCH_SMOKE=1 bench/run.sh BUILD_DIR: every benchmark once, no figures (the suite's smoke test).
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
export LD_LIBRARY_PATH="$build/tests/fakes/nvml"
if [ "${BENCH_SMOKE:-0}" = 1 ]; then  # each benchmark once, briefly, no figures
  # A benchmark that skips with an error (the healthy fixture reporting errors, a command that
  # exits non-zero) still exits 0: its output is read.
  out=$("$build/bench/check_bench" --benchmark_min_time=0.001 --benchmark_repetitions=1 2>&1) || {
    echo "$out"
    exit 1
  }
  if echo "$out" | grep -q "ERROR OCCURRED"; then
    echo "$out" | grep "ERROR OCCURRED"
    echo "check_bench: smoke FAILED"
    exit 1
  fi
  echo "check_bench: smoke ok"
  exit 0
fi
"$build/bench/check_bench" --benchmark_counters_tabular=true \
  --benchmark_report_aggregates_only=true "$@"
if [ -x /usr/bin/strace ]; then
  "$build/bench/check_bench" --strace-check "$build/src/gpulaunch"
  # Every system call of one warm check, counted by name (bench/README: where the time goes).
  "$build/bench/check_bench" --strace-count "$build/src/gpulaunch"
  # The same for `check --node` (issue 47): no child process, and its system calls by name.
  "$build/bench/check_bench" --strace-check-node "$build/src/gpulaunch"
  "$build/bench/check_bench" --strace-count-node "$build/src/gpulaunch"
fi
