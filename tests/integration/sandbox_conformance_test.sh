#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sandbox conformance (issue 26): every golden unit's exact [Service] sandbox, with the engine
# replaced by sandbox/sandbox_probe, must allow what real GPU stacks do at run time (catalog/
# sandbox_allowances: pidfd_getfd of a sibling's fd, process_vm_readv, SCM_RIGHTS over an
# abstract socket, /dev/shm, W+X memory, fork and spawn, faulthandler on SIGABRT, io_uring,
# mbind, netlink interface listing, each optional device present) and still deny what must stay
# denied (mount, a device outside the list, ptrace without service.allow; with the knob's line as
# unit/render writes it for service.allow = ["ptrace"], ptrace works).
# The test checks itself: the first golden unit without its pidfd_getfd line must fail the probe.
# (Each golden unit's exposure score, <= 2.5, is the golden test's.)
# Usage: sandbox_conformance_test.sh SOURCE_DIR PROBE. Exit 77 (CTest skip) when the
# harness cannot run here.
set -euo pipefail
source_dir=$1
probe=$2
harness=$source_dir/tests/integration/harness/systemd-harness.sh
units_py=$source_dir/tests/integration/sandbox/sandbox_units.py
fail() { echo "FAIL: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || { echo "SKIP: the sandbox probe needs root (private systemd)"; exit 77; }
unshare --pid --mount --fork --mount-proc true 2>/dev/null ||
  { echo "SKIP: unshare --pid --mount is not permitted here"; exit 77; }

state=$(mktemp -d /tmp/gpulaunch-conformance.XXXXXX)
cleanup() {
  "$harness" poweroff "$state" >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT
inside() { "$harness" exec "$state" -- "$@"; }
"$harness" boot "$state" >/dev/null || { cat "$state/console.log" >&2; fail "boot"; }

mkdir "$state/units"
names=()
make_unit() {  # NAME SOURCE_UNIT [sandbox_units.py options and probe args...]
  local name=$1 unit=$2
  shift 2
  local drop=() args=()
  while (($#)); do
    case $1 in
      --drop-line) drop+=("$1" "$2"); shift 2 ;;
      --replace-line) drop+=("$1" "$2" "$3"); shift 3 ;;
      *) args+=("$1"); shift ;;
    esac
  done
  python3 "$units_py" "${drop[@]}" "$unit" "$probe" "/run/gpulaunch-conformance/$name.log" \
    "${args[@]}" >"$state/units/gpulaunch-conformance-$name.service"
  names+=("$name")
}
for unit in "$source_dir"/tests/golden/*.service "$source_dir"/tests/golden/examples/*.service; do
  name=${unit##*/}
  [[ $unit == */examples/* ]] && name=example-$name
  # An engine image's unit runs root's podman (ExecStart=+) and has no sandbox of its own to
  # probe: its engine is confined by the container, which the VM tier checks on a running one
  # (tests/vm/guest/cases.sh, e.image-confined).
  if grep -q '^ExecStart=+' "$unit"; then
    echo "not probed here: ${name%.service} (an image's unit; its container is the VM tier's e.image-confined)"
    continue
  fi
  make_unit "${name%.service}" "$unit"
done
first=$(grep -lx 'SystemCallFilter=pidfd_getfd' "$source_dir"/tests/golden/*.service | head -n 1)
[[ -n $first ]] || fail "no golden unit has a SystemCallFilter=pidfd_getfd line"
make_unit broken-no-pidfd-getfd "$first" --drop-line 'SystemCallFilter=pidfd_getfd'
# service.allow = ["ptrace"] (tests/unit/unit/render_test.cpp: RenderSandbox) adds ptrace to
# that line and changes nothing else.
make_unit allow-ptrace "$first" --replace-line 'SystemCallFilter=pidfd_getfd' \
  'SystemCallFilter=pidfd_getfd ptrace'

# The units' own accounts (the manager's /etc is an overlay: nothing reaches the host's).
for account in $(sed -n 's/^User=//p' "$state"/units/*.service | sort -u); do
  inside getent passwd "$account" >/dev/null ||
    inside useradd --system --no-create-home --shell /usr/sbin/nologin "$account"
done
for group in $(sed -n 's/^Group=//p' "$state"/units/*.service | sort -u); do
  inside getent group "$group" >/dev/null || inside groupadd --system "$group"
done
inside mkdir -p /run/gpulaunch-conformance
for name in "${names[@]}"; do
  inside sh -c "cat >/etc/systemd/system/gpulaunch-conformance-$name.service" \
    <"$state/units/gpulaunch-conformance-$name.service"
done
inside systemctl daemon-reload

failed=0
for name in "${names[@]}"; do
  unit=gpulaunch-conformance-$name.service
  started=0
  inside systemctl start "$unit" || started=$?
  log=$(inside cat "/run/gpulaunch-conformance/$name.log" 2>/dev/null || true)
  if [[ $name == broken-* ]]; then
    if ((started != 0)) && grep -q '^FAIL pidfd_getfd passes the seccomp filter' <<<"$log"; then
      echo "ok   $unit fails without SystemCallFilter=pidfd_getfd, as it must:"
      grep '^FAIL' <<<"$log" | sed 's/^/       /'
    else
      echo "$log"
      echo "FAIL: $unit: the probe did not notice pidfd_getfd denied" >&2
      failed=1
    fi
    continue
  fi
  if ((started == 0)) && grep -q '^PASS' <<<"$log"; then
    echo "ok   $unit:"
    grep -v '^PASS' <<<"$log" | sed 's/^/       /'
  else
    echo "$log"
    inside systemctl status --no-pager "$unit" || true
    echo "FAIL: $unit: the sandbox breaks a need or allows what it must deny" >&2
    failed=1
  fi
done
exit "$failed"
