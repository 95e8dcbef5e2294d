#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what building, testing and the demo need, from Debian 12's archive. Idempotent:
# packages already present are not downloaded again.
# openssh-server is there for the multi-node integration test, which runs its own sshd inside
# network namespaces; installing it must not start one on this machine, so the install runs under
# a policy-rc.d that forbids service starts (an existing policy-rc.d is left as it is).
# prometheus (for promtool) and prometheus-node-exporter are there for the metrics integration
# test, which runs promtool and its own node_exporter on loopback; the same policy keeps their
# postinst from starting the packages' own services (enabled, never started here; on a machine
# without a running systemd the start is skipped the same way).
# supervisor, strace and curl are there for the benchmarks (bench/), whose smoke runs are tests;
# zstd for the cache-archive test, which alters an exported archive by one byte.
# ansible-core (ansible-playbook, ansible-doc, ansible-test) is there for the Ansible collection
# under ansible/: its ctest and the multi-node test's playbook.
# debootstrap, qemu-system-x86, qemu-utils and e2fsprogs are there for the VM tier (tests/vm/):
# a Debian 12 guest image debootstrapped from the Debian archive, written with mkfs.ext4 -d, booted
# under qemu, its results read back with debugfs.
# python3-torch, python3-dev and pybind11-dev are there for the real_torch integration test:
# Debian's PyTorch under a unit `up` starts, building a C++ extension with torch's cpp_extension.
# ccache: every build compiles through it (scripts/ccache-env.sh).
# slurmctld, slurmd and slurm-client are there for the Slurm tier (tests/slurm/): one slurmctld and
# two slurmd booted in the test's own namespaces (the packages' services stay unstarted, as above).
# shellcheck lints the sbatch scripts `render --slurm` prints (their goldens).
#
# With --demo, only what scripts/demo.sh needs: the compiler and the libraries gpulaunch links
# (not the test toolchain), systemd and util-linux for the private manager, python3-venv for the
# mock engine's venv. No VM, Ansible, Prometheus, PyTorch or lintian.
set -euo pipefail

demo_packages=(
  build-essential cmake ninja-build pkg-config dpkg-dev
  libtomlplusplus-dev libcli11-dev libfmt-dev libspdlog-dev nlohmann-json3-dev
  libsystemd-dev libboost-dev libboost-filesystem-dev nettle-dev libarchive-dev
  systemd dbus util-linux python3 python3-venv procps ccache
)
packages=(
  "${demo_packages[@]}"
  git
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-14 libclang-rt-14-dev clang-format-14
  iproute2
  openssh-client openssh-server
  prometheus prometheus-node-exporter
  ansible-core
  supervisor strace curl zstd
  debhelper dpkg-dev fakeroot lintian man-db bash-completion
  debootstrap qemu-system-x86 qemu-utils e2fsprogs
  python3-torch python3-dev pybind11-dev
  slurmctld slurmd slurm-client shellcheck
)
case ${1:-} in
  --demo) packages=("${demo_packages[@]}") ;;
  "") ;;
  *)
    echo "usage: $0 [--demo]" >&2
    exit 2
    ;;
esac

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: need root to install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  # invoke-rc.d asks /usr/sbin/policy-rc.d before starting a service from a package's postinst;
  # exit 101 means "not allowed". Ours exists only for this install.
  policy=/usr/sbin/policy-rc.d
  if [[ ! -e $policy ]]; then
    trap 'rm -f "$policy"' EXIT
    trap 'exit 1' INT TERM HUP  # so that the EXIT trap runs on these too
    printf '#!/bin/sh\n# install-deps.sh: no service starts during its apt-get install\nexit 101\n' >"$policy"
    chmod 755 "$policy"
  else
    policy=""
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
  if [[ -n $policy ]]; then
    rm -f "$policy"
    trap - EXIT INT TERM HUP
  fi
fi
