#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Seeding a node's compiled caches from another (`gpulaunch cache export` / `cache import`): time
# to ready of a second node after the first compiled, seeded against cold, and against a warm
# restart of the first node, with the mock SGLang whose first start compiles for COMPILE_S
# seconds (MOCK_JIT_GROW_SECONDS) and whose later starts find the build in its JIT cache.
#
#   bench/cache_seed_bench.sh [BUILD_DIR] [COMPILE_S] [RUNS]      root: import writes root's
#                                                                  records and the caches
#   BENCH_SMOKE=1 bench/cache_seed_bench.sh BUILD_DIR             1 s compile, one run, no
#                                                                  figures: the suite's check
#
# Each "node" is a profile with a cache root and a state root of its own on this machine. A
# start is what the unit does before the engine answers: `gpulaunch prepare-caches` (its
# ExecStartPre=), then the engine with the unit's environment (`gpulaunch env`), until /health
# answers 200 (the mock writes when: MOCK_SGLANG_READY_FILE). Per run:
#   cold:   node A, empty caches: it compiles
#   warm:   node A again: a restart on the same node
#   seeded: node B: `cache import` of A's export, then a start (import time counted in)
#   cold2:  node C, empty caches: a second node without the archive
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
compile=${2:-20}
runs=${3:-3}
smoke=${BENCH_SMOKE:-0}
load=2
((smoke)) && compile=1 runs=1 load=0.2
if [[ $(id -u) -ne 0 ]]; then
  echo "skipped: cache import runs as root"
  exit 77
fi
gpulaunch="$build/src/gpulaunch"
work="$build/bench-cache-seed"
trap 'rm -rf "$work"' EXIT
rm -rf "$work" && mkdir -p "$work"
"$here/mock/install.sh" "$work/venv" >/dev/null
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now() { date +%s.%N; }

# node NAME: a fresh node (no caches, no records).
node() {
  rm -rf "${work:?}/$1" && mkdir -p "$work/$1/profiles" "$work/$1/state"
  cat >"$work/$1/profiles/k26.toml" <<TOML
[engine]
kind = "sglang"
venv = "$work/venv"
[model]
path = "/models/m"
[caches]
root = "$work/$1/cache"
[service]
user = "root"
TOML
}
# start NAME: seconds from the start (prepare-caches) to /health 200; the engine is then stopped
# by its PID.
start() {
  local port began engine
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  rm -f "$work/$1/ready"
  began=$(now)
  "$gpulaunch" prepare-caches --profile=k26 --snapshot="$work/$1/profiles/k26.toml" \
    --state-root="$work/$1/state" >/dev/null
  (
    eval "$("$gpulaunch" env "$work/$1/profiles/k26.toml")"
    export HOME="$work/$1" MOCK_SGLANG_LOAD_SECONDS=$load MOCK_JIT_GROW_SECONDS=$compile \
      MOCK_JIT_GROW_KIB_PER_SECOND=2048 MOCK_SGLANG_READY_FILE="$work/$1/ready"
    exec "$work/venv/bin/sglang" serve --model-path /models/m --port "$port"
  ) >"$work/$1/engine.log" 2>&1 &
  engine=$!
  for _ in $(seq $((compile * 20 + 600))); do [[ -s $work/$1/ready ]] && break; sleep 0.05; done
  kill -TERM "$engine" 2>/dev/null || true
  wait "$engine" 2>/dev/null || true
  [[ -s $work/$1/ready ]] || { echo "the engine on $1 never answered:" >&2; cat "$work/$1/engine.log" >&2; exit 1; }
  python3 -c "print(f'{$(cat "$work/$1/ready") - $began:.3f}')"
}

seeded_compiled=0 cold_skipped=0
: >"$work/cold" >"$work/warm" >"$work/seeded" >"$work/import" >"$work/cold2" >"$work/export"
for ((run = 1; run <= runs; run++)); do
  node a && node b && node c
  start a >>"$work/cold"
  start a >>"$work/warm"
  began=$(now)
  "$gpulaunch" cache export "$work/a/profiles/k26.toml" -o "$work/a.tar.zst" \
    --state-root "$work/a/state" >/dev/null
  python3 -c "print(f'{$(now) - $began:.3f}')" >>"$work/export"
  began=$(now)
  "$gpulaunch" cache import "$work/b/profiles/k26.toml" "$work/a.tar.zst" \
    --state-root "$work/b/state" >/dev/null
  imported=$(python3 -c "print(f'{$(now) - $began:.3f}')")
  echo "$imported" >>"$work/import"
  # The smoke's verdict is whether node B compiled, read from its cache, not from a time (a
  # loaded machine stretches import and start past a 1 s compile): a mock build rewrites its
  # record (mock/common/mock_scheduler.py silent_jit_build), so the imported record must still
  # be the one there after B's start, with no object added.
  record=$(find "$work/b/cache/flashinfer" -name mock-jit-build.json 2>/dev/null | head -1 || true)
  files() { { find "$work/b/cache/flashinfer" -type f 2>/dev/null || true; } | sort | md5sum; }
  before=$(stat -c '%i %Y' "$record" 2>/dev/null || true; files)
  seeded=$(start b)
  after=$(stat -c '%i %Y' "$record" 2>/dev/null || true; files)
  [[ -n $record && $before == "$after" ]] || seeded_compiled=1
  python3 -c "print(f'{$imported + $seeded:.3f}')" >>"$work/seeded"
  start c >>"$work/cold2"
  [[ -n $(find "$work/c/cache/flashinfer" -name mock-jit-build.json 2>/dev/null) ]] || cold_skipped=1
done

cold=$(median <"$work/cold2")
warm=$(median <"$work/warm")
seeded=$(median <"$work/seeded")
if ((smoke)); then
  if ((seeded_compiled)); then
    echo "smoke FAILED: the seeded node compiled again (ready in ${seeded}s, a cold node in ${cold}s)"
    exit 1
  fi
  if ((cold_skipped)); then
    echo "smoke FAILED: the cold node wrote no build record: the mock did not compile"
    exit 1
  fi
  echo "smoke ok"
  exit 0
fi
size=$(stat -c %s "$work/a.tar.zst")
echo "mock SGLang: weights ${load} s, first-use compile ${compile} s (2 MiB/s into its JIT cache); $runs run(s), medians"
printf '%-34s %8s   %s\n' "start" "median" "runs (s)"
row() { printf '%-34s %7ss   %s\n' "$1" "$(median <"$work/$2")" "$(tr '\n' ' ' <"$work/$2")"; }
row "first node, cold (compiles)" cold
row "first node, warm restart" warm
row "second node, cold" cold2
row "second node, seeded (import+start)" seeded
row "  of which cache import" import
row "cache export on the first node" export
echo "archive: $size bytes"
python3 -c "print(f'seeded / warm restart: {$seeded / $warm:.2f}x (goal <= 1.2x); cold / seeded: {$cold / $seeded:.1f}x')"
