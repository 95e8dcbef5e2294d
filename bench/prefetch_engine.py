#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A mock engine's weight load, for bench/prefetch_bench.sh: reads every *.safetensors file of a
directory the way a loader does (the 8-byte little-endian header length, the JSON header, then
each tensor's bytes in the header's order) and prints the seconds it took. Pure stdlib."""
import json
import pathlib
import struct
import sys
import time

CHUNK = 16 << 20


def load(path: pathlib.Path) -> int:
    with open(path, "rb", buffering=0) as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
        base = 8 + length
        total = 0
        for name, tensor in header.items():
            if name == "__metadata__":
                continue
            start, end = tensor["data_offsets"]
            f.seek(base + start)
            left = end - start
            while left > 0:
                got = f.read(min(CHUNK, left))
                if not got:
                    raise SystemExit(f"{path}: short read in {name}")
                left -= len(got)
                total += len(got)
        return total


def main() -> None:
    start = time.monotonic()
    total = sum(load(p) for p in sorted(pathlib.Path(sys.argv[1]).glob("*.safetensors")))
    print(f"{time.monotonic() - start:.3f} {total}")


if __name__ == "__main__":
    main()
