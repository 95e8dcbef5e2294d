#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# clang-tidy over gpulaunch's sources with the repository's .clang-tidy, using build/'s
# compile_commands.json (configure first: scripts/build.sh). Arguments: the .cpp files to check;
# none: every file under src/. Exit 1 when clang-tidy reports anything.
# Debian 12's clang-tidy-16 (apt-get install clang-tidy-16): clang 14 cannot read libstdc++ 12's
# <expected>. libstdc++ gates <expected> on __cpp_concepts >= 202002L, which clang 16 implements
# (conditionally trivial special members) without announcing it, hence the -D.
set -euo pipefail
cd "$(dirname "$0")/.."
tidy=${CLANG_TIDY:-clang-tidy-16}
build_dir=${BUILD_DIR:-build}
command -v "$tidy" >/dev/null || { echo "tidy: $tidy missing: apt-get install clang-tidy-16" >&2; exit 2; }
[[ -f $build_dir/compile_commands.json ]] || { echo "tidy: no $build_dir/compile_commands.json: run scripts/build.sh" >&2; exit 2; }
if (($#)); then files=("$@"); else mapfile -t files < <(git ls-files -- 'src/*.cpp'); fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 4 "$tidy" -p "$build_dir" --quiet \
  --extra-arg=-std=gnu++2b --extra-arg=-D__cpp_concepts=202002L \
  --extra-arg=-Wno-macro-redefined --extra-arg=-Wno-unknown-warning-option >"$log" 2>&1 || true
if grep -E ': (warning|error): ' "$log" >/dev/null; then
  grep -E -A3 ': (warning|error): ' "$log"
  echo "tidy: $(grep -cE ': (warning|error): ' "$log") findings in ${#files[@]} files" >&2
  exit 1
fi
echo "tidy: ${#files[@]} files clean"
