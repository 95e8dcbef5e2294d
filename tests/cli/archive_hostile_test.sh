#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 45's audit, kept: every kind of hostile cache archive (tests/cli/hostile_archives.py builds
# them at test time from a real export: links, devices, FIFOs, `..`, absolute and long names,
# duplicates, lying manifests, lists and digests, zero bombs, deep and many directories, huge
# claimed sizes, set-id modes, bad and cut streams), each imported by the real `gpulaunch cache
# import` as root into a node's caches. Each refused one exits 1 with one line naming what it
# refused, writes nothing outside the cache and leaves the caches as they were; the honest ones
# import (a zero bomb as a hole, a set-id mode without its bit); the good archive still imports.
# Export refuses a sparse terabyte from its apparent size.
set -uo pipefail
gpulaunch=$(realpath "$1")
src=$(realpath "$2")
failures=0
check() {  # description, then a command that must succeed
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi
}
if [[ $(id -u) -ne 0 ]]; then
  echo "skipped: import runs as root (root's records, the service user's caches)"
  exit 77
fi
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gl-archive-hostile-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
canary="$scratch/outside/canary"
mkdir -p outside venv/lib/python3.11/site-packages/torch
printf "__version__ = '2.9.0+cu128'\ncuda = '13.0'\n" >venv/lib/python3.11/site-packages/torch/version.py
node() {
  mkdir -p "$1/profiles" "$1/state"
  cat >"$1/profiles/k26.toml" <<TOML
[engine]
kind = "sglang"
venv = "$scratch/venv"
[model]
path = "/models/m"
[caches]
root = "$scratch/$1/cache"
[service]
user = "nobody"
TOML
}
node a
node b
"$gpulaunch" prepare-caches --profile=k26 --snapshot="$scratch/a/profiles/k26.toml" \
  --state-root="$scratch/a/state" >/dev/null 2>&1
mkdir -p a/cache/flashinfer/0.6.7/120/cached_ops/norm a/cache/triton/ABCD
echo "flashinfer object" >a/cache/flashinfer/0.6.7/120/cached_ops/norm/norm.so
head -c 100000 /dev/urandom >a/cache/triton/ABCD/kernel.cubin
"$gpulaunch" cache export a/profiles/k26.toml -o "$scratch/good.tar.zst" \
  --state-root "$scratch/a/state" >/dev/null 2>&1 || { echo "FAIL the good export"; exit 1; }
zstd -q -d good.tar.zst -o good.tar
count=$(python3 "$src/tests/cli/hostile_archives.py" good.tar crafted "$canary") ||
  { echo "FAIL building the crafted archives"; exit 1; }
echo "built $count archives"

import_b() { "$gpulaunch" cache import b/profiles/k26.toml "$1" --state-root "$scratch/b/state" 2>&1; }
# b's caches hold a file of its own, the state every refusal must leave.
good_into_b() {
  import_b good.tar >/dev/null && echo "b's own" >b/cache/flashinfer/own.so
}
good_into_b
# What is outside b's caches (b's state holds root's records, which import rewrites).
outside() { find "$scratch" -path "$scratch/b" -prune -o -path "$scratch/crafted" -prune -o \
  -printf '%p %s %m %u\n' | sort; }
cache_state() { (cd b/cache && find . -printf '%p %s %m %u\n' | sort); }
before_outside=$(outside)
while IFS=$'\t' read -r kind expect text file; do
  before_cache=$(cache_state)
  began=$(date +%s%N)
  out=$(import_b "crafted/$file")
  status=$?
  [[ ${VERBOSE:-} ]] && echo "  $kind: $(( ($(date +%s%N) - began) / 1000000 )) ms"
  if [[ $expect == refuse ]]; then
    check "$kind: refused (exit 1)" test "$status" -eq 1
    check "$kind: in one line" test "$(grep -c . <<<"$out")" -eq 1
    check "$kind: naming it ($text)" grep -qF -- "$text" <<<"$out"
    check "$kind: b's caches as they were" test "$(cache_state)" = "$before_cache"
  else
    check "$kind: imported" test "$status" -eq 0
    [[ $status -eq 0 ]] || echo "  $out"
    case $text in
      sparse) check "$kind: its 64 MiB of zeros a hole" \
        test "$(stat -c %s b/cache/flashinfer/k.so)" -eq $((64 << 20)) -a \
        "$(stat -c %b b/cache/flashinfer/k.so)" -le 8 ;;
      no\ set-id) check "$kind: without its set-id bit" \
        test "$(stat -c %a b/cache/flashinfer/setuid.so)" = 755 ;;
    esac
    good_into_b
  fi
  [[ $status -eq 0 || $expect == import ]] || [[ -n $out ]] || echo "  (no output)"
  [[ $expect == refuse && ${VERBOSE:-} ]] && echo "  $out"
  check "$kind: nothing written outside the cache" test ! -e "$canary" -a "$(outside)" = "$before_outside"
  check "$kind: no leftover" test -z "$(find b -name '.trash-*')"
done <crafted/cases.tsv
check "nothing climbed out of the scratch directory" test ! -e "$scratch/../$(basename "$canary")"
out=$(import_b good.tar)
check "the good archive still imports" test $? -eq 0
check "... with the first node's content" cmp -s a/cache/triton/ABCD/kernel.cubin b/cache/triton/ABCD/kernel.cubin

# The reserve on a real filesystem: node c's caches on a tmpfs of 32 MiB (a reserve of 5 %, 1.6
# MiB), an archive holding 31 MiB: refused once a write would go below it, leaving nothing behind;
# on 64 MiB the same archive imports. In a private mount namespace, gone when it ends.
node c
head -c $((31 << 20)) /dev/urandom >a/cache/triton/ABCD/big.bin
"$gpulaunch" cache export a/profiles/k26.toml -o "$scratch/big.tar.zst" \
  --state-root "$scratch/a/state" >/dev/null 2>&1
rm a/cache/triton/ABCD/big.bin
on_tmpfs() {  # SIZE: import big.tar.zst into c's caches on a tmpfs of SIZE; prints what it says
  unshare -m --propagation private bash -c '
    mkdir -p "$1/c/cache" && mount -t tmpfs -o "size=$2" gl-reserve "$1/c/cache" || exit 77
    "$3" cache import "$1/c/profiles/k26.toml" "$1/big.tar.zst" --state-root "$1/c/state" 2>&1
    status=$?
    echo "leftovers: $(find "$1/c/cache" -name ".trash-*" | wc -l)"
    exit $status' _ "$scratch" "$1" "$gpulaunch"
}
out=$(on_tmpfs 32m)
status=$?
if [[ $status -eq 77 ]]; then
  echo "skipped the reserve on a tmpfs: no private mount namespace here"
else
  check "a 31 MiB archive on a 32 MiB filesystem is refused (exit 1)" test "$status" -eq 1
  check "... at its reserve, naming the member" grep -q "^Refusing to import '$scratch/big.tar.zst': member 'caches/triton/ABCD/big.bin' would leave less than [0-9]* bytes free on the filesystem of '$scratch/c/cache/.trash-import-triton-[^']*' ([0-9]* free; import keeps 5% of it" <<<"$out"
  check "... leaving nothing behind" grep -q "^leftovers: 0" <<<"$out"
  out=$(on_tmpfs 64m)
  check "on 64 MiB the same archive imports" test $? -eq 0
fi

# Export (issue 45, finding 5): a terabyte sparse file the engine left in its cache, no byte of it
# stored, is refused from its apparent size instead of being read as zeros for hours.
truncate -s 1T a/cache/triton/ABCD/sparse.bin
began=$(date +%s)
out=$("$gpulaunch" cache export a/profiles/k26.toml -o "$scratch/sparse.tar.zst" \
  --state-root "$scratch/a/state" 2>&1)
status=$?
echo "  the sparse export took $(($(date +%s) - began)) s"
check "a sparse terabyte is refused at export (exit 1)" test "$status" -eq 1
check "... naming its apparent size" grep -q "apparent sizes add up to 1099511727776 bytes" <<<"$out"
rm a/cache/triton/ABCD/sparse.bin

echo "$failures failed"
((failures == 0))
