#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the gpulaunch .deb into OUTDIR. The source tree (tracked and untracked-but-not-ignored
# files, uncommitted edits included, never build directories) is staged in a temporary directory
# with packaging/debian/ as its debian/, then built by dpkg-buildpackage (debhelper drives CMake).
# Usage: packaging/build-deb.sh OUTDIR. JOBS sets build parallelism (default: nproc).
set -euo pipefail
out=${1:?usage: packaging/build-deb.sh OUTDIR}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

version=$(dpkg-parsechangelog -l "$repo/packaging/debian/changelog" -S Version)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# dpkg-buildpackage writes its results next to the source directory, so that goes one level down.
src="$stage/gpulaunch-${version%-*}"
mkdir "$src"
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # --ignore-failed-read: a tracked file deleted in the worktree is simply not staged.
  git -C "$repo" ls-files -z --cached --others --exclude-standard |
    tar -C "$repo" --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -C "$src" -xf -
else
  tar -C "$repo" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$src" -xf -
fi
rm -rf "$src/debian"
cp -a "$repo/packaging/debian" "$src/debian"

(
  cd "$src"
  # nocheck: the test suite calls this script; the package build must not run the suite again.
  export DEB_BUILD_OPTIONS="nocheck parallel=${JOBS:-$(nproc)} ${DEB_BUILD_OPTIONS:-}"
  dpkg-buildpackage -us -uc -b
)
cp "$stage"/*.deb "$stage"/*.buildinfo "$stage"/*.changes "$out"/
echo "build-deb: $(ls "$out"/gpulaunch_"${version}"_*.deb)"
