#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the gpulaunch .deb into OUTDIR. The source tree (tracked and untracked-but-not-ignored
# files, uncommitted edits included, never build directories) is staged in a temporary directory
# with packaging/debian/ as its debian/, then built by dpkg-buildpackage (debhelper drives CMake).
# Usage: packaging/build-deb.sh [--prebuilt BUILD_DIR] OUTDIR. JOBS sets build parallelism
# (default: nproc).
# --prebuilt BUILD_DIR: the package is made from a tree scripts/build.sh built (the same Debian
# flags, prefix and version as debian/rules configures), installed by `cmake --install`, so the
# test suite ships the objects it tested instead of compiling the program again. A tree configured
# otherwise (another version, prefix or build type, a sanitizer) is refused.
set -euo pipefail
prebuilt=""
if [[ ${1:-} == --prebuilt ]]; then
  prebuilt=$(cd "${2:?usage: packaging/build-deb.sh [--prebuilt BUILD_DIR] OUTDIR}" && pwd)
  shift 2
fi
out=${1:?usage: packaging/build-deb.sh [--prebuilt BUILD_DIR] OUTDIR}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

version=$(dpkg-parsechangelog -l "$repo/packaging/debian/changelog" -S Version)
if [[ -n $prebuilt ]]; then
  cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$prebuilt/CMakeCache.txt"; }
  [[ -f $prebuilt/CMakeCache.txt ]] || { echo "build-deb: $prebuilt is not a CMake build tree" >&2; exit 1; }
  for expected in "GPULAUNCH_VERSION=$version" CMAKE_INSTALL_PREFIX=/usr CMAKE_BUILD_TYPE=None \
    GPULAUNCH_SANITIZE=OFF GPULAUNCH_FUZZ=OFF; do
    actual=$(cache_value "${expected%%=*}")
    if [[ $actual != "${expected#*=}" ]]; then
      echo "build-deb: $prebuilt has ${expected%%=*}=$actual, the package needs ${expected#*=}" \
        "(configure it with scripts/build.sh)" >&2
      exit 1
    fi
  done
  flags=$(cache_value CMAKE_CXX_FLAGS)
  for flag in -fstack-protector-strong -D_FORTIFY_SOURCE=2 -Werror=format-security; do
    [[ " $flags " == *" $flag "* ]] || { echo "build-deb: $prebuilt was not built with Debian's flags ($flag missing)" >&2; exit 1; }
  done
  # Stale outputs must not be packaged: the tree is brought up to date first (a no-op after a build).
  cmake --build "$prebuilt" --target gpulaunch gpulaunch-record-start gpulaunch_man gpulaunch_catalog >/dev/null
fi
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
  export GPULAUNCH_PREBUILT=$prebuilt
  dpkg-buildpackage -us -uc -b
)
cp "$stage"/*.deb "$stage"/*.buildinfo "$stage"/*.changes "$out"/
echo "build-deb: $(ls "$out"/gpulaunch_"${version}"_*.deb)"
