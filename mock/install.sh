#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Creates VENV_DIR with Debian's python3 (python3-venv) and installs the mock SGLang into it,
# offline: the package is copied into the venv's site-packages and bin/sglang written as pip
# would (no pip, no index, no build step).
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
staging=$(mktemp -d "$purelib/.sglang-install.XXXXXX")
trap 'rm -rf "$staging"' EXIT
cp -r "$here/sglang/sglang" "$staging/sglang"
find "$staging" -name __pycache__ -prune -exec rm -rf {} +
rm -rf "$purelib/sglang"
mv "$staging/sglang" "$purelib/sglang"
# A dist-info, so version probes that read METADATA (not import) see the mock, and pip can remove it.
version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$purelib/sglang/version.py")
rm -rf "$purelib"/sglang-*.dist-info
dist="$purelib/sglang-$version.dist-info"
mkdir -p "$dist"
printf 'Metadata-Version: 2.1\nName: sglang\nVersion: %s\nSummary: gpulaunch mock of SGLang\n' \
  "$version" >"$dist/METADATA"
echo mock-install >"$dist/INSTALLER"
# The console script pip writes for pyproject's [project.scripts] sglang = "sglang.cli.main:main":
# the venv's interpreter on the #! line, then main().
script="$venv/bin/sglang"
printf '#!%s\nimport sys\nfrom sglang.cli.main import main\nif __name__ == "__main__":\n    sys.exit(main())\n' \
  "$(cd "$venv/bin" && pwd)/python" >"$script.tmp"
chmod 0755 "$script.tmp"
mv "$script.tmp" "$script"
echo '[console_scripts]' >"$dist/entry_points.txt"
echo 'sglang = sglang.cli.main:main' >>"$dist/entry_points.txt"
(cd "$purelib" && find sglang "${dist##*/}" -type f ! -name RECORD -printf '%p,,\n' &&
  realpath --relative-to="$purelib" "$script" | sed 's/$/,,/' && echo "${dist##*/}/RECORD,,") \
  >"$dist/RECORD"
"$venv/bin/python" -c 'import sglang.launch_server, sglang; print("mock sglang", sglang.__version__, "in", sglang.__file__)'
