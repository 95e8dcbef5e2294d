#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Seeds for archive_fuzzer, written at fuzz time (scripts/fuzz.sh): small cache archives in the
shapes `cache export` writes (a manifest, a file list, files; plain and zstd) and the shapes an
attacker sends (links, devices, long pax names, a GNU sparse member, a GNU tar, a cut stream).
Usage: archive_seeds.py OUT_DIR"""
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def stored(content):
    h = hashlib.sha256()
    for offset in range(0, len(content), 65536):
        block = content[offset:offset + 65536]
        if block.count(0) != len(block):
            h.update(offset.to_bytes(8, "little") + block)
    return h.hexdigest()


files = {"k/a.so": b"compiled kernel", "k/b/c.cubin": bytes(70000) + b"tail", "z": b""}
records = b"".join(p.encode() + b"\0" + str(len(c)).encode() + b"\0" + stored(c).encode() + b"\n"
                   for p, c in sorted(files.items()))
manifest = {"gpulaunch_cache_archive": 2, "profile": "k26", "caches": [{
    "name": "flashinfer", "fingerprint": "0" * 16, "facts": {"torch_version": "2.9.0"},
    "digest": hashlib.sha256(records).hexdigest(), "files": len(files),
    "bytes": sum(map(len, files.values()))}]}


def member(name, data=b"", **fields):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in fields.items():
        setattr(info, key, value)
    return info, data


good = [member("gpulaunch-cache-archive.json", json.dumps(manifest).encode()),
        member("gpulaunch-cache-records/flashinfer", records)] + \
    [member("caches/flashinfer/" + p, c) for p, c in sorted(files.items())]


def write(name, members, fmt=tarfile.PAX_FORMAT):
    path = os.path.join(out, name)
    with tarfile.open(path, "w", format=fmt) as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return path


plain = write("good.tar", good)
subprocess.run(["zstd", "-q", "-f", plain, "-o", os.path.join(out, "good.tar.zst")], check=True)
write("gnu.tar", good, tarfile.GNU_FORMAT)
write("links.tar", good[:2] + [
    member("caches/flashinfer/l", type=tarfile.SYMTYPE, linkname="/etc/shadow"),
    member("caches/flashinfer/h", type=tarfile.LNKTYPE, linkname="caches/flashinfer/k/a.so"),
    member("caches/flashinfer/d", type=tarfile.CHRTYPE, devmajor=1, devminor=3),
    member("caches/flashinfer/f", type=tarfile.FIFOTYPE),
    member("caches/flashinfer/dir", type=tarfile.DIRTYPE)])
write("long-names.tar", good[:2] + [member("caches/flashinfer/" + "n" * 300 + "/" + "../" * 40,
                                           b"x")])
sparse_map = b"2\n0\n4\n1048576\n4\n"
info, data = member("caches/flashinfer/s", sparse_map + bytes(512 - len(sparse_map)) + b"headtail")
info.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                    "GNU.sparse.name": "caches/flashinfer/s", "GNU.sparse.realsize": "1048580"}
write("sparse.tar", good[:2] + [(info, data)])
with open(plain, "rb") as f:
    whole = f.read()
with open(os.path.join(out, "cut.tar"), "wb") as f:
    f.write(whole[:1500])
