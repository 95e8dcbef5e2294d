#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What systemd reads back from a rendered unit is what the profile said: a description ending in
# '\' (systemd joins such a line to the next), a '$' and a '%' in ReadWritePaths= (specifiers are
# expanded there, variables are not), and [secrets] as credentials whose path the engine gets.
# `systemd-analyze verify` (the golden test) cannot show values; a private systemd 252 can.
# Usage: unit_readback_test.sh GPULAUNCH SOURCE_DIR. Exit 77 (CTest skip) when the harness cannot
# run here.
set -euo pipefail
gpulaunch=$1
source_dir=$2
harness=$source_dir/tests/integration/harness/systemd-harness.sh
[[ $(id -u) -eq 0 ]] || { echo "SKIP: unit_readback needs root"; exit 77; }
unshare --pid --mount --fork --mount-proc true 2>/dev/null ||
  { echo "SKIP: unshare --pid --mount is not permitted here"; exit 77; }

state=$(mktemp -d /tmp/gpulaunch-readback.XXXXXX)
cleanup() {
  "$harness" poweroff "$state" >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
inside() { "$harness" exec "$state" -- "$@"; }

"$harness" boot "$state" >/dev/null || { cat "$state/console.log" >&2; fail "boot"; }
for name in escape-backslash-dollar secrets-hf-token; do
  "$gpulaunch" render "$source_dir/tests/golden/$name.toml" |
    inside sh -c "cat >/etc/systemd/system/gpulaunch-$name.service"
done
inside systemctl daemon-reload

expect() {  # UNIT PROPERTY EXPECTED
  local got
  got=$(inside systemctl show --value -p "$2" "$1")
  [[ $got == "$3" ]] || fail "$1 $2: expected [$3], systemd read [$got]"
  echo "ok   $1 $2=$got"
}
unit=gpulaunch-escape-backslash-dollar.service
expect $unit Description 'gpulaunch escape-backslash-dollar: C:\models\'
# The line after the description is still its own (systemd adds tmp.mount for PrivateTmp=).
inside systemctl show --value -p Wants $unit | grep -qw network-online.target ||
  fail "$unit lost Wants=network-online.target"
echo "ok   $unit Wants= kept"
# systemctl prints '$' shell-escaped; one '$' each, '%%' read as '%'.
expect $unit ReadWritePaths '"/data/cache\$HOME/100%" "/scratch/\$tmp/triton"'

unit=gpulaunch-secrets-hf-token.service
environment=$(inside systemctl show --value -p Environment $unit)
for pair in HF_TOKEN_PATH=/run/credentials/$unit/HF_TOKEN \
  VLLM_API_KEY_PATH=/run/credentials/$unit/VLLM_API_KEY; do
  [[ " $environment " == *" $pair "* ]] || fail "$unit: no $pair in [$environment]"
  echo "ok   $unit $pair"
done
