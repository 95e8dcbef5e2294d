#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Smoke test of systemd-harness.sh: the systemd 252 facts gpulaunch's C++ side relies on, checked
# on a private manager, and proof that the host is left alone. Exit 77 (CTest skip) only when the
# harness cannot run here (not root, no unshare).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
harness=$here/systemd-harness.sh
[[ $(id -u) -eq 0 ]] || { echo "SKIP: systemd_harness_smoke needs root"; exit 77; }
unshare --pid --mount --fork --mount-proc true 2>/dev/null ||
  { echo "SKIP: unshare --pid --mount is not permitted here"; exit 77; }

state=$(mktemp -d /tmp/gpulaunch-harness-smoke.XXXXXX)
sentinel=$(mktemp /tmp/gpulaunch-harness-sentinel.XXXXXX)
trap 'rm -rf "$state" "$sentinel"' EXIT
echo "host sentinel" >"$sentinel"
snapshot() { ls -la --time-style=full-iso /var/log/journal /etc/systemd/system 2>&1; ls /sys/fs/cgroup; findmnt -no OPTIONS /sys/fs/cgroup || true; findmnt -no OPTIONS / || true; }
before=$(snapshot)
cleanup() {
  "$harness" poweroff "$state" || true
  rm -f "$sentinel"
  rm -rf "$state"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
inside() { "$harness" exec "$state" -- "$@"; }
show() { inside systemctl show -p Result,ExecMainCode,ExecMainStatus,ActiveState "$1" | tr '\n' ' '; }

pid=$("$harness" boot "$state") || { cat "$state/console.log" >&2; fail "boot"; }
echo "booted: manager PID $pid (host view), $(inside systemctl --version | head -1)"

# (1) transient oneshot
inside systemd-run --wait -q -p Type=oneshot true || fail "systemd-run --wait -p Type=oneshot true"
echo "(1) systemd-run --wait -p Type=oneshot true: ok"

# (2) Type=notify from a unit file in the private /etc/systemd/system
inside sh -c 'cat >/etc/systemd/system/harness-notify.service' <<'UNIT'
[Service]
Type=notify
NotifyAccess=all
ExecStart=/bin/sh -c 'systemd-notify --ready; sleep 1000'
UNIT
inside systemctl daemon-reload
timeout 30 "$harness" exec "$state" -- systemctl start harness-notify.service || fail "notify unit did not start"
[[ $(inside systemctl is-active harness-notify.service) == active ]] || fail "notify unit not active"
echo "(2) Type=notify + NotifyAccess=all: $(inside systemctl show -p ActiveState,SubState harness-notify.service | tr '\n' ' ')"
inside systemctl stop harness-notify.service

# (3) MemoryMax= OOM kill
inside sh -c 'cat >/etc/systemd/system/harness-oom.service' <<'UNIT'
[Service]
Type=simple
MemoryMax=64M
ExecStart=/usr/bin/python3 -c "b = b'\x01' * (512 << 20); import time; time.sleep(60)"
UNIT
inside systemctl daemon-reload
inside systemctl start harness-oom.service
for _ in $(seq 100); do
  state_now=$(inside systemctl show -p ActiveState --value harness-oom.service)
  [[ $state_now == failed || $state_now == inactive ]] && break
  sleep 0.2
done
observed=$(show harness-oom.service)
echo "(3) MemoryMax=64M, 512 MiB allocation: $observed"
oom_count=$(inside sh -c 'grep -h "^oom_kill " /sys/fs/cgroup/memory/*/system.slice/harness-oom.service/memory.oom_control 2>/dev/null' || true)
echo "    memory.oom_control after: ${oom_count:-(cgroup already removed)}"
kernel_line=$(inside journalctl -k -q --no-pager -g 'Memory cgroup out of memory|oom-kill' 2>/dev/null | tail -n 2 || true)
echo "    kernel lines in the private journal: ${kernel_line:-(none)}"
[[ $observed == *"ExecMainStatus=9"* ]] || fail "OOM kill: expected status 9"
[[ $observed == *"Result=signal"* || $observed == *"Result=oom-kill"* ]] || fail "OOM kill: unexpected Result"

# (4) ExecStart= quoting: each word in double quotes; % -> %%, $ -> $$, \ -> \\, " -> \"
python3 - "$state/escape" <<'PY'
import json, sys
words = ["plain", "two words", "it's", 'quo"te', "back\\slash", "trailing\\", "$HOME", "${HOME}", "$$",
         "%h", "%%", "100%", ";", "naïve 模型", "--flag=$(rm -rf /)", "a\\nb", "'single'", "`id`"]
def quote(word):
    out = word.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return '"' + out + '"'
code = 'import sys,json; json.dump(sys.argv[1:], open("/run/argv.json","w"))'
line = " ".join(quote(w) for w in ["/usr/bin/python3", "-c", code] + words)
with open(sys.argv[1] + ".unit", "w", encoding="utf-8") as f:
    f.write("[Service]\nType=oneshot\nExecStart=" + line + "\n")
with open(sys.argv[1] + ".expected", "w", encoding="utf-8") as f:
    json.dump(words, f, ensure_ascii=False)
PY
inside sh -c 'cat >/etc/systemd/system/harness-argv.service' <"$state/escape.unit"
inside systemctl daemon-reload
inside systemctl start harness-argv.service || { inside systemctl status --no-pager harness-argv.service >&2 || true; fail "argv unit failed"; }
inside cat /run/argv.json >"$state/escape.actual"
python3 - "$state/escape" <<'PY' || fail "ExecStart= escaping"
import json, sys
expected = json.load(open(sys.argv[1] + ".expected", encoding="utf-8"))
actual = json.load(open(sys.argv[1] + ".actual", encoding="utf-8"))
for i, (e, a) in enumerate(zip(expected, actual)):
    if e != a:
        print(f"    word {i}: intended {e!r}, systemd passed {a!r}")
if len(expected) != len(actual):
    print(f"    intended {len(expected)} words, systemd passed {len(actual)}")
print("(4) ExecStart= escaping: " + ("all %d words exact" % len(expected) if expected == actual else "MISMATCH"))
sys.exit(0 if expected == actual else 1)
PY

# (5) power off; the host is untouched
"$harness" poweroff "$state"
kill -0 "$pid" 2>/dev/null && [[ $(readlink /proc/$pid/exe 2>/dev/null) == */systemd ]] && fail "manager $pid still running"
[[ -z $("$harness" pid "$state" || true) ]] || fail "harness still reports a manager"
[[ $(cat "$sentinel") == "host sentinel" ]] || fail "host /tmp sentinel lost"
after=$(snapshot)
[[ $before == "$after" ]] || { diff <(echo "$before") <(echo "$after") >&2; fail "host state changed"; }
echo "(5) poweroff: manager gone; host /tmp sentinel intact; /var/log/journal, /etc/systemd/system, /sys/fs/cgroup and mounts unchanged"
echo "PASS"
