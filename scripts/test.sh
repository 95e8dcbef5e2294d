#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, from a fresh Debian 12 machine: dependencies, build, unit, golden and
# integration tests, then a bounded fuzzing run of the profile parser.
#   scripts/test.sh           the whole suite
#   scripts/test.sh --quick   build, then only the tests labelled quick (unit, scenario, golden,
#                             the script tests and the benchmarks' smoke runs that need no private
#                             systemd): seconds to a few minutes, no dependencies installed, no fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == --quick ]]; then
  bash scripts/build.sh
  ctest --test-dir build --output-on-failure -j "$(nproc)" -L '^quick$'
  exit
fi
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
bash scripts/fuzz.sh "${GPULAUNCH_FUZZ_SECONDS:-60}"
