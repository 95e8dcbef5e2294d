#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, from a fresh Debian 12 machine: dependencies, build, unit, golden and
# integration tests, then a bounded fuzzing run of the profile parser.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
bash scripts/fuzz.sh "${GPULAUNCH_FUZZ_SECONDS:-60}"
