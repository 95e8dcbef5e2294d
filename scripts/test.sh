#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, from a fresh Debian 12 machine: dependencies, build, unit, golden and
# integration tests, the package and the booted guest, then a bounded fuzzing run of the profile
# parser. It ends with every phase's and every test's time, slowest first (tests/README.md has
# each tier's budget).
#   scripts/test.sh           the whole suite
#   scripts/test.sh --quick   build, then only the tests labelled quick (unit, scenario, golden,
#                             the script tests and the benchmarks' smoke runs that need no private
#                             systemd): seconds to a few minutes, no dependencies installed, no fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phase-times.sh
if [[ ${1:-} == --quick ]]; then
  phase build bash scripts/build.sh
  phase "ctest -L quick" ctest --test-dir build --output-on-failure -j "$(nproc)" -L '^quick$' \
    --output-junit "$GL_CTEST_JUNIT"
  exit
fi
phase install-deps bash scripts/install-deps.sh
phase build bash scripts/build.sh
phase ctest ctest --test-dir build --output-on-failure -j "$(nproc)" --output-junit "$GL_CTEST_JUNIT"
phase fuzz-build bash scripts/fuzz.sh --build-only
phase fuzz bash scripts/fuzz.sh "${GPULAUNCH_FUZZ_SECONDS:-60}"
