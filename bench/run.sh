#!/bin/sh
# Runs the check benchmark with the fake NVML on the loader path. Usage: bench/run.sh [BUILD_DIR]
set -eu
build=${1:-build}
LD_LIBRARY_PATH="$build/tests/fakes/nvml" exec "$build/bench/check_bench" --benchmark_counters_tabular=true
