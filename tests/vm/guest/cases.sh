#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The VM tier's cases, run as root inside the booted Debian 12 guest by gl-vm-boot.service (the
# image's driver) from the payload disk mounted at /payload. Each case appends one line to
# /payload/results/results.txt: "PASS name" or "FAIL name: reason"; "INFO"/"TIME" lines carry what
# was seen. Two boots: the first installs, upgrades, brings engines up, drives a host OOM and
# exits 100 (the driver reboots); the second checks what came back by itself, the boot's
# ordering, then purges and writes DONE. systemctl and journalctl here are the harness's eyes.
#
#   cases.sh --list   the case names, one a line (the host expects each exactly once)
set -euo pipefail

cases=(
  a.install-previous a.postinst-user a.catalog a.units-enabled
  b.up-serving a.upgrade a.upgrade-keeps-engine e.image-import e.image-serving e.image-confined
  e.image-sandbox e.image-restart e.image-down c.cgroup-v2 c.host-oom c.oom-seen-on-v2
  b.serving-after-reboot d.devices-before-engines a.purge a.purge-leaves-user-and-profiles
)
if [[ ${1:-} == --list ]]; then
  printf '%s\n' "${cases[@]}"
  exit 0
fi

payload=/payload
results=$payload/results/results.txt
state=$payload/state
mkdir -p "$payload/results" "$state"
boot=$(($(cat "$state/boot" 2>/dev/null || echo 0) + 1))
echo "$boot" >"$state/boot"
uptime_now() { cut -d' ' -f1 /proc/uptime; }
echo "TIME boot$boot driver-start $(uptime_now)" >>"$results"

pass() { echo "PASS $1" >>"$results"; }
# One line per case: newlines and long outputs folded so the host's table stays readable.
fail() { echo "FAIL $1: $(tr '\n' ' ' <<<"$2" | cut -c1-600)" >>"$results"; }
info() { echo "INFO $*" >>"$results"; }
# verdict NAME REASON CMD...: PASS when CMD succeeds, else FAIL with REASON.
verdict() {
  local name=$1 reason=$2
  shift 2
  if "$@"; then pass "$name"; else fail "$name" "$reason"; fi
}
# Polls CMD every second for at most SECONDS.
wait_for() {
  local limit=$1
  shift
  local deadline=$((SECONDS + limit))
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 1
  done
}
health_200() {  # port
  python3 - "$1" <<'PY' 2>/dev/null
import sys, urllib.request
try:
    sys.exit(0 if urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=3).status == 200 else 1)
except Exception:
    sys.exit(1)
PY
}
prop() { systemctl show -P "$2" "$1"; }  # unit property

venv=/opt/gl-vm/venv
profiles=/etc/gpulaunch/profiles
prev_version=$(dpkg-deb -f "$payload"/debs/previous.deb Version)
cur_version=$(dpkg-deb -f "$payload"/debs/current.deb Version)
# A profile for the mock SGLang (mock/), as the integration suites write them.
write_profile() {  # name port extra-toml
  cat >"$profiles/$1.toml" <<TOML
[engine]
kind = "sglang"
venv = "$venv"
[model]
path = "/models/mock"
[server]
port = $2
$3
[env]
MOCK_SGLANG_LOAD_SECONDS = "1"
MOCK_SGLANG_MODE_FILE = "/opt/gl-vm/$1.mode"
TOML
}

# The mock SGLang packed into an OCI image from this guest's own files (no registry here): its
# Python and the libraries it and its extension modules link, the mock's packages in Debian's
# dist-packages, imported with `podman import`. Prints the reference.
mock_image() {
  local root=/opt/gl-vm/image-root reference=localhost/gl-mock-sglang:vm
  rm -rf "$root"
  mkdir -p "$root/usr/lib/python3/dist-packages" "$root/tmp" "$root/etc"
  chmod 1777 "$root/tmp"
  local files
  # Relative to /, each library as a file (-h) at the path the loader looks for it.
  # The sandbox probe too (e.image-sandbox), with what it links.
  local probe=()
  [[ -f $payload/sandbox_probe ]] && install -D -m 0755 "$payload/sandbox_probe" /opt/gl-vm/sandbox_probe &&
    probe=(/opt/gl-vm/sandbox_probe)
  files=$( { echo /usr/bin/python3.11 "${probe[@]}"; ls /usr/lib/python3.11/lib-dynload/*.so; } |
    xargs ldd 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\/.*ld-linux/ {print $1}' |
    sed 's|^/||' | sort -u)
  # shellcheck disable=SC2086
  # /bin/true: what the probe's posix_spawn check starts, as Python's multiprocessing would.
  tar -C / -chf - usr/bin/python3.11 usr/lib/python3.11 bin/true $files | tar -C "$root" -xf -
  ln -sf python3.11 "$root/usr/bin/python3"
  ((${#probe[@]})) && install -D -m 0755 "${probe[0]}" "$root/usr/local/bin/sandbox_probe"
  local purelib
  purelib=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  cp -r "$purelib"/. "$root/usr/lib/python3/dist-packages/"
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
  printf 'root:x:0:\n' >"$root/etc/group"
  tar -C "$root" -cf - . | podman import -q - "$reference" >/dev/null
  echo "$reference"
}

# --- (e) an engine from an OCI image under rootful podman ---
image_cases() {
  local out reference started
  started=$SECONDS
  if reference=$(mock_image 2>"$state/image.err") && podman image exists "$reference"; then
    pass e.image-import
    info "mock image $reference: $(podman image inspect --format '{{.Id}} {{.Size}}' "$reference" 2>&1) built and imported in $((SECONDS - started)) s; $(podman --version)"
  else
    fail e.image-import "mock image: $(tail -n 5 "$state/image.err" 2>/dev/null)"
    return 0
  fi
  # The node's CDI spec: no GPU here, so the device's edit is a variable the container must show
  # (the CDI spec is the node's, as nvidia-ctk would write it; cncf-tags/container-device-interface
  # SPEC.md: cdiVersion, kind, devices[].containerEdits).
  mkdir -p /etc/cdi /models/mock
  cat >/etc/cdi/gl-vm.json <<'JSON'
{"cdiVersion": "0.3.0", "kind": "nvidia.com/gpu",
 "devices": [{"name": "0", "containerEdits": {"env": ["GL_VM_CDI_DEVICE=0"]}}]}
JSON
  cat >"$profiles/vmimage.toml" <<TOML
[engine]
kind = "sglang"
image = "$reference"
[model]
path = "/models/mock"
[server]
port = 31004
[restart]
delay = "1s"
[env]
MOCK_SGLANG_LOAD_SECONDS = "1"
TOML
  local up_started=$EPOCHREALTIME
  if out=$(gpulaunch up vmimage --force 2>&1) && health_200 31004; then
    pass e.image-serving
    info "up-to-serving image: $(python3 -c "print(round($EPOCHREALTIME - $up_started, 2))") s (up vmimage, the same mock from an image, load 1 s)"
  else
    fail e.image-serving "up vmimage: $(tail -n 6 <<<"$out"); journal: $(journalctl -b --no-pager -o cat -u gpulaunch-vmimage.service -n 10 2>&1)"
    gpulaunch down vmimage --purge >/dev/null 2>&1 || true  # the later cases expect no unit of it
    return 0
  fi
  # The engine: the profile's user, no capabilities, inside the unit's cgroup, given the CDI
  # device's edit; nothing of the unit's own variables it was not meant to get.
  local pid uid want reasons=""
  pid=$(pgrep -f -n '^/usr/bin/python3 -m sglang.launch_server' || true)
  want=$(id -u gpulaunch-vmimage 2>/dev/null || echo none)
  if [[ -z $pid ]]; then
    reasons="no sglang.launch_server process; "
  else
    uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
    [[ $uid == "$want" ]] || reasons+="the engine runs as uid $uid, not gpulaunch-vmimage's $want; "
    grep -q '^CapEff:[[:space:]]*0*$' "/proc/$pid/status" || reasons+="the engine has capabilities: $(grep CapEff "/proc/$pid/status"); "
    grep -q 'gpulaunch-vmimage.service/' "/proc/$pid/cgroup" || reasons+="the engine is outside the unit's cgroup: $(cat "/proc/$pid/cgroup"); "
    tr '\0' '\n' <"/proc/$pid/environ" | grep -qx GL_VM_CDI_DEVICE=0 || reasons+="no CDI edit in the engine's environment; "
    tr '\0' '\n' <"/proc/$pid/environ" | grep -qx HOME=/var/lib/gpulaunch/vmimage/engine || reasons+="HOME is not the engine's: $(tr '\0' '\n' <"/proc/$pid/environ" | grep ^HOME=); "
    tr '\0' '\n' <"/proc/$pid/environ" | grep -q '^CUDA_VISIBLE_DEVICES=' && reasons+="the host's CUDA_VISIBLE_DEVICES reached the container; "
  fi
  if [[ -z $reasons ]]; then pass e.image-confined; else fail e.image-confined "$reasons"; fi
  # What real GPU stacks do at run time (catalog/sandbox_allowances: pidfd_getfd, process_vm_readv,
  # SCM_RIGHTS, /dev/shm, W+X memory, io_uring, ...) done inside the engine's container, as its
  # user, with its capabilities and podman's seccomp filter; mount and other devices stay denied.
  # ptrace of its own processes is allowed there (podman's default filter, no CAP_SYS_PTRACE).
  # INVOCATION_ID: the probe runs only where it is set, as systemd sets it for a unit.
  if [[ -f $payload/sandbox_probe ]]; then
    local probed
    probed=$(podman exec --env=INVOCATION_ID=gl-vm-image-sandbox gpulaunch-vmimage \
      /usr/local/bin/sandbox_probe --ptrace=allowed 2>&1) && pass e.image-sandbox ||
      fail e.image-sandbox "$( (grep -E '^FAIL' <<<"$probed" || tail -n 4 <<<"$probed") | head -n 8)"
    info "sandbox probe in the image's container: $(grep -cE '^ok' <<<"$probed") ok, $(grep -cE '^skip' <<<"$probed") skipped: $(grep -E '^(FAIL|skip)' <<<"$probed" | tr '\n' ';' | cut -c1-500)"
  else
    fail e.image-sandbox "no sandbox probe in the payload (vm_test.sh's fourth argument)"
  fi
  # A crash: the engine killed inside its container; the unit restarts it and it serves again.
  local restarts_before
  restarts_before=$(prop gpulaunch-vmimage.service NRestarts)
  [[ -n $pid ]] && kill -9 "$pid"
  restarted() { (($(prop gpulaunch-vmimage.service NRestarts) > restarts_before)) && health_200 31004; }
  if [[ -n $pid ]] && wait_for 90 restarted; then
    pass e.image-restart
    info "vmimage after the kill: $(gpulaunch events vmimage 2>/dev/null | grep -m1 -A2 'crash\|signal' | tr '\n' ' ' | cut -c1-300)"
  else
    fail e.image-restart "NRestarts $(prop gpulaunch-vmimage.service NRestarts) (was $restarts_before), $(systemctl is-active gpulaunch-vmimage.service); events: $(gpulaunch events vmimage 2>&1 | tail -n 4); journal: $(journalctl -b --no-pager -o cat -u gpulaunch-vmimage.service -n 10 2>&1)"
  fi
  # down: SIGTERM reaches the engine through podman (--sig-proxy), the engine exits by itself
  # well inside the drain time (30 s, after which `run` would kill it), the stop is classified
  # clean, and --rm leaves no container behind.
  local down_started=$SECONDS down_seconds last_class
  out=$(gpulaunch down vmimage 2>&1) || info "down vmimage: $(tail -n 3 <<<"$out")"
  down_seconds=$((SECONDS - down_started))
  last_class=$(gpulaunch events vmimage --json 2>/dev/null |
    python3 -c 'import json, sys; events = json.load(sys.stdin); print(events[-1]["class"] if events else "none")' 2>&1)
  local left
  left=$(podman ps -a --format '{{.Names}} {{.Status}}' 2>&1 | grep gpulaunch-vmimage || true)
  verdict e.image-down "after down (${down_seconds} s): the last event's class $last_class, unit $(systemctl is-active gpulaunch-vmimage.service 2>&1), containers: ${left:-none}, port: $(health_200 31004 && echo serving || echo closed)" \
    bash -c "[[ -z '$left' && '$last_class' == clean ]] && (( $down_seconds < 30 )) && ! systemctl -q is-active gpulaunch-vmimage.service"
  info "vmimage down: ${down_seconds} s, last event $last_class"
  gpulaunch down vmimage --purge >/dev/null 2>&1 || true
  rm -f /etc/cdi/gl-vm.json
}

boot_one() {
  # --- (a) install the previous build on the running system ---
  local out
  if out=$(DEBIAN_FRONTEND=noninteractive dpkg -i "$payload/debs/previous.deb" 2>&1); then
    verdict a.install-previous "dpkg -i left version $(dpkg-query -W -f='${Version}' gpulaunch 2>&1)" \
      test "$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' gpulaunch)" = "ii $prev_version"
  else
    fail a.install-previous "dpkg -i previous.deb: $(tail -n 8 <<<"$out")"
  fi
  verdict a.postinst-user "no gpulaunch user in video after postinst: $(id gpulaunch 2>&1)" \
    bash -c 'id -nG gpulaunch | grep -qw video'
  # The catalog file, and journald's database built from it by systemd's dpkg trigger.
  local id
  id=$(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' /usr/lib/systemd/catalog/gpulaunch.catalog 2>/dev/null | head -n 1)
  echo "$id" >"$state/catalog-id"
  verdict a.catalog "catalog entry ${id:-?} not in journalctl --list-catalog" \
    bash -c "[[ -n '$id' ]] && journalctl --list-catalog | grep -q '^$id'"
  verdict a.units-enabled "is-enabled: metrics.timer $(systemctl is-enabled gpulaunch-metrics.timer 2>&1), nvidia-devices $(systemctl is-enabled gpulaunch-nvidia-devices.service 2>&1)" \
    bash -c 'systemctl -q is-enabled gpulaunch-metrics.timer && systemctl -q is-enabled gpulaunch-nvidia-devices.service && systemctl -q is-active gpulaunch-metrics.timer'

  # --- (b) a profile brought up, as an operator does; (d) a second one enabled at boot ---
  mkdir -p /opt/gl-vm
  out=$(bash "$payload/mock/install.sh" "$venv" 2>&1) || fail b.up-serving "mock/install.sh: $out"
  write_profile vmserve 31001 ""
  write_profile vmorder 31002 ""
  # The devices unit made observable: a stand-in nvidia-modprobe satisfies its condition (the
  # guest has no GPU: `gpulaunch nvidia-devices` finds nothing to create) and 3 s before it make
  # an engine started in parallel with it visible in the timestamps.
  if [[ ! -e /usr/bin/nvidia-modprobe ]]; then
    printf '#!/bin/sh\n# gpulaunch VM tier stand-in: never run (no GPU here)\nexit 1\n' >/usr/bin/nvidia-modprobe
    chmod 0755 /usr/bin/nvidia-modprobe
  fi
  mkdir -p /etc/systemd/system/gpulaunch-nvidia-devices.service.d
  printf '[Service]\nExecStartPre=/bin/sleep 3\n' \
    >/etc/systemd/system/gpulaunch-nvidia-devices.service.d/gl-vm-slow.conf
  systemctl daemon-reload
  # `up` enables what it starts: the reboot below is to bring it back with no operator action.
  local up_started=$EPOCHREALTIME
  if out=$(gpulaunch up vmserve --force 2>&1) && health_200 31001 &&
    systemctl -q is-enabled gpulaunch-vmserve.service; then
    pass b.up-serving
    info "up-to-serving venv: $(python3 -c "print(round($EPOCHREALTIME - $up_started, 2))") s (up vmserve, mock SGLang from a venv, load 1 s)"
  else
    fail b.up-serving "up vmserve: is-enabled $(systemctl is-enabled gpulaunch-vmserve.service 2>&1); $(tail -n 6 <<<"$out")"
  fi
  out=$(gpulaunch up vmorder --force 2>&1) || info "up vmorder failed: $(tail -n 4 <<<"$out" | tr '\n' ' ')"
  # (d) needs an engine started by the boot whatever (b) finds: the harness enables this one.
  systemctl enable gpulaunch-vmorder.service >/dev/null 2>&1 || true

  # --- (a) upgrade to the current build while vmserve serves ---
  # What the upgrade must keep as it was (a.units-enabled judges the state itself).
  enablement() { systemctl is-enabled gpulaunch-metrics.timer gpulaunch-nvidia-devices.service 2>&1 | tr '\n' ' '; }
  local pid_before enabled_before
  pid_before=$(prop gpulaunch-vmserve.service MainPID)
  enabled_before=$(enablement)
  if out=$(DEBIAN_FRONTEND=noninteractive dpkg -i "$payload/debs/current.deb" 2>&1); then
    verdict a.upgrade "after the upgrade: $(dpkg-query -W -f='${db:Status-Abbrev}${Version}' gpulaunch), $(gpulaunch --version 2>&1), user: $(id gpulaunch 2>&1), units enabled: $(enablement)(before: $enabled_before)" \
      bash -c "[[ \$(dpkg-query -W -f='\${db:Status-Abbrev}\${Version}' gpulaunch) == 'ii $cur_version' ]] &&
        [[ \$(gpulaunch --version) == 'gpulaunch $cur_version' ]] && id -nG gpulaunch | grep -qw video &&
        [[ '$(enablement)' == '$enabled_before' ]]"
  else
    fail a.upgrade "dpkg -i current.deb: $(tail -n 8 <<<"$out")"
  fi
  info "dpkg -i current.deb said: $(tr '\n' ' ' <<<"$out" | cut -c1-400)"
  sleep 2
  local pid_after
  pid_after=$(prop gpulaunch-vmserve.service MainPID)
  if [[ $pid_before != 0 && $pid_before == "$pid_after" ]] && health_200 31001; then
    pass a.upgrade-keeps-engine
  else
    fail a.upgrade-keeps-engine "vmserve's main PID $pid_before before the upgrade, $pid_after after (NRestarts $(prop gpulaunch-vmserve.service NRestarts)); the journal: $(journalctl -b --no-pager -o cat -u gpulaunch-vmserve.service -u gpulaunch-nvidia-devices.service -n 12 2>&1)"
  fi

  image_cases

  # --- (c) a host OOM on cgroup v2 ---
  verdict c.cgroup-v2 "/sys/fs/cgroup is $(stat -fc %T /sys/fs/cgroup), controllers: $(cat /sys/fs/cgroup/cgroup.controllers 2>&1)" \
    bash -c '[[ $(stat -fc %T /sys/fs/cgroup) == cgroup2fs ]] && grep -qw memory /sys/fs/cgroup/cgroup.controllers'
  write_profile vmoom 31003 $'[service]\nmemory_max = "200M"\n[restart]\ndelay = "1s"\nmax_delay = "4s"'
  echo leak >/opt/gl-vm/vmoom.mode  # allocates 50 MiB every 0.2 s once ready
  out=$(gpulaunch up vmoom --runtime --force 2>&1) || info "up vmoom: $(tail -n 4 <<<"$out" | tr '\n' ' ')"
  echo normal >/opt/gl-vm/vmoom.mode  # the restart comes back healthy
  # The first host-oom event of `events --json`: "evidence | action", empty when there is none.
  host_oom_event() {
    gpulaunch events vmoom --json 2>/dev/null | python3 -c '
import json, sys
for event in json.load(sys.stdin):
    if event.get("class") == "host-oom":
        print(event.get("evidence", ""), "|", event.get("action", ""))
        break'
  }
  has_host_oom() { [[ -n $(host_oom_event) ]]; }
  if wait_for 120 has_host_oom; then
    pass c.host-oom
    info "host-oom event: $(host_oom_event | cut -c1-400)"
  else
    fail c.host-oom "no host-oom event in 120 s; events: $(gpulaunch events vmoom 2>&1 | tail -n 4); systemd: Result=$(prop gpulaunch-vmoom.service Result); journal: $(journalctl -b --no-pager -o cat -u gpulaunch-vmoom.service -n 8 2>&1)"
  fi
  # The cgroup v2 signals themselves, whichever the classification read first: systemd's
  # Result=oom-kill (only a pure v2 host reports it) and the unit's memory.events oom_kill counter
  # as record-exit read it into root's state (supervisor.json's cgroup_oom_kills).
  local result_line kills
  result_line=$(journalctl -b --no-pager -o cat _PID=1 UNIT=gpulaunch-vmoom.service 2>/dev/null |
    grep -m1 "Failed with result 'oom-kill'" || true)
  kills=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("cgroup_oom_kills", 0))' \
    /var/lib/gpulaunch/vmoom/supervisor.json 2>/dev/null || echo "?")
  info "vmoom: systemd said: ${result_line:-no oom-kill result}; record-exit's memory.events counter: $kills"
  if [[ -n $result_line && $kills =~ ^[1-9] ]]; then
    pass c.oom-seen-on-v2
  else
    fail c.oom-seen-on-v2 "systemd's result line: '${result_line:-none}', cgroup_oom_kills in supervisor.json: $kills; systemd's lines: $(journalctl -b --no-pager -o cat _PID=1 UNIT=gpulaunch-vmoom.service 2>&1 | tail -n 5)"
  fi
  gpulaunch down vmoom --runtime --purge >/dev/null 2>&1 || true

  echo "TIME boot$boot driver-end $(uptime_now)" >>"$results"
  journalctl -b --no-pager >"$payload/results/journal-boot$boot.txt" 2>&1 || true
  return 100
}

boot_two() {
  # --- (b) no operator action since the reboot: vmserve must serve by itself ---
  # The driver runs after multi-user.target, so the boot has started (for Type=notify: readied)
  # every engine it was going to; a unit still inactive and not enabled will not come.
  local serve_state
  serve_state=$(systemctl is-active gpulaunch-vmserve.service 2>&1 || true)
  if [[ $serve_state == inactive ]] && ! systemctl -q is-enabled gpulaunch-vmserve.service 2>/dev/null; then
    fail b.serving-after-reboot "gpulaunch-vmserve.service is $(systemctl is-enabled gpulaunch-vmserve.service 2>&1) and inactive after the boot: \`up\` installed the unit but did not enable it, so no boot starts it"
  elif wait_for 120 health_200 31001; then
    pass b.serving-after-reboot
  else
    fail b.serving-after-reboot "vmserve does not serve 120 s after the reboot: gpulaunch-vmserve.service is $(systemctl is-enabled gpulaunch-vmserve.service 2>&1), $(systemctl is-active gpulaunch-vmserve.service 2>&1); its journal: $(journalctl -b --no-pager -o cat -u gpulaunch-vmserve.service -n 6 2>&1)"
  fi
  echo "TIME boot$boot serving $(uptime_now)" >>"$results"

  # --- (d) devices before engines, as this boot ran them ---
  wait_for 120 health_200 31002 || true
  local devices=gpulaunch-nvidia-devices.service reasons="" unit
  local devices_up
  devices_up=$(prop $devices ActiveEnterTimestampMonotonic)
  info "$devices: ActiveEnterTimestampMonotonic=$devices_up ExecMainStartTimestampMonotonic=$(prop $devices ExecMainStartTimestampMonotonic) Result=$(prop $devices Result)"
  for unit in gpulaunch-vmorder.service gpulaunch-vmserve.service; do
    local started after requires
    started=$(prop $unit ExecMainStartTimestampMonotonic)
    after=$(prop $unit After)
    requires=$(prop $unit Requires)
    info "$unit: ExecMainStartTimestampMonotonic=$started"
    [[ " $after " == *" $devices "* ]] || reasons+="$unit has no After=$devices (After=$after); "
    [[ " $requires " == *" $devices "* ]] || reasons+="$unit has no Requires=$devices; "
    if [[ $unit == gpulaunch-vmorder.service ]] || ((started > 0)); then
      ((started > 0)) || reasons+="$unit did not start at boot; "
      ((devices_up > 0)) || reasons+="$devices did not run at boot; "
      ((started >= devices_up)) || reasons+="$unit started at ${started}us, before $devices was up at ${devices_up}us; "
    fi
  done
  if [[ -z $reasons ]]; then pass d.devices-before-engines; else fail d.devices-before-engines "$reasons"; fi

  # --- (a) purge ---
  local out
  for name in vmserve vmorder; do
    systemctl disable gpulaunch-$name.service >/dev/null 2>&1 || true
    gpulaunch down $name --purge >/dev/null 2>&1 || info "down $name --purge failed"
  done
  rm -rf /etc/systemd/system/gpulaunch-nvidia-devices.service.d /usr/bin/nvidia-modprobe
  systemctl daemon-reload
  local installed
  installed=$(dpkg -L gpulaunch 2>/dev/null | grep -vx '/\.' || true)
  if out=$(DEBIAN_FRONTEND=noninteractive dpkg --purge gpulaunch 2>&1); then
    local left="" path
    while read -r path; do
      [[ -z $path || -d $path ]] && continue  # shared directories (/usr/bin) stay
      [[ -e $path || -L $path ]] && left+="$path "
    done <<<"$installed"
    local id wants
    id=$(cat "$state/catalog-id" 2>/dev/null || true)
    wants=$(find /etc/systemd/system -name 'gpulaunch-*' 2>/dev/null | tr '\n' ' ')
    if [[ -n $left ]]; then
      fail a.purge "files of the package remain: $left"
    elif dpkg-query -W -f='${db:Status-Abbrev}' gpulaunch 2>/dev/null | grep -q '^[a-z]i'; then
      fail a.purge "dpkg still lists gpulaunch installed"
    elif [[ -n $wants ]]; then
      fail a.purge "unit links remain under /etc/systemd/system: $wants"
    elif [[ -e /var/lib/gpulaunch || -e /var/cache/gpulaunch ]]; then
      fail a.purge "gpulaunch's state remains: $(find /var/lib/gpulaunch /var/cache/gpulaunch -maxdepth 2 2>/dev/null | tr '\n' ' ' | cut -c1-300)"
    elif [[ -n $id ]] && journalctl --list-catalog | grep -q "^$id"; then
      fail a.purge "journald's catalog still has $id"
    else
      pass a.purge
    fi
  else
    fail a.purge "dpkg --purge: $(tail -n 8 <<<"$out")"
  fi
  # packaging/debian/postrm: the user stays (Debian keeps system users), profiles the operator
  # wrote stay, /etc/gpulaunch goes only when empty.
  verdict a.purge-leaves-user-and-profiles "after purge: user $(id gpulaunch 2>&1), profiles: $(ls "$profiles" 2>&1 | tr '\n' ' ')" \
    bash -c "id gpulaunch >/dev/null && [[ -f $profiles/vmserve.toml ]]"

  echo "TIME boot$boot driver-end $(uptime_now)" >>"$results"
  journalctl -b --no-pager >"$payload/results/journal-boot$boot.txt" 2>&1 || true
  echo DONE >>"$results"
  return 0
}

status=0
case $boot in
  1) boot_one || status=$? ;;
  2) boot_two || status=$? ;;
  *) echo "FAIL harness: boot $boot, expected two" >>"$results" ;;
esac
sync
exit "$status"
