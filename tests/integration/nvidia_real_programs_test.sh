#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# NVIDIA's real programs against gpulaunch (issue 42): Debian 12's nvidia-modprobe 535.161.07,
# nvidia-smi and libnvidia-ml1 535.261.03 (contrib/non-free), fetched with a private apt
# configuration (the host's sources and dpkg database are never changed, nothing is installed)
# and cached under /var/cache/gpulaunch-nvidia by version. Everything runs in a private mount
# namespace: /dev is an empty tmpfs, /usr/bin and the multiarch library directory are overlays
# that add the unpacked programs where the packages would put them, so the host's /dev is never
# touched (libnvidia-ml as root can make /dev/nvidiactl itself).
#
# 1. A loaded driver, as far as files can say so: /proc is a tmpfs holding the files the driver's
#    procfs writes (each fixture line names its kernel source) and links to the kernel's own for
#    the rest. `gpulaunch nvidia-devices` runs the real nvidia-modprobe for every call it renders;
#    the real program makes real nodes (mknod) from /proc/devices' majors, and gpulaunch's
#    post-check reads them back. What cannot run here is the module itself: no GPU answers.
# 2. No driver (the kernel's /proc): `gpulaunch facts` and `check` against the real NVML and
#    nvidia-smi, whose real failures must be diagnosed as the module not being loaded.
# Usage: nvidia_real_programs_test.sh GPULAUNCH SOURCE_DIR. Exit 77 (CTest skip) only where
# Debian's archive cannot be reached and nothing is cached, or namespaces are not permitted.
set -euo pipefail

if [[ ${1:-} == --inside ]]; then
  # In the private mount namespace: SCENARIO WORK PROC_DIR COMMAND...
  shift
  scenario=$1 work=$2 proc_dir=$3
  shift 3
  multiarch=$(cat "$work/multiarch")
  mount -t tmpfs -o mode=0755 gl-dev /dev
  mkdir /dev/char /dev/shm
  mknod -m 0666 /dev/null c 1 3
  mount -t overlay gl-bin -o "lowerdir=$work/bin:/usr/bin" /usr/bin
  mount -t overlay gl-lib -o "lowerdir=$work/lib:/usr/lib/$multiarch" "/usr/lib/$multiarch"
  if [[ $scenario == driver ]]; then
    mkdir -p "$work/kernel-proc"
    mount --bind /proc "$work/kernel-proc"
    mount -t tmpfs -o mode=0555 gl-proc /proc
    cp -a "$proc_dir/." /proc/
    for entry in "$work"/kernel-proc/*; do
      [[ -e /proc/${entry##*/} ]] || ln -s "$entry" "/proc/${entry##*/}"
    done
  fi
  exec "$@"
fi

gpulaunch=$1
source_dir=$2
cache=${GPULAUNCH_NVIDIA_CACHE:-/var/cache/gpulaunch-nvidia}
packages=(nvidia-modprobe nvidia-smi libnvidia-ml1)
failures=0
check() {  # description, then a command that must succeed
  local description=$1
  shift
  if "$@"; then echo "ok: $description"; else echo "FAIL: $description" >&2; failures=$((failures + 1)); fi
}

[[ $(id -u) -eq 0 ]] || { echo "SKIP: mount namespaces, mknod and overlays need root"; exit 77; }
unshare -m --propagation private true 2>/dev/null ||
  { echo "SKIP: unshare -m is not permitted here"; exit 77; }

work=$(mktemp -d /tmp/gpulaunch-nvidia-real.XXXXXX)
chmod 0755 "$work"
trap 'rm -rf "$work"' EXIT

# ---- The packages: cached by version, else fetched once with a private apt configuration ----
arch=$(dpkg --print-architecture)
cached() { ls "$cache/debs/$1"_*_"$arch".deb 2>/dev/null | sort -V | tail -n 1; }
missing_debs=()
for package in "${packages[@]}"; do [[ -n $(cached "$package") ]] || missing_debs+=("$package"); done
if ((${#missing_debs[@]})); then
  apt_dir=$work/apt
  mkdir -p "$apt_dir"/{lists/partial,cache/archives/partial} "$cache/debs"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm contrib non-free" \
    >"$apt_dir/sources.list"
  apt_options=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
    -o Dir::Etc::preferencesparts=- -o APT::Sandbox::User=root -qq)
  if ! timeout 120 apt-get "${apt_options[@]}" update >"$apt_dir/update.log" 2>&1; then
    echo "SKIP: Debian's archive cannot be reached and $cache holds no ${missing_debs[*]}:"
    tail -n 3 "$apt_dir/update.log"
    exit 77
  fi
  mkdir -p "$apt_dir/download"
  (cd "$apt_dir/download" && timeout 300 apt-get "${apt_options[@]}" download "${missing_debs[@]}") ||
    { echo "FAIL: apt-get download ${missing_debs[*]}" >&2; exit 1; }
  mv "$apt_dir"/download/*.deb "$cache/debs/"
fi
for package in "${packages[@]}"; do
  deb=$(cached "$package")
  echo "using $deb"
  dpkg -x "$deb" "$work/root"
done
modprobe_version=$(dpkg-deb -f "$(cached nvidia-modprobe)" Version)
modprobe_version=${modprobe_version%%-*}

# Where the packages put them once installed: /usr/bin (nvidia-smi through Debian's
# alternatives) and the multiarch directory (libnvidia-ml.so.1, likewise).
mkdir -p "$work/bin" "$work/lib"
ml_dir=$(dirname "$(find "$work/root/usr/lib" -name 'libnvidia-ml.so.1' | head -n 1)")
multiarch=$(realpath --relative-to="$work/root/usr/lib" "$ml_dir")
multiarch=${multiarch%%/*}
echo "$multiarch" >"$work/multiarch"
cp -a "$work/root/usr/bin/nvidia-modprobe" "$work/bin/"
cp -a "$(find "$work/root/usr/lib" -name nvidia-smi -type f | head -n 1)" "$work/bin/nvidia-smi"
cp -a "$ml_dir"/libnvidia-ml.so.* "$work/lib/"
chown -R root:root "$work/bin" "$work/lib"

inside() {  # SCENARIO PROC_DIR COMMAND...: the command in a private mount namespace
  local scenario=$1 proc_dir=$2
  shift 2
  unshare -m --propagation private bash "$0" --inside "$scenario" "$work" "$proc_dir" "$@"
}

# ---- 1. A loaded driver's files: /proc as the driver and the kernel write it ----
proc=$work/proc
mkdir -p "$proc/driver/nvidia/gpus/0000:18:00.0" "$proc/driver/nvidia/gpus/0000:2a:00.0" \
  "$proc/driver/nvidia/capabilities/mig"
# fs/char_dev.c chrdev_show ("%3d %s\n" per region, then the block section); the nvidia
# regions as kernel-open/nvidia/nv.c registers them (595.45.04), uvm and the capability majors
# dynamic (uvm.c, nv-caps.c, nv-caps-imex.c alloc_chrdev_region).
printf 'Character devices:\n  1 mem\n  4 /dev/vc/0\n195 nvidia\n195 nvidiactl\n234 nvidia-uvm\n237 nvidia-caps\n238 nvidia-caps-imex-channels\n\nBlock devices:\n  8 sd\n' \
  >"$proc/devices"
# kernel/module/procfs.c m_show: "name size refcount users, state address (taints)".
printf 'nvidia_uvm 1961984 0 - Live 0x0000000000000000 (POE)\nnvidia 11526144 1 nvidia_uvm, Live 0x0000000000000000 (POE)\n' \
  >"$proc/modules"
# kernel-open/nvidia/nv-procfs.c: the version file, each GPU's information, the registry
# ("%s: %u\n": NVreg_DeviceFileMode 438 = 0666, the driver's default).
printf 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U22-I3-AF03-09-1)\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n' \
  >"$proc/driver/nvidia/version"
minor=0
for address in 0000:18:00.0 0000:2a:00.0; do
  printf 'Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 0\nGPU UUID: \t GPU-00000000-0000-0000-0000-00000000000%d\nDevice Minor: \t %d\nBus Location: \t %s\n' \
    "$minor" "$minor" "$address" >"$proc/driver/nvidia/gpus/$address/information"
  minor=$((minor + 1))
done
printf 'DeviceFileUID: 0\nDeviceFileGID: 0\nDeviceFileMode: 438\nModifyDeviceFiles: 1\n' >"$proc/driver/nvidia/params"
# kernel-open/nvidia/nv-caps.c nv_cap_procfs_show: minor, mode, modify.
printf 'DeviceFileMinor: 1\nDeviceFileMode: 256\nDeviceFileModify: 1\n' >"$proc/driver/nvidia/capabilities/mig/config"
printf 'DeviceFileMinor: 2\nDeviceFileMode: 292\nDeviceFileModify: 1\n' >"$proc/driver/nvidia/capabilities/mig/monitor"

node_is() {  # PATH MAJOR MINOR MODE: a character device with that number and mode
  [[ $(stat -c '%F %t:%T %a' "$1" 2>/dev/null) == "character special file $(printf '%x:%x' "$2" "$3") $4" ]]
}
export -f node_is

# The calls the oneshot renders, each run by the real program; then every node read back.
inside driver "$proc" bash -c '
  "$1" nvidia-devices >"$2/first.out" 2>&1; echo $? >"$2/first.rc"
  stat -c "%n %F %t:%T %a" /dev/nvidiactl /dev/nvidia0 /dev/nvidia1 /dev/nvidia-uvm \
    /dev/nvidia-uvm-tools /dev/nvidia-caps/nvidia-cap1 /dev/nvidia-caps/nvidia-cap2 >"$2/first.nodes" 2>&1 || true
  readlink /dev/char/195:0 >"$2/char-link" 2>&1 || true
  ls /dev/nvidia-caps-imex-channels >"$2/imex-dir" 2>&1 || true
  node_is /dev/nvidiactl 195 255 666 && node_is /dev/nvidia0 195 0 666 && node_is /dev/nvidia1 195 1 666 &&
    node_is /dev/nvidia-uvm 234 0 666 && node_is /dev/nvidia-uvm-tools 234 1 666 &&
    node_is /dev/nvidia-caps/nvidia-cap1 237 1 400 && node_is /dev/nvidia-caps/nvidia-cap2 237 2 444 &&
    echo yes >"$2/first.right"
  # The real program on the option its 535 release lacks, and on the one call the old oneshot ran.
  /usr/bin/nvidia-modprobe -i 0:1 >"$2/imex.out" 2>&1; echo $? >"$2/imex.rc"
  /usr/bin/nvidia-modprobe -u -c 0 -c 1 >/dev/null 2>&1; echo $? >"$2/old.rc"
  stat -c "%t:%T" /dev/nvidia-uvm >"$2/old.uvm"
  "$1" facts >"$2/old.facts" 2>&1 || true
  "$1" nvidia-devices >"$2/again.out" 2>&1; echo $? >"$2/again.rc"
  node_is /dev/nvidia-uvm 234 0 666 && node_is /dev/nvidia-uvm-tools 234 1 666 && echo yes >"$2/again.right"
  "$1" check "$3/tests/golden/sglang-two-nodes.toml" >"$2/check-imex.out" 2>&1 || true
' _ "$gpulaunch" "$work" "$source_dir"
cat "$work/first.out" "$work/first.nodes"
check "nvidia-devices exits 0 with the real nvidia-modprobe" test "$(cat "$work/first.rc")" = 0
check "the GPU nodes are one call without -u, with the control minor" \
  grep -qx "gpulaunch: ran /usr/bin/nvidia-modprobe -c 255 -c 0 -c 1: exit 0" "$work/first.out"
check "nvidia-uvm is its own call, minor 0" \
  grep -qx "gpulaunch: ran /usr/bin/nvidia-modprobe -u -c 0: exit 0" "$work/first.out"
check "MIG capabilities are their own call" \
  grep -qx "gpulaunch: ran /usr/bin/nvidia-modprobe -f /proc/driver/nvidia/capabilities/mig/config -f /proc/driver/nvidia/capabilities/mig/monitor: exit 0" \
  "$work/first.out"
check "no call passes -i to a nvidia-modprobe whose --help lacks it" \
  bash -c '! grep -q "^gpulaunch: ran .* -i " "$1"' _ "$work/first.out"
check "the oneshot says IMEX channel 0 was not made, and why" \
  grep -q "IMEX channel 0 (/dev/nvidia-caps-imex-channels/channel0) not made: /usr/bin/nvidia-modprobe $modprobe_version has no -i" \
  "$work/first.out"
check "the post-check passed" grep -qx "gpulaunch: NVIDIA device nodes present and the driver's (2 GPU(s))" "$work/first.out"
check "every node the real program made has the driver's type, major, minor and mode" test -s "$work/first.right"
check "the real program linked /dev/char/195:0 to its node" grep -qx "../nvidia0" "$work/char-link"
check "the real $modprobe_version refuses -i before doing anything" \
  bash -c 'test "$(cat "$1/imex.rc")" = 1 && grep -q "unrecognized option: \"-i\"" "$1/imex.out" && grep -q "Invalid commandline" "$1/imex.out"' _ "$work"
check "the old single call '-u -c 0 -c 1' leaves /dev/nvidia-uvm with the last GPU's minor" \
  bash -c 'test "$(cat "$1/old.rc")" = 0 && test "$(cat "$1/old.uvm")" = "ea:1"' _ "$work"
check "facts sees that node is not the driver's" \
  grep -q "/dev/nvidia-uvm (c 234:1; the driver serves c 234:0)" "$work/old.facts"
check "nvidia-devices runs only the uvm call to mend it" \
  bash -c 'test "$(cat "$1/again.rc")" = 0 && grep -c "gpulaunch: ran " "$1/again.out" | grep -qx 1 && grep -qx "gpulaunch: ran /usr/bin/nvidia-modprobe -u -c 0: exit 0" "$1/again.out"' _ "$work"
check "after it /dev/nvidia-uvm is c 234:0 again" test -s "$work/again.right"
check "check warns a two-node profile that IMEX channel 0 is missing, with the fix" \
  bash -c 'grep -q "nvidia-imex-channel-missing" "$1" && grep -q "NVreg_CreateImexChannel0=1" "$1" && grep -q "mknod -m 0666 /dev/nvidia-caps-imex-channels/channel0 c 238 0" "$1"' \
  _ "$work/check-imex.out"

# ---- 2. No driver: the real NVML and nvidia-smi on this node ----
inside none "" bash -c '
  "$1" facts --json >"$2/nodriver.json" 2>"$2/nodriver.err"; echo $? >"$2/nodriver.rc"
  "$1" check "$3/tests/golden/sglang-serve.toml" >"$2/nodriver.check" 2>&1; echo $? >"$2/nodriver.check.rc"
' _ "$gpulaunch" "$work" "$source_dir"
cat "$work/nodriver.check"
check "facts runs" test "$(cat "$work/nodriver.rc")" = 0
check "NVML's real answer is Driver Not Loaded (9)" \
  /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["driver"]; sys.exit(not (d["nvml_error"] == 9 and any("Driver Not Loaded" in p for p in d["problems"])))' \
  "$work/nodriver.json"
check "nvidia-smi's real line is kept" \
  grep -q "exit code 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver" "$work/nodriver.json"
check "check diagnoses the module not being loaded, with the fix" \
  bash -c 'grep -q "nvidia-driver-not-loaded" "$1" && grep -q "modprobe nvidia" "$1" && ! grep -q "no-nvidia-driver" "$1"' _ "$work/nodriver.check"
check "check exits non-zero" bash -c 'test "$(cat "$1")" != 0' _ "$work/nodriver.check.rc"
((failures == 0)) || { echo "$failures check(s) failed" >&2; exit 1; }
echo "all checks passed"
