#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails when a file under src/ includes a folder above its own in ARCHITECTURE.md's folder table
# (a folder uses only folders below it). The order is read from that table, so the map and the
# check cannot drift apart.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'PY'
import glob, re, sys
order = re.findall(r"^\| `src/([a-z_]+)/` \|", open("ARCHITECTURE.md").read(), re.M)
if not order:
    sys.exit("check-layers: no folder table in ARCHITECTURE.md")
rank = {folder: i for i, folder in enumerate(order)}
bad = []
for path in sorted(glob.glob("src/*/*.[ch]pp")):
    own = path.split("/")[1]
    if own not in rank:
        bad.append(f"{path}: folder src/{own}/ is not in ARCHITECTURE.md's table")
        continue
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        match = re.match(r'\s*#\s*include\s+"([a-z_]+)/', line)
        if match and match.group(1) in rank and rank[match.group(1)] < rank[own]:
            bad.append(f"{path}:{number}: src/{own}/ includes src/{match.group(1)}/, a folder above it")
for line in bad:
    print(f"check-layers: {line}")
if bad:
    sys.exit(1)
print(f"check-layers: {len(order)} folders, no include points up")
PY
