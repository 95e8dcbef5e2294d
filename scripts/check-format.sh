#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks that every tracked C++ file is as clang-format (the repository's .clang-format, Debian's
# clang-format-14) writes it; names the files that are not. With --fix, rewrites them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
format=${CLANG_FORMAT:-clang-format-14}
command -v "$format" >/dev/null || { echo "check-format: $format missing: run scripts/install-deps.sh" >&2; exit 2; }
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h')
if [[ ${1:-} == --fix ]]; then
  "$format" -i "${files[@]}"
  exit 0
fi
# Batches of files per process, one process per core (one process per file took a minute in CI);
# each violation is reported as FILE:LINE:COL: error: ... [-Wclang-format-violations].
report=$(printf '%s\0' "${files[@]}" |
  xargs -0 -n 64 -P "$(nproc)" "$format" --dry-run --Werror 2>&1 >/dev/null || true)
mapfile -t unformatted < <(sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' <<<"$report" | sort -u)
if grep -qv -e 'error: code should be clang-formatted' -e '^ ' -e '^\^' -e '^$' <<<"$report" &&
  ((${#unformatted[@]} == 0)); then
  echo "check-format: $format failed:" >&2
  echo "$report" | head -n 20 >&2
  exit 2
fi
if ((${#unformatted[@]})); then
  printf 'check-format: not clang-formatted: %s\n' "${unformatted[@]}" >&2
  echo "check-format: fix with: bash scripts/check-format.sh --fix" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
