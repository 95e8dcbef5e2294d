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
unformatted=()
for file in "${files[@]}"; do
  "$format" --dry-run --Werror "$file" >/dev/null 2>&1 || unformatted+=("$file")
done
if ((${#unformatted[@]})); then
  printf 'check-format: not clang-formatted: %s\n' "${unformatted[@]}" >&2
  echo "check-format: fix with: bash scripts/check-format.sh --fix" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
