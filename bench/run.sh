#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the check benchmark with the fake NVML on the loader path, then counts what one warm
# `gpulaunch check` on the same healthy fixture forks and executes (strace -f; its own execve is
# the one expected). Usage: bench/run.sh [BUILD_DIR] [benchmark flags...]
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
export LD_LIBRARY_PATH="$build/tests/fakes/nvml"
"$build/bench/check_bench" --benchmark_counters_tabular=true \
  --benchmark_report_aggregates_only=true "$@"
if [ -x /usr/bin/strace ]; then
  "$build/bench/check_bench" --strace-check "$build/src/gpulaunch"
fi
