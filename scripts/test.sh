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
# The fuzz configuration compiles beside ctest, at the lowest priority: the private-systemd suites
# spend most of their time waiting, so its compiles take the cores the tests leave idle (a cold
# fuzz build is about 12 minutes of both cores). Its output goes to a log, printed when it ends;
# its phase time is the whole build, and "fuzz-build (wait)" the part ctest did not cover.
fuzz_log=$(mktemp /tmp/gpulaunch-fuzz-build.XXXXXX)
phase "fuzz-build (beside ctest)" nice -n 19 bash scripts/fuzz.sh --build-only >"$fuzz_log" 2>&1 &
fuzz_build=$!
ctest_status=0
phase ctest ctest --test-dir build --output-on-failure -j "$(nproc)" --output-junit "$GL_CTEST_JUNIT" ||
  ctest_status=$?
fuzz_build_status=0
phase "fuzz-build (wait)" wait "$fuzz_build" || fuzz_build_status=$?
echo "== fuzz build (beside ctest): exit $fuzz_build_status, last lines:"
tail -n 20 "$fuzz_log"
rm -f "$fuzz_log"
((ctest_status == 0)) || exit "$ctest_status"
((fuzz_build_status == 0)) || exit "$fuzz_build_status"
phase fuzz bash scripts/fuzz.sh "${GPULAUNCH_FUZZ_SECONDS:-60}"
