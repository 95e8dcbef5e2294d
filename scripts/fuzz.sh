#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzzes the profile chain (parse -> validate -> render) for a bounded time, from a seed corpus of
# every profile in the repository, then the cache archive reader (tar, zstd, manifest, file lists,
# streamed digests; what `cache import` reads as root) for as long, from seeds
# tests/fuzz/archive_seeds.py writes. Usage: scripts/fuzz.sh [SECONDS | --build-only]. Fails on
# any finding. The fuzz build is the suite's second configuration (sanitizers, coverage); it compiles
# through ccache like the first (scripts/ccache-env.sh). FUZZ_JOBS sets the build's parallelism
# (default: every core).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ccache-env.sh
seconds=${1:-60}
build_dir=${FUZZ_BUILD_DIR:-build-fuzz}
# In batches of 16 files (GPULAUNCH_UNITY), as scripts/demo.sh compiles, and with the objects of
# the demo's two binaries: so CI compiles every batch a newcomer's first command does. Objects,
# not the binaries: this configuration's library carries libFuzzer's coverage hooks, which only a
# fuzzer's link provides.
cmake -S . -B "$build_dir" -G Ninja -DGPULAUNCH_FUZZ=ON -DGPULAUNCH_TESTS=OFF -DGPULAUNCH_UNITY=ON \
  "${GL_CCACHE_CMAKE[@]}" >/dev/null
demo_objects=$(ninja -C "$build_dir" -t targets all |
  grep -oE '^src/CMakeFiles/gpulaunch(-record-start)?\.dir/[^:]+\.o' || true)
[[ -n $demo_objects ]] || { echo "fuzz.sh: no objects of the demo's binaries in $build_dir" >&2; exit 1; }
cmake --build "$build_dir" -j "${FUZZ_JOBS:-$(nproc)}" --target profile_fuzzer archive_fuzzer
# shellcheck disable=SC2086  # one object path per word
ninja -C "$build_dir" -j "${FUZZ_JOBS:-$(nproc)}" $demo_objects
[[ $seconds == --build-only ]] && exit 0
corpus="$build_dir/corpus"
mkdir -p "$corpus" "$build_dir/findings"
cp profiles/*.toml tests/golden/*.toml tests/malformed/*.toml tests/fuzz/seeds/* "$corpus/"
# A long word in each key whose value a matcher scans: std::regex once recursed per character
# there and overflowed the stack (found by a 15-minute run; 60 s from short seeds never grew an
# input that long). Generated, not committed: 60 KB each, under -max_len.
word=$(head -c 60000 /dev/zero | tr '\0' a)
head='[engine]
kind = "sglang"
venv = "/opt/venv"'
long_seed() { printf '%s\n%s\n' "$head" "$2" >"$corpus/seed-long-$1.toml"; }
long_seed hub-id "[model]
path = \"$word\""
long_seed host "[model]
path = \"/m\"
[nodes]
hosts = [\"$word\"]"
long_seed algorithm "[model]
path = \"/m\"
[speculative]
algorithm = \"$word\""
long_seed dist-init-addr "[model]
path = \"/m\"
[parallelism]
nodes = 2
dist_init_addr = \"$word:5000\""
long_seed extra "[model]
path = \"/m\"
[service]
extra = [\"ExecStartPre=/bin/$word\"]"
long_seed env-name "[model]
path = \"/m\"
[env]
$word = 1"
long_seed number "[model]
path = \"/m\"
[server]
port = ${word//a/1}"
echo "fuzz: running profile_fuzzer for ${seconds}s on $(ls "$corpus" | wc -l) inputs"
# A 1 MiB stack, an eighth of the default: anything that recurses per input byte overflows it
# at a fifth of -max_len (the std::regex crash needed 100 KB at 8 MB, 20 KB at 1 MB).
ulimit -s 1024
# Findings go to build-fuzz/findings/; libFuzzer exits non-zero on the first one. Sanitizer
# reports abort, so that libFuzzer's signal handler writes the input that caused them there too
# (a plain exit, UBSan's default, leaves no reproducer).
export UBSAN_OPTIONS=abort_on_error=1:print_stacktrace=1 ASAN_OPTIONS=abort_on_error=1
# The whole log goes to a file and its tail to the terminal: a pipe into tail would, under
# pipefail, end this script at the finding before it says where the reproducer is.
# fuzz TARGET CORPUS ARGS...: runs one target for $seconds.
fuzz() {
  local target=$1 corpus=$2 log="$build_dir/$1.log" status=0
  shift 2
  "$build_dir/tests/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build_dir/findings/" "$@" "$corpus" >"$log" 2>&1 ||
    status=$?
  tail -n 25 "$log"
  if [[ $status -ne 0 ]]; then
    echo "fuzz: $target FINDING (exit $status); reproducer in $build_dir/findings/, whole log $log" >&2
    exit 1
  fi
  echo "fuzz: $target: no findings in ${seconds}s"
}
fuzz profile_fuzzer "$corpus" -max_len=65536 -dict=tests/fuzz/profile.dict
archive_corpus="$build_dir/archive-corpus"
mkdir -p "$archive_corpus"
python3 tests/fuzz/archive_seeds.py "$archive_corpus"
echo "fuzz: running archive_fuzzer for ${seconds}s on $(ls "$archive_corpus" | wc -l) inputs"
fuzz archive_fuzzer "$archive_corpus" -max_len=262144
