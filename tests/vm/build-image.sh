#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Debian 12 guest image of the VM test tier (tests/vm/vm_test.sh), or finds it built:
# debootstrap bookworm (minbase + tests/vm/image/packages) from the Debian mirror apt uses here,
# the driver unit of tests/vm/image/ enabled, written to an ext4 image with `mkfs.ext4 -d` (no
# loop mount), kernel and initrd copied out beside it for qemu's -kernel/-initrd.
#
#   build-image.sh [DEB]      prints the image directory (root.img, vmlinuz, initrd.img) on stdout
#
# DEB: the package the guest will install. The guest has no network, so its Depends (each first
# alternative) are put into the image too, and are part of the cache key: a new dependency builds
# a new image instead of failing dpkg -i in the guest.
#
# Cached under $GPULAUNCH_VM_CACHE (/var/cache/gpulaunch-vm) by a hash of its inputs: this
# script, tests/vm/image/*, the mirror and the suite; any change builds a new one. Built into a
# temporary directory and renamed into place, under a lock per key, so concurrent runs share one
# build and no run sees half an image. GPULAUNCH_VM_MIRROR overrides the mirror.
# Exit 77 when the image cannot be built here at all (not root, no debootstrap or mkfs.ext4 -d,
# mirror unreachable), 1 when the build itself failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
suite=bookworm
cache=${GPULAUNCH_VM_CACHE:-/var/cache/gpulaunch-vm}
skip() { echo "build-image: cannot build the guest image here: $*" >&2; exit 77; }
log() { echo "build-image: $*" >&2; }

[[ $(id -u) -eq 0 ]] || skip "needs root (debootstrap)"
command -v debootstrap >/dev/null || skip "no debootstrap (scripts/install-deps.sh installs it)"
command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4 (e2fsprogs)"
[[ $(mkfs.ext4 2>&1 || true) == *'[-d root-directory]'* ]] || skip "this mkfs.ext4 has no -d (e2fsprogs >= 1.43 does)"

# The mirror apt already uses for the suite itself (deb822 .sources or one-line .list), never the
# security archive: that is what CI can reach.
mirror_from_apt() {
  local file
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -r $file ]] || continue
    if [[ $file == *.sources ]]; then
      # A stanza: URIs: and Suites: lines, blank line between stanzas.
      awk -v suite="$suite" '
        /^[[:space:]]*$/ { if (uri != "" && suites ~ ("(^| )" suite "( |$)")) { print uri; exit } uri = ""; suites = ""; next }
        /^URIs:/ { uri = $2 }
        /^Suites:/ { $1 = ""; suites = $0; sub(/^ /, "", suites) }
        END { if (uri != "" && suites ~ ("(^| )" suite "( |$)")) print uri }' "$file"
    else
      awk -v suite="$suite" '$1 == "deb" && $0 !~ /\[/ && $3 == suite { print $2 } $1 == "deb" && /\[/ { for (i = 2; i <= NF; i++) if ($i ~ /\]$/) { if ($(i + 2) == suite) print $(i + 1); break } }' "$file"
    fi
  done | grep -v -- '-security' | head -n 1
}
mirror=${GPULAUNCH_VM_MIRROR:-$(mirror_from_apt)}
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}

# The package's own runtime dependencies, names only (versions are the suite's). debootstrap
# cannot pick a provider for a virtual name (libspdlog1.10-fmt9): the package built here links
# the library this machine has installed, so its installed provider is the one.
real_package() {
  if [[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]; then
    echo "$1"
    return
  fi
  local provider
  provider=$(dpkg-query -W -f='${db:Status-Status} ${Package} ${Provides}\n' 2>/dev/null |
    awk -v name="$1" '$1 == "installed" { for (i = 3; i <= NF; i++) { p = $i; gsub(/[(,]/, "", p); if (p == name) { print $2; exit } } }')
  echo "${provider:-$1}"
}
depends=""
if [[ -n ${1:-} ]]; then
  names=$(dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/[[:space:]]//g' |
    grep -v '^$') || { log "cannot read Depends of $1"; exit 1; }
  depends=$(for name in $names; do real_package "$name"; done | sort -u | paste -sd, -)
fi

# The key: every input that shapes the image. tests/vm/image/ holds only image inputs.
key=$( {
  cat "$here/build-image.sh"
  for f in "$here"/image/*; do echo "== ${f##*/}"; cat "$f"; done
  echo "mirror=$mirror suite=$suite depends=$depends"
} | sha256sum | cut -c1-16)
image_dir=$cache/debian12-$key
if [[ -f $image_dir/root.img && -f $image_dir/vmlinuz && -f $image_dir/initrd.img ]]; then
  log "cached image $image_dir"
  touch "$image_dir"  # last use, for the pruning below
  echo "$image_dir"
  exit 0
fi

mkdir -p "$cache"
# One build per key at a time; a run that waited finds the other's image.
exec 9>"$cache/.lock-$key"
flock 9
if [[ -f $image_dir/root.img ]]; then
  log "cached image $image_dir (built by a concurrent run)"
  echo "$image_dir"
  exit 0
fi
# Unreachable mirror: a skip, not a failure (no network is a property of the machine).
if command -v wget >/dev/null && ! wget -q -T 15 -t 2 -O /dev/null "$mirror/dists/$suite/Release"; then
  skip "mirror $mirror unreachable"
fi

started=$SECONDS
work=$(mktemp -d "$cache/.build-$key.XXXXXX")
root=$work/root
cleanup() {
  # debootstrap's second stage mounts proc and sys in the target; a killed build must not leave
  # them mounted (nor be removed through them).
  local m
  for m in "$root/proc" "$root/sys" "$root/dev/pts"; do
    mountpoint -q "$m" 2>/dev/null && umount -l "$m"
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

include=$(grep -v '^[[:space:]]*\(#\|$\)' "$here/image/packages" | paste -sd, -)${depends:+,$depends}
log "debootstrap $suite from $mirror into $root (packages: $include)"
# --foreign: unpack only, so the initramfs configuration below is in place before the kernel's
# postinst builds the initrd (building it twice costs a minute on 2 cores).
debootstrap --foreign --variant=minbase --include="$include" --components=main \
  "$suite" "$root" "$mirror" >"$work/debootstrap-1.log" 2>&1 || {
  tail -n 30 "$work/debootstrap-1.log" >&2
  log "debootstrap (first stage) failed"
  exit 1
}
# A small initrd: only what finds a virtio root (TCG decompresses and loads every module slowly).
mkdir -p "$root/etc/initramfs-tools/conf.d"
echo "MODULES=list" >"$root/etc/initramfs-tools/conf.d/gl-vm.conf"
printf '%s\n' virtio_pci virtio_blk ext4 >"$root/etc/initramfs-tools/modules"
# No fsync per unpacked file: a crash here throws the whole build away anyway. Removed afterwards,
# so the guest's own dpkg runs (the cases) are as on any node.
mkdir -p "$root/etc/dpkg/dpkg.cfg.d"
echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/gl-vm-build"
chroot "$root" /debootstrap/debootstrap --second-stage >"$work/debootstrap-2.log" 2>&1 || {
  tail -n 30 "$work/debootstrap-2.log" >&2
  log "debootstrap (second stage) failed"
  exit 1
}
rm -f "$root/etc/dpkg/dpkg.cfg.d/gl-vm-build"
log "debootstrap done in $((SECONDS - started))s"

# The booted system: root on the first virtio disk, no network, a fixed machine-id (an empty one
# would make every boot a first boot: presets applied again, systemd-firstboot prompting).
echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" >"$root/etc/fstab"
echo glvm >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 glvm\n' >"$root/etc/hosts"
echo 6c6a1b2c3d4e4f5a8b9c0d1e2f3a4b5c >"$root/etc/machine-id"
install -m 0755 "$here/image/gl-vm-boot" "$root/usr/local/sbin/gl-vm-boot"
install -m 0644 "$here/image/gl-vm-boot.service" "$root/etc/systemd/system/gl-vm-boot.service"
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/gl-vm-boot.service "$root/etc/systemd/system/multi-user.target.wants/"
# Nothing that waits for a console or the network at boot, and none of podman's boot-time units
# (auto-update, restart-all, the API socket): under TCG they take a minute of CPU from the
# engines; the container cases run podman themselves.
for unit in systemd-firstboot.service apt-daily.timer apt-daily-upgrade.timer \
  e2scrub_all.timer e2scrub_reap.service fstrim.timer getty@tty1.service \
  podman-auto-update.timer podman-auto-update.service podman-restart.service podman.socket \
  podman.service podman-clean-transient.service; do
  ln -sf /dev/null "$root/etc/systemd/system/$unit"
done
# The .debs debootstrap downloaded are not part of the system.
rm -f "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/*.bin
rm -rf "$root/debootstrap"

kernel=$(ls "$root"/boot/vmlinuz-* | sort -V | tail -n 1)
initrd=$(ls "$root"/boot/initrd.img-* | sort -V | tail -n 1)
cp "$kernel" "$work/vmlinuz"
cp "$initrd" "$work/initrd.img"

# Room for the cases (podman images, journals) beyond what the system takes.
used_mib=$(du -sm --apparent-size "$root" | cut -f1)
size_mib=$((used_mib * 12 / 10 + 1536))
truncate -s "${size_mib}M" "$work/root.img"
mkfs.ext4 -q -F -L glroot -d "$root" "$work/root.img" >"$work/mkfs.log" 2>&1 || {
  cat "$work/mkfs.log" >&2
  log "mkfs.ext4 -d failed"
  exit 1
}
rm -rf "$root"
{
  echo "key=$key mirror=$mirror suite=$suite"
  echo "kernel=${kernel##*/} initrd=${initrd##*/}"
  echo "built=$(date -u +%FT%TZ) seconds=$((SECONDS - started)) size_mib=$size_mib"
} >"$work/manifest"
rm -f "$work"/*.log
mv -T "$work" "$image_dir"
trap - EXIT
log "built $image_dir in $((SECONDS - started))s"

# Images of other keys unused for a week: each is a gigabyte or two.
find "$cache" -mindepth 1 -maxdepth 1 -type d -name 'debian12-*' ! -name "debian12-$key" \
  -mtime +7 -exec rm -rf {} + 2>/dev/null || true
echo "$image_dir"
