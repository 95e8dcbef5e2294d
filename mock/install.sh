#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Creates VENV_DIR with Debian's python3 (python3-venv) and installs the mock SGLang and the mock
# vLLM (with its `vllm` console script) into it,
# offline: the package is copied into the venv's site-packages (no pip, no index, no build step).
# Idempotent: an existing venv is reused and the package is replaced.
# Usage: mock/install.sh VENV_DIR
set -euo pipefail
if (($# != 1)); then
  echo "usage: $0 VENV_DIR" >&2
  exit 2
fi
venv=$1
here=$(cd "$(dirname "$0")" && pwd)
python=${MOCK_PYTHON:-/usr/bin/python3}

if [[ ! -x $venv/bin/python ]]; then
  "$python" -m venv --without-pip "$venv"
fi
purelib=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$purelib"

# install_package NAME: mock/NAME/NAME into site-packages, with a NAME-VERSION.dist-info so that
# version probes that read METADATA (not import) see the mock, and pip can remove it.
install_package() {
  local name=$1 staging version dist
  staging=$(mktemp -d "$purelib/.$name-install.XXXXXX")
  cp -r "$here/$name/$name" "$staging/$name"
  find "$staging" -name __pycache__ -prune -exec rm -rf {} +
  rm -rf "${purelib:?}/$name"
  mv "$staging/$name" "$purelib/$name"
  rmdir "$staging"
  version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$purelib/$name/version.py")
  rm -rf "$purelib/$name"-*.dist-info
  dist="$purelib/$name-$version.dist-info"
  mkdir -p "$dist"
  printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: gpulaunch mock of %s\n' \
    "$name" "$version" "$name" >"$dist/METADATA"
  echo mock-install >"$dist/INSTALLER"
  (cd "$purelib" && find "$name" "${dist##*/}" -type f ! -name RECORD -printf '%p,,\n' && echo "${dist##*/}/RECORD,,") \
    >"$dist/RECORD"
}
install_package sglang
install_package vllm
# vLLM's console script, as pip writes it from the mock's [project.scripts]: units run
# VENV/bin/vllm serve ..., the way they run the real one.
cat >"$venv/bin/vllm" <<SCRIPT
#!$venv/bin/python
import sys
from vllm.entrypoints.cli.main import main
if __name__ == "__main__":
    sys.exit(main())
SCRIPT
chmod 0755 "$venv/bin/vllm"
"$venv/bin/python" -c 'import sglang.launch_server, sglang; print("mock sglang", sglang.__version__, "in", sglang.__file__)'
"$venv/bin/python" -c 'import vllm.entrypoints.cli.main, vllm; print("mock vllm", vllm.__version__, "in", vllm.__file__)'
