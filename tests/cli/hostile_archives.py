#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The hostile cache archives of issue 45's audit, built at test time from a good archive.

Usage: hostile_archives.py GOOD.tar OUT_DIR CANARY

GOOD.tar is an uncompressed `gpulaunch cache export` (a manifest, one file list per cache, the
files). Each crafted archive goes to OUT_DIR/KIND.tar (or .tar.zst); OUT_DIR/cases.tsv lists
"KIND<TAB>EXPECT<TAB>TEXT": EXPECT is `refuse` (TEXT must be in the one-line refusal) or
`import` (the archive must import). CANARY is a path outside the cache that links and names
point at; nothing may ever appear there. The manifest and file lists are rebuilt as gpulaunch
writes them (caches/archive_manifest, caches/cache_digest), so an archive can be honest about a
hostile content (every digest right) and still must be refused by the import's bounds.
"""
import copy
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile

good_path, out, canary = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(out, exist_ok=True)
BLOCK = 64 * 1024

with tarfile.open(good_path) as good:
    members = [(m, good.extractfile(m).read() if m.isfile() else b"") for m in good.getmembers()]
manifest = json.loads(members[0][1])
CACHE = manifest["caches"][0]["name"]  # the first cache the good archive holds
cases = []


def stored_digest(content):
    """sha256_stored_hex: each 64 KiB block that is not all zero, after its offset."""
    h = hashlib.sha256()
    for offset in range(0, len(content), BLOCK):
        block = content[offset:offset + BLOCK]
        if block.count(0) != len(block):
            h.update(offset.to_bytes(8, "little") + block)
    return h.hexdigest()


def records_of(files):
    """The digest's records for {path: (size, content digest)}, sorted as digest_tree sorts."""
    return b"".join(
        p.encode() + b"\0" + str(size).encode() + b"\0" + digest.encode() + b"\n"
        for p, (size, digest) in sorted(files.items(), key=lambda item: item[0].encode()))


def honest(files, lie=None):
    """The manifest and file-list members for one cache holding `files` ({path: bytes or
    (size, digest)}), every digest right unless `lie` changes the manifest's entry."""
    table = {p: (len(c), stored_digest(c)) if isinstance(c, bytes) else c for p, c in files.items()}
    records = records_of(table)
    entry = copy.deepcopy(manifest["caches"][0])
    entry.update(digest=hashlib.sha256(records).hexdigest(), files=len(table),
                 bytes=sum(size for size, _ in table.values()))
    if lie:
        lie(entry)
    text = dict(manifest, caches=[entry])
    return [(file_info("gpulaunch-cache-archive.json"), json.dumps(text, indent=2).encode()),
            (file_info(f"gpulaunch-cache-records/{CACHE}"), records)]


def file_info(name, **fields):
    info = tarfile.TarInfo(name)
    info.mode = fields.pop("mode", 0o644)
    for key, value in fields.items():
        setattr(info, key, value)
    return info


def write(kind, parts, expect, text, fmt=tarfile.PAX_FORMAT, suffix=".tar"):
    path = os.path.join(out, kind + suffix)
    with tarfile.open(path, "w", format=fmt) as archive:
        for info, data in parts:
            if data is None:  # a header whose content never follows
                header = info.tobuf(archive.format, archive.encoding, archive.errors)
                archive.fileobj.write(header)
                archive.offset += len(header)
            elif info.isfile():
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
            else:
                archive.addfile(info)
    cases.append((kind, expect, text, os.path.basename(path)))
    return path


def special(name, type_, **fields):
    return (file_info(name, type=type_, **fields), b"")


# The good archive's own members: manifest, lists, files, as exported.
good_parts = [(m, data) for m, data in members]
first_file = next(m.name for m, _ in members if m.name.startswith("caches/"))
base = f"caches/{CACHE}"
write("good", good_parts, "import", "as exported")
lists = 1 + len(manifest["caches"])  # the manifest and one list per cache
head, files = good_parts[:lists], good_parts[lists:]

# 1-8: members that are not regular files or directories.
for kind, type_, extra, text in [
        ("symlink", tarfile.SYMTYPE, {"linkname": canary}, "is a symbolic link"),
        ("symlink-relative", tarfile.SYMTYPE, {"linkname": "../../../../evil"}, "is a symbolic link"),
        ("hardlink", tarfile.LNKTYPE, {"linkname": first_file}, "is a hard link"),
        ("hardlink-absolute", tarfile.LNKTYPE, {"linkname": "/etc/passwd"}, "is a hard link"),
        ("chardev", tarfile.CHRTYPE, {"devmajor": 1, "devminor": 3}, "is a character device"),
        ("blockdev", tarfile.BLKTYPE, {"devmajor": 7, "devminor": 0}, "is a block device"),
        ("fifo", tarfile.FIFOTYPE, {}, "is a FIFO")]:
    name = f"{base}/evil-{kind}"
    write(kind, head + [special(name, type_, **extra)] + files, "refuse", f"member '{name}' {text}")


def with_member(kind, name, data, text, expect="refuse", where="first"):
    extra = (file_info(name), data)
    parts = head + ([extra] + files if where == "first" else files + [extra])
    write(kind, parts, expect, text)


# 9-17: names.
with_member("absolute", canary, b"evil\n", f"member '{canary}' has an absolute path")
with_member("dotdot", f"{base}/../../../../{os.path.basename(canary)}", b"evil\n", "has a '..' component")
with_member("dot", f"{base}/./x", b"evil\n", "has an empty or '.' component")
with_member("empty-component", f"{base}//x", b"evil\n", "has an empty or '.' component")
with_member("trash", f"{base}/.trash-import-x/a", b"evil\n", "has a '.trash-*' component")
with_member("long-pax-name", f"{base}/" + "n" * 5000, b"x", "has a name over 4096 bytes")
with_member("long-component", f"{base}/" + "c" * 300 + "/x", b"x", "has a component over 255 bytes")
with_member("too-deep", base + "/d" * 130 + "/x", b"x", "deeper than 128 directories")
with_member("outside-caches", "elsewhere/x", b"x", "is outside caches/")
with_member("unknown-cache", "caches/not-a-cache/x", b"x", "belongs to no cache the manifest lists")
with_member("unlisted", f"{base}/unlisted.so", b"x", "is not one of the files the cache's list names")
with_member("duplicate", first_file, dict((m.name, d) for m, d in files)[first_file],
            "appears twice", where="last")
write("cache-dir-is-file", head + [(file_info(base), b"x")] + files, "refuse",
      "is a file where the cache's directory belongs")
write("empty-directory", head + [special(f"{base}/nothing-listed", tarfile.DIRTYPE, mode=0o755)] +
      files, "refuse", "holds none of the files the cache's list names")

# 18-24: lying manifests, lists and digests, on the good archive's own files.
listed = {m.name[len(base) + 1:]: d for m, d in files if m.name.startswith(base + "/")}
others = [(m, d) for m, d in files if not m.name.startswith(base + "/")]
assert not others or len(manifest["caches"]) > 1


def one_cache(parts_after, lie=None, files_map=None):
    return honest(files_map or listed, lie) + parts_after


own_files = [(m, d) for m, d in files if m.name.startswith(base + "/")]
write("digest-lie", one_cache(own_files, lambda e: e.update(digest="0" * 64)), "refuse",
      f"member 'gpulaunch-cache-records/{CACHE}' does not match the content digest")
write("count-lie", one_cache(own_files, lambda e: e.update(files=e["files"] + 1)), "refuse",
      "the manifest says")
write("facts-lie", one_cache(own_files, lambda e: e["facts"].update(torch_version="9.9.9")),
      "refuse", "do not hash to its fingerprint")
write("format-lie", [(file_info("gpulaunch-cache-archive.json"),
                      json.dumps(dict(manifest, gpulaunch_cache_archive=1)).encode())] + files,
      "refuse", "format 1 is not the 2 this gpulaunch reads")
write("no-manifest", files, "refuse", "it does not begin with gpulaunch-cache-archive.json")
write("huge-manifest", [(file_info("gpulaunch-cache-archive.json"), b" " * (1 << 20) + b"{}")] +
      files, "refuse", "its manifest is over 1048576 bytes")
write("no-list", head[:1] + files, "refuse", f"is not the file list of cache '{CACHE}'")
write("huge-list", head[:1] + [(file_info(f"gpulaunch-cache-records/{CACHE}"),
                                b"a" * ((64 << 20) + 1))], "refuse",
      "the file lists are over 67108864 bytes")
# A list that hashes to its digest but is not sorted.
unsorted = b"b\x000\x00" + stored_digest(b"").encode() + b"\na\x000\x00" + \
    stored_digest(b"").encode() + b"\n"
entry = dict(manifest["caches"][0], digest=hashlib.sha256(unsorted).hexdigest(), files=2, bytes=0)
write("list-unsorted", [(file_info("gpulaunch-cache-archive.json"),
                         json.dumps(dict(manifest, caches=[entry])).encode()),
                        (file_info(f"gpulaunch-cache-records/{CACHE}"), unsorted)], "refuse",
      "'a' is not after 'b'")

# 25-28: members that lie about their own size or content.
name0, data0 = own_files[0][0].name, own_files[0][1]
tampered = bytes([data0[0] ^ 1]) + data0[1:]
write("content-lie", head + [(file_info(name0), tampered)] + own_files[1:] + others, "refuse",
      f"member '{name0}' does not match the content digest in its manifest")
write("size-lie", head + [(file_info(name0), data0 + b"more")] + own_files[1:] + others,
      "refuse", f"member '{name0}' claims {len(data0) + 4} bytes; the cache's file list says")
write("missing-member", head + own_files[1:] + others, "refuse",
      f"comes before '{name0}'" if len(own_files) > 1 else "it ends before member")
# A zero bomb that lies: the list says one small file, the member is 64 MiB of zeros (zstd).
bomb = write("zero-bomb-lie", one_cache([(file_info(f"{base}/k.so"), bytes(64 << 20))],
                                        files_map={"k.so": b"x" * 100}), "refuse",
             f"member '{base}/k.so' claims 67108864 bytes")
# The same bomb honest: every digest covers 64 MiB of zeros; imported as a hole.
write("zero-bomb-honest", one_cache([(file_info(f"{base}/k.so"), bytes(64 << 20))],
                                    files_map={"k.so": bytes(64 << 20)}), "import", "sparse")
# A huge size claimed in the header (1 TiB) and the list, over the limits: refused unread.
write("huge-claim", one_cache([(file_info(f"{base}/k.so", size=1 << 40), None)],
                              files_map={"k.so": (1 << 40, stored_digest(b""))}), "refuse",
      "over the limit of")
# Sizes that add up past 2^64 to what the manifest says (0): refused, the sum never wraps.
half = 1 << 63
write("size-wrap", one_cache([], files_map={"a": (half, stored_digest(b"")),
                                            "b": (half, stored_digest(b""))},
                             lie=lambda e: e.update(bytes=0)), "refuse", "lists over 68719476736 bytes")
# Data past a member's end in a GNU sparse 1.0 member: the map says data at 1 MiB, size 16.
sparse_map = b"1\n1048576\n16\n"
sparse_data = sparse_map + b"\0" * (512 - len(sparse_map)) + b"s" * 16
sparse = file_info(f"{base}/sparse.so")
sparse.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                      "GNU.sparse.name": f"{base}/sparse.so", "GNU.sparse.realsize": "16"}
write("sparse-past-end", one_cache([(sparse, sparse_data)],
                                   files_map={"sparse.so": b"s" * 16}), "refuse",
      "holds data past its 16 bytes")

# 29-31: the finding-1 attack: honest lists of thousands of deep empty files.
deep = {"/".join(f"d{i}x{j}" for j in range(80)) + "/f": b"" for i in range(2500)}
write("many-deep-dirs", one_cache([(file_info(f"{base}/{p}"), b"") for p in sorted(deep)],
                                  files_map=deep), "refuse", "imply over 100000 directories")
write("file-and-directory", one_cache([], files_map={"k": b"x", "k/a": b"y"}), "refuse",
      f"member '{base}/k' is both a file and a directory")
setuid = file_info(f"{base}/setuid.so", mode=0o4755)
write("setuid", one_cache([(setuid, b"#!/bin/sh\n")], files_map={"setuid.so": b"#!/bin/sh\n"}),
      "import", "no set-id")

# 32-35: streams that are not whole archives.
good_tar = open(good_path, "rb").read()
for kind, data, text in [("truncated", good_tar[:len(good_tar) // 2 + 100], "Failed to read"),
                         ("garbage", os.urandom(4096), "Failed to read"),
                         ("bad-zstd", b"\x28\xb5\x2f\xfd" + os.urandom(4096), "Failed to read"),
                         ("empty", b"", "Failed to read")]:
    with open(os.path.join(out, kind + ".tar"), "wb") as f:
        f.write(data)
    cases.append((kind, "refuse", text, kind + ".tar"))
# The zero bombs go compressed, as a rank would send them: 64 MiB in a few KiB.
for kind in ("zero-bomb-lie", "zero-bomb-honest"):
    path = os.path.join(out, kind + ".tar")
    subprocess.run(["zstd", "-q", "--rm", "-f", path, "-o", path + ".zst"], check=True)
    cases[:] = [(k, e, t, f + ".zst" if k == kind else f) for k, e, t, f in cases]

with open(os.path.join(out, "cases.tsv"), "w") as f:
    for case in cases:
        f.write("\t".join(case) + "\n")
print(len(cases))
