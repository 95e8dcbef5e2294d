#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The booted-guest tier (issue 30): the .deb the debian_package test built, on a real Debian 12
# with systemd as PID 1 and a unified cgroup v2 hierarchy, under qemu. The guest image comes from
# tests/vm/build-image.sh (cached); a qcow2 overlay keeps the cached image untouched. A second
# disk, an ext4 image made with mkfs.ext4 -d, carries the payload (the .deb, a "previous" .deb,
# mock/, guest/cases.sh) and takes the results back; the host reads them with debugfs, no mount.
# The guest boots twice in one qemu run (cases.sh reboots it once) and powers off.
#
#   vm_test.sh SOURCE_DIR DEB_DIR WORK_DIR [SANDBOX_PROBE]
#
# DEB_DIR holds gpulaunch_VERSION_*.deb (tests/package/package_test.sh leaves it there). The
# previous build is that .deb repacked with dpkg-deb under a lower Version (VERSION~vmprev1): the
# same files, so the upgrade exercises the maintainer scripts' upgrade path, not a code change.
# KVM when /dev/kvm boots the guest kernel in a short probe, TCG otherwise (GPULAUNCH_VM_ACCEL=
# kvm|tcg forces one). Exit 77 (CTest skip) where qemu cannot run at all: not root, no qemu, no
# debootstrap, mirror unreachable without a cached image.
set -euo pipefail

if (($# != 3 && $# != 4)); then
  echo "usage: $0 SOURCE_DIR DEB_DIR WORK_DIR [SANDBOX_PROBE]" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
deb_dir=$2
work=$3
# tests/integration/sandbox/sandbox_probe, run inside an image engine's container (e.image-sandbox).
probe=${4:-}
here=$src/tests/vm
skip() { echo "SKIP: vm: $*"; exit 77; }
die() { echo "FAIL: vm: $*"; exit 1; }
started=$SECONDS

[[ $(id -u) -eq 0 ]] || skip "needs root (debootstrap, the image build)"
for tool in qemu-system-x86_64:qemu-system-x86 qemu-img:qemu-utils debootstrap:debootstrap \
  debugfs:e2fsprogs mkfs.ext4:e2fsprogs dpkg-deb:dpkg; do
  command -v "${tool%%:*}" >/dev/null ||
    skip "no ${tool%%:*} (apt-get install ${tool##*:}; scripts/install-deps.sh installs it)"
done

version=$(dpkg-parsechangelog -l "$src/packaging/debian/changelog" -S Version)
deb=$(ls "$deb_dir"/gpulaunch_"$version"_*.deb 2>/dev/null | head -n 1 || true)
[[ -n $deb ]] || die "no gpulaunch_${version}_*.deb in $deb_dir: the debian_package test leaves it there"

# --- the image (cached) ---
image_started=$SECONDS
status=0
image=$(bash "$here/build-image.sh" "$deb") || status=$?
((status != 77)) || skip "the guest image cannot be built here (build-image.sh said why above)"
((status == 0)) || die "tests/vm/build-image.sh failed (its output above)"
image_seconds=$((SECONDS - image_started))
echo "image: $image ($(sed -n 's/^built=\([^ ]*\) seconds=\([0-9]*\).*/built \1 in \2 s/p' "$image/manifest"); this run waited ${image_seconds} s for it)"

rm -rf "$work"
mkdir -p "$work"
# --- the payload disk ---
stage=$work/payload
mkdir -p "$stage/debs" "$stage/results" "$stage/state" "$stage/mock"
cp "$deb" "$stage/debs/current.deb"
dpkg-deb -R "$deb" "$work/previous"
sed -i "s/^Version: .*/Version: ${version}~vmprev1/" "$work/previous/DEBIAN/control"
dpkg-deb --root-owner-group -Zgzip -b "$work/previous" "$stage/debs/previous.deb" >/dev/null
rm -rf "$work/previous"
(cd "$src/mock" && tar --exclude=__pycache__ -cf - .) | tar -C "$stage/mock" -xf -
cp "$here/guest/cases.sh" "$stage/cases.sh"
[[ -n $probe ]] && cp "$probe" "$stage/sandbox_probe"
payload=$work/payload.img
truncate -s 256M "$payload"
mkfs.ext4 -q -F -L glpayload -d "$stage" "$payload"
overlay=$work/root.qcow2
qemu-img create -q -f qcow2 -F raw -b "$image/root.img" "$overlay"

# --- accelerator ---
# A nested KVM can answer on /dev/kvm and still hang the guest in early boot: the guest kernel
# without a root file system must reach its panic (panic=-1 reboots, -no-reboot ends qemu) within
# the probe's bound, which takes about a second where KVM works.
accel=tcg
why="no usable /dev/kvm"
case ${GPULAUNCH_VM_ACCEL:-auto} in
  tcg) why="GPULAUNCH_VM_ACCEL=tcg" ;;
  kvm) accel=kvm why="GPULAUNCH_VM_ACCEL=kvm" ;;
  *)
    if [[ -r /dev/kvm && -w /dev/kvm ]]; then
      probe_started=$SECONDS
      timeout --kill-after=2 15 qemu-system-x86_64 -accel kvm -cpu host -m 256 -nodefaults \
        -display none -no-reboot -serial "file:$work/kvm-probe.log" -kernel "$image/vmlinuz" \
        -append "console=ttyS0 panic=-1" >/dev/null 2>&1 || true
      if grep -q 'Kernel panic' "$work/kvm-probe.log" 2>/dev/null; then
        accel=kvm why="the KVM probe booted the kernel in $((SECONDS - probe_started)) s"
      else
        why="/dev/kvm is there but the probe's guest did not reach its panic in 15 s"
      fi
    fi
    ;;
esac
cpu=max
[[ $accel == kvm ]] && cpu=host
echo "accel: $accel ($why)"

# --- boot ---
limit=${GPULAUNCH_VM_TIMEOUT:-900}
serial=$work/serial.log
boot_started=$SECONDS
qemu_status=0
# No -no-reboot: the cases reboot the guest once; its power-off ends qemu.
timeout --kill-after=10 "$limit" qemu-system-x86_64 -machine q35 -accel "$accel" -cpu "$cpu" -smp 2 -m 2048 \
  -nodefaults -no-user-config -display none -nic none -serial "file:$serial" \
  -kernel "$image/vmlinuz" -initrd "$image/initrd.img" \
  -append "root=/dev/vda rw console=ttyS0,115200 fsck.mode=skip systemd.show_status=1" \
  -drive "file=$overlay,if=virtio,format=qcow2" -drive "file=$payload,if=virtio,format=raw" \
  >"$work/qemu.log" 2>&1 || qemu_status=$?
boot_seconds=$((SECONDS - boot_started))
rm -f "$overlay"  # its writes are the guest's; the results are on the payload disk

serial_tail() {
  echo "---- serial console, last 60 lines ($serial) ----"
  # Without the carriage returns and systemd's colours.
  tail -n 60 "$serial" 2>/dev/null | tr -d '\r' | sed 's/\x1b\[[0-9;]*m//g' || true
  [[ -s $work/qemu.log ]] && { echo "---- qemu ----"; cat "$work/qemu.log"; }
  echo "----"
}
results=$(debugfs -R "cat /results/results.txt" "$payload" 2>/dev/null || true)
# The guest's results directory (results.txt, each boot's journal) beside the serial log.
debugfs -R "rdump /results $work" "$payload" >/dev/null 2>&1 || true

failures=0
if ((qemu_status == 124 || qemu_status == 137)); then
  echo "FAIL vm: qemu still ran after ${limit} s (GPULAUNCH_VM_TIMEOUT); killed"
  serial_tail
  failures=$((failures + 1))
elif ((qemu_status != 0)); then
  echo "FAIL vm: qemu exited $qemu_status"
  serial_tail
  failures=$((failures + 1))
fi

echo "== cases (guest results: $work/results/)"
while read -r name; do
  line=$(grep -E "^(PASS|FAIL) $name(:|$)" <<<"$results" | head -n 1 || true)
  if [[ -z $line ]]; then
    echo "FAIL $name: did not run (the guest stopped before it)"
    failures=$((failures + 1))
  else
    echo "$line"
    [[ $line == PASS* ]] || failures=$((failures + 1))
  fi
done < <(bash "$here/guest/cases.sh" --list)
grep -E '^FAIL harness' <<<"$results" && failures=$((failures + 1))
grep -E '^INFO ' <<<"$results" | cut -c1-400 || true
if ! grep -qx DONE <<<"$results"; then
  echo "FAIL vm: the guest did not finish its cases (no DONE)"
  ((qemu_status == 124 || qemu_status == 137)) || serial_tail
  failures=$((failures + 1))
fi

# Times: the guest's uptime when its driver started (boot to the cases) and ended, per boot.
echo "== times"
grep -E '^TIME ' <<<"$results" | sed 's/^TIME /   guest /' || true
echo "   image: ${image_seconds} s this run; qemu (both boots, cases, power-offs): ${boot_seconds} s; accel $accel"
echo "   tier total: $((SECONDS - started)) s"
echo "$failures failure(s)"
((failures == 0))
