#!/usr/bin/env bash
# Fuzzes the profile chain (parse -> validate -> render) for a bounded time, from a seed corpus of
# every profile in the repository. Usage: scripts/fuzz.sh [SECONDS]. Fails on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build_dir=${FUZZ_BUILD_DIR:-build-fuzz}
cmake -S . -B "$build_dir" -G Ninja -DGPULAUNCH_FUZZ=ON -DGPULAUNCH_TESTS=OFF >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target profile_fuzzer
corpus="$build_dir/corpus"
mkdir -p "$corpus" "$build_dir/findings"
cp profiles/*.toml tests/golden/*.toml tests/malformed/*.toml tests/fuzz/seeds/* "$corpus/"
echo "fuzz: running profile_fuzzer for ${seconds}s on $(ls "$corpus" | wc -l) inputs"
# Findings go to build-fuzz/findings/; libFuzzer exits non-zero on the first one. Sanitizer
# reports abort, so that libFuzzer's signal handler writes the input that caused them there too
# (a plain exit, UBSan's default, leaves no reproducer).
export UBSAN_OPTIONS=abort_on_error=1:print_stacktrace=1 ASAN_OPTIONS=abort_on_error=1
"$build_dir/tests/fuzz/profile_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=65536 -print_final_stats=1 -artifact_prefix="$build_dir/findings/" "$corpus" 2>&1 |
  tail -n 25
status=${PIPESTATUS[0]}
if [[ $status -ne 0 ]]; then
  echo "fuzz: FINDING (exit $status); reproducer in $build_dir/findings/" >&2
  exit 1
fi
echo "fuzz: no findings in ${seconds}s"
