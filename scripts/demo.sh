#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The demo: builds gpulaunch, installs the mock SGLang into a venv, and brings up the `demo`
# profile as a hardened systemd service, showing its progress until it serves, then its status.
# Where PID 1 is systemd it uses the host's manager with a runtime unit (/run/systemd/system);
# elsewhere (containers, CI machines) it boots a private systemd in its own PID and mount
# namespaces and runs there.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bash scripts/install-deps.sh --demo
# Only the binaries, configured without the tests (the test toolchain is the other command's
# business) in a build folder of its own, so build/ keeps the suite's configuration. Debian's
# flags without -g (dpkg-buildflags' DEB_CXXFLAGS_STRIP): the same optimised, hardened code with
# no debug information, which was 40% of every compile's time (a fresh machine compiles all of it).
# Compiled in batches of 16 files (GPULAUNCH_UNITY, CMakeLists.txt): 18 compiles instead of 244.
# Warnings stay warnings here: -Werror is the suite's gate, and a newer compiler's new warning
# must not stop a newcomer's first command.
DEB_CXXFLAGS_STRIP=-g BUILD_DIR=build-demo BUILD_TARGETS="gpulaunch gpulaunch-record-start" \
  bash scripts/build.sh -DGPULAUNCH_TESTS=OFF -DGPULAUNCH_BENCH=OFF -DGPULAUNCH_UNITY=ON \
  -DGPULAUNCH_WERROR=OFF
gpulaunch=$root/build-demo/src/gpulaunch
harness=$root/tests/integration/harness/systemd-harness.sh

# What profiles/demo.toml names: the engine's venv and a model directory.
bash mock/install.sh /opt/gpulaunch/venvs/demo >/dev/null
mkdir -p /opt/gpulaunch/demo-model
echo '{"architectures": ["LlamaForCausalLM"], "model_type": "llama"}' >/opt/gpulaunch/demo-model/config.json

up=(up demo --runtime)
# The mock needs no GPU, but `check` rightly refuses a GPU-less node: override it, visibly.
if [[ ! -e /dev/nvidiactl ]]; then up+=(--force); fi

if [[ "$(cat /proc/1/comm 2>/dev/null)" == systemd ]]; then
  # The unit runs the binary it was rendered by, with PrivateTmp=yes: one in a clone under /tmp
  # or /var/tmp would be out of its sight, so run a copy from root's /opt/gpulaunch instead.
  case $gpulaunch in
    /tmp/* | /var/tmp/*)
      install -D -m 0755 "$gpulaunch" /opt/gpulaunch/bin/gpulaunch
      install -D -m 0755 "$gpulaunch-record-start" /opt/gpulaunch/bin/gpulaunch-record-start
      gpulaunch=/opt/gpulaunch/bin/gpulaunch
      ;;
  esac
  "$gpulaunch" -P "$root/profiles" "${up[@]}"
  "$gpulaunch" status demo
  echo
  echo "logs: $gpulaunch logs demo -f"
  echo "stop: $gpulaunch down demo --runtime --purge"
  exit 0
fi

state=/run/gpulaunch-demo
"$harness" poweroff "$state" >/dev/null 2>&1 || true
pid=$("$harness" boot "$state")
echo "PID 1 here is not systemd: booted a private systemd 252 (host PID $pid) in its own namespaces"
inside() { "$harness" exec "$state" -- "$@"; }
inside "$gpulaunch" -P "$root/profiles" "${up[@]}"
echo
inside "$gpulaunch" status demo
echo
echo "The demo keeps running inside that private systemd."
echo "  logs: $harness exec $state -- $gpulaunch logs demo -f"
echo "  ask:  $harness exec $state -- python3 -c 'import urllib.request as u; print(u.urlopen(\"http://127.0.0.1:30080/v1/models\").read().decode())'"
echo "  stop: $harness exec $state -- $gpulaunch down demo --runtime --purge && $harness poweroff $state"
