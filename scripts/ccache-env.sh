# SPDX-License-Identifier: Apache-2.0
# Sourced by the build scripts: every compile goes through ccache, its directory outside the clone
# (/var/cache/gpulaunch-ccache for root, as the VM tier's image cache; ~/.cache/ccache otherwise),
# paths under the checkout hashed relative to it, so a fresh clone of the same sources is a hit.
# Sets GL_CCACHE_CMAKE, the cmake arguments that use it (empty without ccache).
GL_CCACHE_CMAKE=()
if command -v ccache >/dev/null; then
  if [[ -z ${CCACHE_DIR:-} ]]; then
    if [[ $(id -u) -eq 0 ]]; then CCACHE_DIR=/var/cache/gpulaunch-ccache; else CCACHE_DIR=$HOME/.cache/ccache; fi
  fi
  export CCACHE_DIR CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
  # The compiler's identity by content, not mtime: an apt reinstall of the same g++ keeps the cache.
  export CCACHE_COMPILERCHECK=content
  mkdir -p "$CCACHE_DIR"
  GL_CCACHE_CMAKE=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
