#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Rewrites every golden unit (tests/golden/*.service, tests/golden/examples/*.service) from what the
# current build renders, then shows what changed: review it before committing. The inline
# assertions (## lines in the profiles) still run and must pass.
#   scripts/update-golden.sh        (the build in build/, or $BUILD_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
BUILD_TARGETS=gpulaunch_unit_tests bash scripts/build.sh
GPULAUNCH_UPDATE_GOLDEN=1 ctest --test-dir "$build_dir" --output-on-failure -R 'Golden\.RendersExactly'
ctest --test-dir "$build_dir" --output-on-failure -R 'Golden\.'
git --no-pager diff --stat -- tests/golden
