#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `gpulaunch cache export` and `cache import` as root runs them, between "nodes" that are cache
# roots and state roots of their own: the round trip into the service user's caches, an archive
# altered by one byte, one compiled for another torch, links and names outside the cache in an
# archive, a cache directory that is a link; then the mock SGLang: a node seeded from another
# starts without the compile the first one went through.
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
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gl-cache-archive-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"

# fake_venv DIR TORCH: just enough of a venv for the facts: torch's version.py.
fake_venv() {
  mkdir -p "$1/lib/python3.11/site-packages/torch"
  printf "__version__ = '%s'\ncuda = '13.0'\n" "$2" >"$1/lib/python3.11/site-packages/torch/version.py"
}
# node NAME VENV [USER]: a profile k26 whose caches and root's records are the node's own.
node() {
  mkdir -p "$1/profiles" "$1/state"
  cat >"$1/profiles/k26.toml" <<TOML
[engine]
kind = "sglang"
venv = "$2"
[model]
path = "/models/m"
[caches]
root = "$scratch/$1/cache"
[service]
user = "${3:-nobody}"
TOML
}
gl() {  # NODE COMMAND...: gpulaunch on that node, stdout and stderr together
  local name=$1; shift
  "$gpulaunch" "$@" --state-root "$scratch/$name/state" 2>&1
}
prepare() {
  "$gpulaunch" prepare-caches --profile=k26 --snapshot="$scratch/$1/profiles/k26.toml" \
    --state-root="$scratch/$1/state" >/dev/null 2>&1
}

fake_venv venv-a "2.9.0+cu128"
fake_venv venv-b "2.9.1+cu130"
node a "$scratch/venv-a"
node b "$scratch/venv-a"
node c "$scratch/venv-b"
prepare a
mkdir -p a/cache/flashinfer/.cache/flashinfer/0.6.7/120/cached_ops/norm a/cache/triton/ABCD
echo "flashinfer object" >a/cache/flashinfer/.cache/flashinfer/0.6.7/120/cached_ops/norm/norm.so
head -c 200000 /dev/urandom >a/cache/triton/ABCD/kernel.cubin

# --- round trip ---
out=$(gl a cache export a/profiles/k26.toml -o "$scratch/a.tar.zst")
check "export exits 0" test $? -eq 0
check "export names each cache with files" grep -q "^exported flashinfer: 1 file(s)" <<<"$out"
check "export skips empty caches" bash -c '! grep -q "exported tvm-ffi" <<<"$1"' _ "$out"
out=$(gl b cache import b/profiles/k26.toml "$scratch/a.tar.zst")
check "import exits 0" test $? -eq 0
check "import names where each cache went" \
  grep -q "^imported flashinfer into $scratch/b/cache/flashinfer: 1 file(s)" <<<"$out"
check "imported content is the first node's" \
  cmp -s a/cache/triton/ABCD/kernel.cubin b/cache/triton/ABCD/kernel.cubin
check "imported files belong to the service user" \
  test "$(stat -c %U b/cache/triton/ABCD/kernel.cubin)" = nobody
digest() { gl "$1" cache "$1/profiles/k26.toml" --json | python3 -c \
  'import json,sys; print(json.load(sys.stdin)["caches"]["flashinfer"]["digest"])'; }
check "both nodes' digests agree, as up --all-nodes compares them" test "$(digest a)" = "$(digest b)"
out=$("$gpulaunch" prepare-caches --profile=k26 --snapshot="$scratch/b/profiles/k26.toml" \
  --state-root="$scratch/b/state" 2>&1)
check "the next start keeps what was imported" grep -q "JIT caches current" <<<"$out"
check "... and the files" test -s b/cache/triton/ABCD/kernel.cubin

# --- refusals: each leaves node b's caches as they were ---
zstd -q -d -c a.tar.zst >a.tar
before=$(cd b/cache && find . -type f -exec sha256sum {} + | sort)
unchanged() { test "$(cd b/cache && find . -type f -exec sha256sum {} + | sort)" = "$before" &&
  test -z "$(find b/cache -name '.trash-*')"; }
# One byte of norm.so's content changed.
python3 - a.tar tampered.tar <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
at = data.index(b"flashinfer object")
data[at] ^= 0x01
open(sys.argv[2], "wb").write(data)
PY
out=$(gl b cache import b/profiles/k26.toml "$scratch/tampered.tar")
check "an altered archive exits 1" test $? -eq 1
check "... saying its content does not match its digest" \
  grep -q "^Refusing to import '$scratch/tampered.tar': member 'caches/flashinfer/.cache/flashinfer/0.6.7/120/cached_ops/norm/norm.so' does not match the content digest in its manifest" <<<"$out"
check "... and the caches are as they were" unchanged

out=$(gl c cache import c/profiles/k26.toml "$scratch/a.tar.zst")
check "an archive compiled for another torch exits 1" test $? -eq 1
check "... naming the fact" grep -q "torch_version 2.9.1+cu130 here, 2.9.0+cu128 in the archive" <<<"$out"
check "... and writing nothing" test ! -e c/cache

# crafted KIND NAME: a.tar with one more member appended.
crafted() {
  python3 - a.tar "$1.tar" "$1" "$2" <<'PY'
import io, shutil, sys, tarfile
shutil.copy(sys.argv[1], sys.argv[2])
kind, name = sys.argv[3], sys.argv[4]
with tarfile.open(sys.argv[2], "a", format=tarfile.PAX_FORMAT) as archive:
    info = tarfile.TarInfo(name)
    if kind == "symlink":
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/shadow"
        archive.addfile(info)
    else:
        info.size = 5
        archive.addfile(info, io.BytesIO(b"evil\n"))
PY
}
crafted symlink caches/flashinfer/link.so
crafted absolute /tmp/gl-cache-archive-evil
crafted climbing caches/flashinfer/../../../gl-cache-archive-evil
for kind in symlink absolute climbing; do
  out=$(gl b cache import b/profiles/k26.toml "$scratch/$kind.tar")
  check "a $kind member exits 1" test $? -eq 1
  check "... and says why" grep -q "^Refusing to import '$scratch/$kind.tar': member" <<<"$out"
  check "... and the caches are as they were" unchanged
done
check "nothing was written outside" test ! -e /tmp/gl-cache-archive-evil -a ! -e "$scratch/../gl-cache-archive-evil"

mkdir -p outside && echo "not the engine's" >outside/keep
rm -rf b/cache/flashinfer && ln -s "$scratch/outside" b/cache/flashinfer
out=$(gl b cache import b/profiles/k26.toml "$scratch/a.tar.zst")
check "a linked cache directory exits 1" test $? -eq 1
check "... saying it is not followed" grep -q "symbolic link or not a directory; not followed" <<<"$out"
check "... and nothing is written through it" test "$(ls outside)" = keep
check "... which stays a link" test -L b/cache/flashinfer

# --- streamed, as `up --all-nodes` seeds a rank: export to stdout, piped into import's stdin ---
node s "$scratch/venv-a"
node t "$scratch/venv-a"
out=$("$gpulaunch" cache export a/profiles/k26.toml -o - --state-root "$scratch/a/state" \
  2>"$scratch/export.err" | gl s cache import s/profiles/k26.toml -)
check "a streamed import exits 0" test $? -eq 0
check "... reading the archive from stdin" grep -q "of stdin; fingerprint stamped" <<<"$out"
check "... the export's report on stderr, not in the stream" grep -q "^exported flashinfer" "$scratch/export.err"
check "... and the content is the first node's" cmp a/cache/triton/ABCD/kernel.cubin s/cache/triton/ABCD/kernel.cubin
out=$("$gpulaunch" cache export a/profiles/k26.toml -o - --state-root "$scratch/a/state" 2>/dev/null |
  head -c 4096 | gl t cache import t/profiles/k26.toml -)
check "a stream cut short is refused" test $? -ne 0
check "... and writes no cache" test ! -e t/cache/triton/ABCD/kernel.cubin

# --- the mock engine: the seeded node starts without compiling ---
"$src/mock/install.sh" "$scratch/mock-venv" >/dev/null
node d "$scratch/mock-venv" root
node e "$scratch/mock-venv" root
# to_ready NODE: seconds from the engine's exec to /health 200 (the mock writes when), the
# caches prepared first as the unit's ExecStartPre= does; the engine is stopped by its PID.
to_ready() {
  prepare "$1"
  local port began ready engine
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  rm -f "$scratch/$1/ready"
  began=$(date +%s.%N)
  (
    eval "$("$gpulaunch" env "$1/profiles/k26.toml")"
    export HOME="$scratch/$1" MOCK_SGLANG_LOAD_SECONDS=0.2 MOCK_JIT_GROW_SECONDS=2 \
      MOCK_SGLANG_READY_FILE="$scratch/$1/ready"
    exec "$scratch/mock-venv/bin/sglang" serve --model-path /models/m --port "$port"
  ) >"$scratch/$1/engine.log" 2>&1 &
  engine=$!
  for _ in $(seq 300); do [[ -s $scratch/$1/ready ]] && break; sleep 0.1; done
  kill -TERM "$engine" 2>/dev/null
  wait "$engine" 2>/dev/null
  ready=$(cat "$scratch/$1/ready" 2>/dev/null || echo 0)
  python3 -c "print(round($ready - $began, 2))"
}
# jit_objects NODE: the mock's JIT objects and its build record, each with its modification time
# (a build rewrites them all).
jit_objects() {
  find "$scratch/$1/cache/flashinfer/.cache/flashinfer/mock-jit/cached_ops" -type f \
    -printf '%P %T@\n' 2>/dev/null | sort
}
cold=$(to_ready d)
check "the first node compiles before it is ready (${cold}s)" python3 -c "assert $cold >= 2.0"
check "... writing its objects into the cache" test -n "$(jit_objects d)"
gl d cache export d/profiles/k26.toml -o "$scratch/d.tar.zst" >/dev/null
gl e cache import e/profiles/k26.toml "$scratch/d.tar.zst" >/dev/null
imported=$(jit_objects e)
seeded=$(to_ready e)
# Whether it compiled, not how much sooner it was ready: at load 10 on 2 cores the processes'
# start alone varied by more than the 2 s build (cold 4.02 s, seeded 2.54 s).
check "the node seeded from it is ready (${seeded}s) without compiling" \
  test -n "$imported" -a "$(jit_objects e)" == "$imported" -a "$seeded" != 0

# The archive module (libarchive's half, loaded only by these commands): a copy of the binary
# outside the build tree looks in ../lib/gpulaunch/ beside it, and root loads only a module that
# only root could have put there.
mkdir -p copy/bin copy/lib/gpulaunch
cp "$gpulaunch" copy/bin/gpulaunch
module=$(dirname "$gpulaunch")/../lib/gpulaunch/gpulaunch-archive.so
node m "$scratch/venv-a"
prepare m
copied() { "$scratch/copy/bin/gpulaunch" cache import m/profiles/k26.toml "$scratch/a.tar.zst" \
  --state-root "$scratch/m/state" 2>&1; }
out=$(copied); rc=$?
check "no module: one line naming it, exit 1" \
  test "$rc" = 1 -a "$(wc -l <<<"$out")" = 1 -a -n "$(grep -F 'copy/lib/gpulaunch/gpulaunch-archive.so' <<<"$out")"
cp "$module" copy/lib/gpulaunch/ && chmod 0666 copy/lib/gpulaunch/gpulaunch-archive.so
out=$(copied); rc=$?
check "a world-writable module is refused as root" grep -q "mode 0666.*root loads only" <<<"$out"
mv copy/lib/gpulaunch/gpulaunch-archive.so copy/module.so && chmod 0644 copy/module.so
ln -s "$scratch/copy/module.so" copy/lib/gpulaunch/gpulaunch-archive.so
out=$(copied); rc=$?
check "a module behind a link is refused" test "$rc" = 1 -a -n "$(grep 'cannot be opened' <<<"$out")"
rm copy/lib/gpulaunch/gpulaunch-archive.so && cp "$module" copy/lib/gpulaunch/
out=$(copied); rc=$?
check "the module in place: the copy imports ($rc: ${out%%$'\n'*})" test "$rc" = 0
check "commands that read no archive never load libarchive" \
  bash -c "! LD_DEBUG=files '$gpulaunch' --version 2>&1 | grep -q libarchive"

echo "$failures failed"
((failures == 0))
