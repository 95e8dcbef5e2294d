#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Creates VENV_DIR with Debian's python3 (python3-venv) and installs the mock SGLang and the mock
# vLLM into it, offline: each package is copied into the venv's site-packages and its console
# script (bin/sglang, bin/vllm) written as pip would (no pip, no index, no build step).
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
  # MOCK_SGLANG_VERSION / MOCK_VLLM_VERSION: install the mock as that release ("0.5.14+mock");
  # it then accepts exactly that release's flags.
  local wanted
  wanted=$(printenv "MOCK_$(echo "$name" | tr a-z A-Z)_VERSION" || true)
  if [ -n "$wanted" ]; then
    printf '# SPDX-License-Identifier: Apache-2.0\n__version__ = "%s"\n' "$wanted" >"$purelib/$name/version.py"
  fi
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
# console_script NAME MODULE: VENV/bin/NAME as pip writes it from pyproject's [project.scripts]
# (NAME = "MODULE:main"): the venv's interpreter on the #! line, then main(); units run
# VENV/bin/sglang serve ... and VENV/bin/vllm serve ..., the way they run the real ones.
console_script() {
  local name=$1 module=$2 script="$venv/bin/$1" dist
  printf '#!%s\nimport sys\nfrom %s import main\nif __name__ == "__main__":\n    sys.exit(main())\n' \
    "$(cd "$venv/bin" && pwd)/python" "$module" >"$script.tmp"
  chmod 0755 "$script.tmp"
  mv "$script.tmp" "$script"
  dist=$(echo "$purelib/$name"-*.dist-info)
  printf '[console_scripts]\n%s = %s:main\n' "$name" "$module" >"$dist/entry_points.txt"
  (cd "$purelib" && realpath --relative-to="$purelib" "$script" | sed 's/$/,,/' &&
    echo "${dist##*/}/entry_points.txt,,") >>"$dist/RECORD"
}
install_package sglang
install_package vllm
# Both mocks import the fake scheduler (forward progress, /metrics, the wedge) from one module.
cp "$here/common/mock_scheduler.py" "$purelib/mock_scheduler.py.tmp"
mv "$purelib/mock_scheduler.py.tmp" "$purelib/mock_scheduler.py"
console_script sglang sglang.cli.main
console_script vllm vllm.entrypoints.cli.main
# llama.cpp's llama-server is a program, not a package: VENV/bin/llama-server runs the mock
# (mock/llamacpp/llama_server.py) with the venv's interpreter, beside mock_scheduler.
cp "$here/llamacpp/llama_server.py" "$purelib/mock_llama_server.py.tmp"
mv "$purelib/mock_llama_server.py.tmp" "$purelib/mock_llama_server.py"
printf '#!%s\nimport sys\nfrom mock_llama_server import main\nif __name__ == "__main__":\n    sys.exit(main())\n' \
  "$(cd "$venv/bin" && pwd)/python" >"$venv/bin/llama-server.tmp"
chmod 0755 "$venv/bin/llama-server.tmp"
mv "$venv/bin/llama-server.tmp" "$venv/bin/llama-server"
# trtllm-serve (mock/trtllm/trtllm_serve.py) likewise, as VENV/bin/trtllm-serve.
cp "$here/trtllm/trtllm_serve.py" "$purelib/mock_trtllm_serve.py.tmp"
mv "$purelib/mock_trtllm_serve.py.tmp" "$purelib/mock_trtllm_serve.py"
printf '#!%s\nimport sys\nfrom mock_trtllm_serve import main\nif __name__ == "__main__":\n    sys.exit(main())\n' \
  "$(cd "$venv/bin" && pwd)/python" >"$venv/bin/trtllm-serve.tmp"
chmod 0755 "$venv/bin/trtllm-serve.tmp"
mv "$venv/bin/trtllm-serve.tmp" "$venv/bin/trtllm-serve"
"$venv/bin/python" -c 'import sglang.launch_server, sglang; print("mock sglang", sglang.__version__, "in", sglang.__file__)'
"$venv/bin/python" -c 'import vllm.entrypoints.cli.main, vllm; print("mock vllm", vllm.__version__, "in", vllm.__file__)'
