#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails when src/ forwards a failure by hand, `if (!x) return std::unexpected(x.error());` (on one
# line or two, braced or not, x.error() or std::move(x).error()), where GL_TRY / GL_TRY_VOID
# (src/util/try.hpp) says it once. Names each one as path:line and prints the count.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -- 'src/*.cpp' 'src/*.hpp')
# try.hpp is where the one forward is written.
mapfile -t files < <(printf '%s\n' "${files[@]}" | grep -vx 'src/util/try.hpp')
found=$(perl -0777 -ne '
  while (/if\s*\(\s*!\s*([A-Za-z_][\w.]*(?:->[\w.]+)*)\s*\)\s*(?:\{\s*)?return\s+std::unexpected\s*\(\s*(?:std::move\s*\(\s*\1\s*\)|\1)\s*(?:\.|->)error\s*\(\s*\)\s*\)\s*;/g) {
    my $line = 1 + (substr($_, 0, $-[0]) =~ tr/\n//);
    print "$ARGV:$line\n";
  }' "${files[@]}")
count=0
[[ -n $found ]] && count=$(wc -l <<<"$found")
if ((count)); then
  printf 'check-forwarding: hand-written forward (use GL_TRY): %s\n' $found >&2
  echo "check-forwarding: $count hand-written forwards in src/" >&2
  exit 1
fi
echo "check-forwarding: 0 hand-written forwards in src/"
