#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every golden sbatch script (tests/golden/slurm/*.sbatch, what `render --slurm` prints) parses
# (`bash -n`) and passes shellcheck where shellcheck is installed (Debian's shellcheck; without
# it, the parse alone, said so).
#
#   script_lint.sh SOURCE_DIR
set -uo pipefail
failures=0
shopt -s nullglob
scripts=("$1"/tests/golden/slurm/*.sbatch)
((${#scripts[@]})) || { echo "FAIL: no golden sbatch scripts under $1/tests/golden/slurm"; exit 1; }
for script in "${scripts[@]}"; do
  if bash -n "$script"; then echo "ok   bash -n $(basename "$script")"; else
    echo "FAIL bash -n $(basename "$script")"; failures=$((failures + 1)); fi
  if command -v shellcheck >/dev/null; then
    if shellcheck --shell=bash "$script"; then echo "ok   shellcheck $(basename "$script")"; else
      echo "FAIL shellcheck $(basename "$script")"; failures=$((failures + 1)); fi
  else
    echo "note: shellcheck is not installed: $(basename "$script") parsed only"
  fi
done
exit $((failures > 0))
