#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds into build/ (or $BUILD_DIR). Extra arguments go to cmake. With
# BUILD_TARGETS (space-separated), only those targets and what they need are built.
#
# The build is the package's: Debian's flags (dpkg-buildflags with hardening=+all, CMake build type
# None, as debhelper configures it), prefix /usr and the changelog's version and date. So the tests
# run the objects that ship, and the package test (tests/package/) makes the .deb from this tree
# (packaging/build-deb.sh --prebuilt) instead of compiling the program a second time.
# Every compile goes through ccache (scripts/ccache-env.sh: its directory is outside the clone).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ccache-env.sh
build_dir=${BUILD_DIR:-build}
# Debian's flags, read the way debhelper's cmake build system passes them (CPPFLAGS appended to
# CXXFLAGS). -ffile-prefix-map names the checkout; a relative map keeps the objects the same from
# any clone, so another clone's build is a cache hit.
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
CXXFLAGS="$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
CXXFLAGS=${CXXFLAGS//-ffile-prefix-map=$PWD=./-ffile-prefix-map=$PWD/=}
export CXXFLAGS LDFLAGS="$(dpkg-buildflags --get LDFLAGS)"
version=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
# The manual pages' date, as dpkg-buildpackage sets it: the changelog's.
SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l packaging/debian/changelog -S Timestamp)
export SOURCE_DATE_EPOCH
cmake -S . -B "$build_dir" -G Ninja -DGPULAUNCH_WERROR=ON -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc -DCMAKE_INSTALL_LOCALSTATEDIR=/var \
  -DGPULAUNCH_VERSION="$version" "${GL_CCACHE_CMAKE[@]}" "$@" >/dev/null
targets=()
for target in ${BUILD_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
