#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Weight prefetch (`gpulaunch warm`, model.prefetch): a mock engine's weight load after a cache
# drop, cold and after `warm`; and `warm`'s parallel read against what a user would otherwise
# run, one sequential `cat shards > /dev/null`.
#
#   bench/prefetch_bench.sh [BUILD_DIR] [SIZE_GIB] [SHARDS] [RUNS]
#   BENCH_SMOKE=1 bench/prefetch_bench.sh BUILD_DIR   two 64 MiB shards, one run, no cache drop and
#                                                    no figures: the test suite's check that the
#                                                    bench still runs (needs no root)
#
# The fixture: SHARDS safetensors-like files (an 8-byte header length, a JSON header naming each
# tensor's dtype, shape and offsets, then the data) of SIZE_GIB in all, under BUILD_DIR, removed
# at the end. The mock engine (bench/prefetch_engine.py) reads them as a loader does. Before
# each measurement every cache is dropped (`echo 3 > /proc/sys/vm/drop_caches`, root only);
# where that is not permitted, each shard's own pages are dropped (posix_fadvise DONTNEED, via
# `dd iflag=nocache`), and the script says so.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
size_gib=${2:-4}
shards=${3:-4}
runs=${4:-3}
smoke=${BENCH_SMOKE:-0}
gpulaunch="$build/src/gpulaunch"
work="$build/bench-prefetch"
model="$work/model"
trap 'rm -rf "$work"' EXIT
rm -rf "$work" && mkdir -p "$model" "$work/profiles"
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Shards of 64 MiB tensors (bf16, 4096 x 8192), zeros after the header.
shard_bytes=$(( (size_gib << 30) / shards ))
((smoke)) && shards=2 shard_bytes=$((64 << 20))
for ((i = 1; i <= shards; i++)); do
  name=$(printf "model-%05d-of-%05d.safetensors" "$i" "$shards")
  python3 - "$model/$name" "$shard_bytes" <<'PY'
import json, struct, sys
path, size = sys.argv[1], int(sys.argv[2])
tensor = 64 << 20
header, offset, n = {"__metadata__": {"format": "pt"}}, 0, 0
while offset + tensor <= size:
    header[f"model.layers.{n}.weight"] = {"dtype": "BF16", "shape": [4096, 8192], "data_offsets": [offset, offset + tensor]}
    offset += tensor; n += 1
text = json.dumps(header).encode()
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(text))); f.write(text)
    zeros = bytes(16 << 20)
    left = offset
    while left:
        f.write(zeros[: min(len(zeros), left)]); left -= min(len(zeros), left)
PY
done
echo '{"model_type": "llama"}' >"$model/config.json"
sync
total=$(du -cb "$model"/*.safetensors | tail -1 | cut -f1)
cat >"$work/profiles/bench.toml" <<TOML
[engine]
kind = "command"
argv = ["/bin/true"]
[model]
path = "$model"
TOML

if ((smoke)); then
  python3 "$here/bench/prefetch_engine.py" "$model" >/dev/null
  "$gpulaunch" -P "$work/profiles" warm bench >/dev/null
  python3 "$here/bench/prefetch_engine.py" "$model" >/dev/null
  echo "prefetch_bench: smoke ok"
  exit 0
fi
drop_mode="echo 3 > /proc/sys/vm/drop_caches"
if ! { sync && echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null; then
  drop_mode="per file (posix_fadvise DONTNEED): /proc/sys/vm/drop_caches is not writable here"
fi
drop() {
  sync
  if [[ $drop_mode == echo* ]]; then echo 3 >/proc/sys/vm/drop_caches
  else for f in "$model"/*.safetensors; do dd if="$f" iflag=nocache count=0 status=none; done; fi
  local left
  left=$(fincore --noheadings --bytes --output RES "$model"/*.safetensors | awk '{s+=$1} END {print s+0}')
  if ((left > 0)); then echo "cannot drop the shards from the page cache ($left bytes stay): skipped" >&2; exit 77; fi
}
seconds() { local start=$EPOCHREALTIME; "$@" >/dev/null 2>&1; awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }'; }

cold=() warm=() after=() cat_read=()
for ((r = 0; r < runs; r++)); do
  drop; cold+=("$(python3 "$here/bench/prefetch_engine.py" "$model" | cut -d' ' -f1)")
  drop; warm+=("$(seconds "$gpulaunch" -P "$work/profiles" warm bench)")
  after+=("$(python3 "$here/bench/prefetch_engine.py" "$model" | cut -d' ' -f1)")
  drop; cat_read+=("$(seconds sh -c "cat '$model'/*.safetensors > /dev/null")")
done
m_cold=$(printf "%s\n" "${cold[@]}" | median)
m_warm=$(printf "%s\n" "${warm[@]}" | median)
m_after=$(printf "%s\n" "${after[@]}" | median)
m_cat=$(printf "%s\n" "${cat_read[@]}" | median)
gib=$(awk -v b="$total" 'BEGIN { printf "%.2f", b / 2^30 }')
echo "fixture: $shards shards, $gib GiB; cache drop: $drop_mode; $(nproc) CPUs; medians of $runs"
printf "%-44s %8s s  %s\n" "engine load, cold (after the drop)" "$m_cold" "${cold[*]}"
printf "%-44s %8s s  %s\n" "gpulaunch warm (8 threads, after the drop)" "$m_warm" "${warm[*]}"
printf "%-44s %8s s  %s\n" "engine load after warm" "$m_after" "${after[*]}"
printf "%-44s %8s s  %s\n" "cat shards > /dev/null (after the drop)" "$m_cat" "${cat_read[*]}"
awk -v c="$m_cold" -v w="$m_warm" -v a="$m_after" -v k="$m_cat" -v b="$total" 'BEGIN {
  printf "engine load, cold / after warm:        %.1fx\n", c / a
  printf "cat / warm (sequential / parallel read): %.2fx  (warm %.0f MiB/s, cat %.0f MiB/s)\n", k / w, b / 2^20 / w, b / 2^20 / k
  printf "cold load / (warm + load after warm):  %.2fx\n", c / (w + a) }'
