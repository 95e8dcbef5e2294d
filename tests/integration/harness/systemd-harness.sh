#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A private systemd 252 for integration tests on a machine whose PID 1 is not systemd.
#
#   systemd-harness.sh boot STATE_DIR          boot; prints the manager's PID (as the host sees it)
#   systemd-harness.sh exec STATE_DIR -- CMD.. run CMD inside (mount, PID and network namespaces);
#                                              exit status passed through
#   systemd-harness.sh poweroff STATE_DIR      SIGRTMIN+4, SIGKILL after a grace period; idempotent
#   systemd-harness.sh pid STATE_DIR           print the PID if that manager is still running
#
# systemd runs as PID 1 of new PID and mount namespaces (field-facts section 9). Before it starts,
# the namespace gets private copies of everything systemd writes: tmpfs over /run, /tmp, /var/tmp,
# /var/log (so /var/log/journal), /var/lib/systemd, /var/lib/gpulaunch, /var/cache, and
# /etc/systemd/system; /etc and /var are overlays whose upper layer is a tmpfs, so stray writes
# (sysusers, update-done, ...) never reach the host either. Units that touch kernel-global state
# (sysctl, binfmt, modules, udev, tmpfiles, clock, ...) are masked in /run/systemd/system. The
# manager runs with container=gpulaunch-harness in its environment: systemd then treats itself as a
# container's init, which matters at power-off (systemd-shutdown skips unmounting and remounting
# file systems read-only, which in a mount namespace would remount the HOST's superblocks) and
# logs to its stderr (STATE_DIR/console.log) instead of the host's /dev/console.
# systemd remounts /sys/fs/cgroup read-only (a superblock change the host would see), so the
# namespace gets a private tmpfs there with binds of the host's hierarchies. The manager is moved
# into /gpulaunch-harness.N in every hierarchy (name in STATE_DIR/cgroup-name): its tree
# (init.scope, system.slice, units) stays in that subtree, cannot collide with another harness,
# and is removed at power-off. (That subtree sits at each hierarchy's root, i.e. outside the
# caller's own memory cgroup.)
#
# The checkout this script belongs to (and every directory in GPULAUNCH_HARNESS_SHARE, colon-
# separated) stays visible inside at its own path, also where it lies under a directory the
# namespace makes private (a clone in /tmp): it is bound back after the tmpfs mounts. Units with
# PrivateTmp=yes get a fresh /tmp of their own, so for one under /tmp or /var/tmp a drop-in for
# every gpulaunch-*.service binds it read-only into the unit (BindReadOnlyPaths=), as the units
# need the binary, the mock's venv and the test's profiles from there.
#
# GPULAUNCH_HARNESS_NETNS=NAME at boot: the manager, and so every unit it starts, lives in the
# network namespace /run/netns/NAME (made beforehand, e.g. with `ip netns add NAME`) instead of the
# caller's, so that several harnesses can be separate hosts on a test network. `exec` always enters
# the manager's network namespace (without the variable, that is the caller's own). The namespace
# stays the caller's to delete, after power-off.
#
# Boot failures that mean "cannot run here" (not root, no unshare) exit 77, for CTest's skip.
set -euo pipefail

readonly SYSTEMD=${GPULAUNCH_HARNESS_SYSTEMD:-/lib/systemd/systemd}
readonly MARK=gpulaunch-harness
readonly TARGET=gpulaunch-test.target
readonly BOOT_TIMEOUT=${GPULAUNCH_HARNESS_BOOT_TIMEOUT:-30}
readonly POWEROFF_GRACE=${GPULAUNCH_HARNESS_POWEROFF_GRACE:-15}

# Units masked inside: the ones field-facts section 9 names, plus everything that would change
# kernel-global or host state from inside the namespaces.
readonly MASKED=(
  systemd-tmpfiles-setup.service systemd-tmpfiles-setup-dev.service
  systemd-tmpfiles-clean.timer systemd-tmpfiles-clean.service
  systemd-udevd.service systemd-udevd-control.socket systemd-udevd-kernel.socket
  systemd-udev-trigger.service systemd-udev-settle.service
  systemd-modules-load.service getty.target
  systemd-sysctl.service systemd-binfmt.service
  proc-sys-fs-binfmt_misc.automount proc-sys-fs-binfmt_misc.mount
  kmod-static-nodes.service systemd-remount-fs.service swap.target
  systemd-update-utmp.service systemd-update-utmp-runlevel.service
  systemd-firstboot.service systemd-sysusers.service systemd-machine-id-commit.service
  systemd-hwdb-update.service ldconfig.service systemd-update-done.service
  systemd-journal-catalog-update.service systemd-repart.service systemd-pstore.service
  systemd-pcrphase.service systemd-pcrphase-sysinit.service systemd-boot-system-token.service
  systemd-timesyncd.service apparmor.service
  sys-kernel-config.mount sys-kernel-debug.mount sys-kernel-tracing.mount
  sys-fs-fuse-connections.mount dev-hugepages.mount
  cryptsetup.target integritysetup.target veritysetup.target
  systemd-ask-password-console.path systemd-ask-password-wall.path
)

# What the namespace mounts a private tmpfs over: the second list once the first is mounted.
readonly PRIVATE_DIRS=(/run /tmp /var/tmp /var/log /var/cache /var/lib/systemd /etc/systemd/system)
readonly PRIVATE_SUBDIRS=(/var/log/journal /var/lib/gpulaunch /var/cache/gpulaunch)

die() {
  echo "systemd-harness: $*" >&2
  exit 1
}
skip() {
  echo "systemd-harness: SKIP: $*" >&2
  exit 77
}

# Field 22 of /proc/PID/stat (start time in clock ticks); empty if the process is gone.
start_time() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  stat=${stat##*) }
  read -r -a fields <<<"$stat"
  echo "${fields[19]}"
}

# True when PID is the manager this STATE_DIR booted: same start time, systemd's command line, our
# marker in its environment, and a PID namespace other than ours.
is_ours() {
  local pid=$1 started=$2
  [[ $pid =~ ^[0-9]+$ && $pid -gt 1 ]] || return 1
  [[ $(start_time "$pid") == "$started" ]] || return 1
  local cmd
  cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
  [[ $cmd == "$SYSTEMD --system --unit=$TARGET"* ]] || return 1
  tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -qx "container=$MARK" || return 1
  [[ $(readlink "/proc/$pid/ns/pid") != "$(readlink /proc/self/ns/pid)" ]] || return 1
}

# Prints the PID recorded in STATE_DIR if that manager still runs; returns 1 otherwise.
running_pid() {
  local state=$1 pid started
  [[ -f $state/pid ]] || return 1
  read -r pid started <"$state/pid" || return 1
  is_ours "$pid" "${started:-}" || return 1
  echo "$pid"
}

state_dir() {
  [[ -n ${1:-} ]] || die "missing STATE_DIR"
  mkdir -p "$1"
  realpath "$1"
}

# Removes the manager's cgroup subtree (/NAME in every hierarchy the host mounts) once it is empty.
remove_cgroups() {
  local state=$1 name left dir
  [[ -f $state/cgroup-name ]] || return 0
  name=$(<"$state/cgroup-name")
  [[ $name == "$MARK".* && $name != */* ]] || { rm -f "$state/cgroup-name"; return 0; }
  for _ in $(seq 25); do
    left=0
    for dir in /sys/fs/cgroup/*/"$name"; do
      [[ -d $dir && ! -L ${dir%/*} ]] || continue
      find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null || left=1
    done
    ((left)) || break
    sleep 0.2
  done
  if ((left)); then
    echo "systemd-harness: could not remove cgroups /sys/fs/cgroup/*/$name" >&2
  else
    rm -f "$state/cgroup-name"
  fi
}

# Runs as PID 1 of the new namespaces, then execs systemd.
read -r -d '' NS_INIT <<'NS_INIT_EOF' || true
set -euo pipefail
scratch=$1 systemd=$2 target=$3 mark=$4 cgroup_name=$5 shared=$6 private=$7 private_sub=$8
checkout=$9
shift 9
masked=("$@")
mount --make-rprivate /
mount -t tmpfs -o mode=0700 "$mark" "$scratch"
# Hold on to the shared directories before anything is mounted over them: as open descriptors,
# since any path (this scratch directory too, when STATE_DIR is under /run) may be covered.
shared_dirs=() shared_fds=()
[[ -z $shared ]] || IFS=: read -r -a shared_dirs <<<"$shared"
for dir in "${shared_dirs[@]}"; do
  exec {fd}<"$dir"
  shared_fds+=("$fd")
done
# systemd remounts the tmpfs at /sys/fs/cgroup read-only and adds hierarchies to it: a remount
# changes the superblock, so give it a private tmpfs holding binds of the host's hierarchies.
# In each, move ourselves (PID 1 here, i.e. the manager) into /$cgroup_name: systemd takes its
# own cgroup as the root of its tree, so its system.slice stays inside that subtree.
mkdir "$scratch/cgroup"
mount --rbind /sys/fs/cgroup "$scratch/cgroup"
mount -t tmpfs -o mode=0755,nosuid,nodev,noexec "$mark-cgroup" /sys/fs/cgroup
for entry in "$scratch"/cgroup/*; do
  base=${entry##*/}
  if [[ -L $entry ]]; then
    cp -P "$entry" /sys/fs/cgroup/
  elif mountpoint -q "$entry"; then
    mkdir "/sys/fs/cgroup/$base"
    mount --bind "$entry" "/sys/fs/cgroup/$base"
    mkdir -p "$entry/$cgroup_name"
    if [[ -f $entry/cpuset.cpus ]]; then
      cat "$entry/cpuset.cpus" >"$entry/$cgroup_name/cpuset.cpus"
      cat "$entry/cpuset.mems" >"$entry/$cgroup_name/cpuset.mems"
    fi
    echo 1 >"$entry/$cgroup_name/cgroup.procs"
  fi
done
for tree in etc var; do
  mkdir -p "$scratch/$tree/upper" "$scratch/$tree/work"
  mount -t overlay "$mark-$tree" -o "lowerdir=/$tree,upperdir=$scratch/$tree/upper,workdir=$scratch/$tree/work" "/$tree"
done
for dir in $private; do
  mkdir -p "$dir"
  mount -t tmpfs -o mode=0755,nosuid,nodev "$mark" "$dir"
done
chmod 1777 /tmp /var/tmp
for dir in $private_sub; do
  mkdir -p "$dir"
  mount -t tmpfs -o mode=0755,nosuid,nodev "$mark" "$dir"
done
# The kernel follows /proc/self/fd/N to the directory itself; mount(8) must not resolve it.
for i in "${!shared_dirs[@]}"; do
  mkdir -p "${shared_dirs[$i]}"
  mount --no-canonicalize --rbind "/proc/self/fd/${shared_fds[$i]}" "${shared_dirs[$i]}"
  fd=${shared_fds[$i]}
  exec {fd}<&-
done
mkdir -p /run/systemd/system /run/lock
for unit in "${masked[@]}"; do ln -sf /dev/null "/run/systemd/system/$unit"; done
# Every engine unit Requires= the package's device unit (units/); without a GPU here it has
# nothing to create, so it runs /bin/true.
devices_unit=gpulaunch-nvidia-devices.service
cp "$checkout/units/$devices_unit" "/run/systemd/system/$devices_unit"
mkdir -p "/run/systemd/system/$devices_unit.d"
printf '[Unit]\nConditionPathExists=\n[Service]\nExecStart=\nExecStart=/bin/true\n' \
  >"/run/systemd/system/$devices_unit.d/50-harness-no-gpu.conf"
private_tmp_dirs=()
for dir in "${shared_dirs[@]}"; do
  [[ $dir == /tmp/* || $dir == /var/tmp/* ]] && private_tmp_dirs+=("-$dir")
done
if ((${#private_tmp_dirs[@]})); then
  mkdir -p /run/systemd/system/gpulaunch-.service.d
  printf '[Service]\nBindReadOnlyPaths=%s\n' "${private_tmp_dirs[*]}" \
    >/run/systemd/system/gpulaunch-.service.d/50-harness-shared.conf
fi
cat >"/run/systemd/system/$target" <<EOF
[Unit]
Description=gpulaunch integration-test target
DefaultDependencies=no
EOF
# systemd prefers /dev/console when it thinks it is the host's init; keep its output ours.
export container=$mark
exec "$systemd" --system "--unit=$target" --show-status=no --log-target=journal --log-color=no
NS_INIT_EOF

cmd_boot() {
  [[ $(id -u) -eq 0 ]] || skip "needs root (it boots systemd in new PID+mount namespaces)"
  command -v unshare >/dev/null && command -v nsenter >/dev/null || skip "unshare/nsenter missing"
  [[ -x $SYSTEMD ]] || skip "$SYSTEMD missing"
  unshare --pid --mount --fork --mount-proc true 2>/dev/null || skip "unshare --pid --mount is not permitted here"

  # With GPULAUNCH_HARNESS_NETNS, unshare (and so the namespace's PID 1) starts in that network
  # namespace; otherwise in ours.
  local netns=()
  if [[ -n ${GPULAUNCH_HARNESS_NETNS:-} ]]; then
    local netns_file=/run/netns/$GPULAUNCH_HARNESS_NETNS
    [[ $GPULAUNCH_HARNESS_NETNS != */* && -e $netns_file ]] ||
      die "GPULAUNCH_HARNESS_NETNS: no network namespace $netns_file"
    netns=(nsenter "--net=$netns_file" --)
  fi

  local state pid started
  state=$(state_dir "$1")
  if pid=$(running_pid "$state"); then
    die "$state already runs a manager (PID $pid); power it off first"
  fi
  remove_cgroups "$state"
  rm -f "$state/pid"
  mkdir -p "$state/ns"

  local name="$MARK.$$.$RANDOM"
  echo "$name" >"$state/cgroup-name"

  # The checkout, and what the caller adds, resolved; paths with ':' or spaces cannot be passed.
  local checkout shared dir
  checkout=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../../..")
  shared=$checkout
  local extra=()
  IFS=: read -r -a extra <<<"${GPULAUNCH_HARNESS_SHARE:-}"
  for dir in "${extra[@]}"; do
    [[ -n $dir ]] || continue
    dir=$(realpath "$dir") || die "GPULAUNCH_HARNESS_SHARE: no directory '$dir'"
    shared+=":$dir"
  done
  [[ $shared != *[[:space:]]* ]] || die "cannot share a path with white space: $shared"
  # Only what the namespace would hide needs binding back.
  local hidden="" private
  IFS=: read -r -a extra <<<"$shared"
  for dir in "${extra[@]}"; do
    for private in "${PRIVATE_DIRS[@]}" "${PRIVATE_SUBDIRS[@]}"; do
      if [[ $dir == "$private"/* ]]; then
        hidden+="${hidden:+:}$dir"
        break
      fi
    done
  done
  shared=$hidden

  local console="$state/console.log"
  : >"$console"
  "${netns[@]}" setsid unshare --pid --mount --fork --mount-proc --propagation private -- \
    /bin/bash -c "$NS_INIT" ns-init "$state/ns" "$SYSTEMD" "$TARGET" "$MARK" "$name" "$shared" \
    "${PRIVATE_DIRS[*]}" "${PRIVATE_SUBDIRS[*]}" "$checkout" "${MASKED[@]}" \
    </dev/null >>"$console" 2>&1 &
  local unshare_pid=$!

  # The namespace's PID 1 is unshare's only child; it execs systemd.
  pid=""
  for _ in $(seq 100); do
    pid=$(cat "/proc/$unshare_pid/task/$unshare_pid/children" 2>/dev/null | awk '{print $1}') || true
    [[ -n $pid ]] && [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$(readlink -f "$SYSTEMD")" ]] && break
    kill -0 "$unshare_pid" 2>/dev/null || break
    sleep 0.05
  done
  if [[ -z $pid ]] || ! started=$(start_time "$pid") || [[ -z $started ]] || ! is_ours "$pid" "$started"; then
    cat "$console" >&2
    remove_cgroups "$state"
    die "systemd did not start (console above)"
  fi
  echo "$pid $started" >"$state/pid"

  # The manager answers on /run/systemd/private; wait until its start-up jobs are done.
  local deadline=$((SECONDS + BOOT_TIMEOUT)) system_state=""
  while ((SECONDS < deadline)); do
    system_state=$(nsenter -t "$pid" -m -p -- systemctl is-system-running 2>/dev/null) || true
    [[ $system_state == running || $system_state == degraded ]] && break
    is_ours "$pid" "$started" || break
    sleep 0.2
  done
  if [[ $system_state != running && $system_state != degraded ]] ||
    ! nsenter -t "$pid" -m -p -- test -S /run/systemd/private; then
    echo "systemd-harness: manager not up after ${BOOT_TIMEOUT}s (state '${system_state}'); console:" >&2
    tail -n 50 "$console" >&2
    cmd_poweroff "$state" >&2
    exit 1
  fi
  if [[ ${GPULAUNCH_HARNESS_DBUS:-1} == 1 ]]; then  # systemd-run needs the system bus
    nsenter -t "$pid" -m -p -- systemctl start dbus.socket dbus.service || echo "systemd-harness: dbus.service did not start" >&2
  fi
  echo "$pid"
}

cmd_exec() {
  local state pid
  state=$(state_dir "$1")
  shift
  [[ ${1:-} == -- ]] && shift
  (($#)) || die "exec: missing command"
  pid=$(running_pid "$state") || die "no running manager in $state"
  # -n: the manager's network namespace (GPULAUNCH_HARNESS_NETNS), the caller's when none was given.
  exec nsenter -t "$pid" -m -p -n -w -- "$@"
}

cmd_poweroff() {
  local state=$1 pid started
  if [[ ! -f $state/pid ]]; then
    remove_cgroups "$state"
    return 0
  fi
  read -r pid started <"$state/pid" || true
  if is_ours "$pid" "${started:-}"; then
    kill -s RTMIN+4 "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + POWEROFF_GRACE))
    while ((SECONDS < deadline)) && is_ours "$pid" "$started"; do sleep 0.2; done
    if is_ours "$pid" "$started"; then
      echo "systemd-harness: PID $pid still up after ${POWEROFF_GRACE}s; SIGKILL" >&2
      kill -s KILL "$pid" 2>/dev/null || true
      for _ in $(seq 50); do is_ours "$pid" "$started" || break; sleep 0.1; done
    fi
    is_ours "$pid" "$started" && die "PID $pid survived SIGKILL"
  fi
  rm -f "$state/pid"
  remove_cgroups "$state"
}

main() {
  local command=${1:-}
  shift || true
  case $command in
    boot) (($# == 1)) || die "usage: $0 boot STATE_DIR"; cmd_boot "$1" ;;
    exec) (($# >= 2)) || die "usage: $0 exec STATE_DIR -- CMD..."; cmd_exec "$@" ;;
    poweroff) (($# == 1)) || die "usage: $0 poweroff STATE_DIR"; cmd_poweroff "$(state_dir "$1")" ;;
    pid) (($# == 1)) || die "usage: $0 pid STATE_DIR"; running_pid "$(state_dir "$1")" ;;
    *) die "usage: $0 boot|exec|poweroff|pid STATE_DIR [-- CMD...]" ;;
  esac
}

main "$@"
