#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Multi-node over a real network: two "hosts", each a private systemd 252 (systemd-harness.sh) in
# its own network namespace, joined by a veth pair, each running its own sshd (keys made here) as a
# unit of that systemd. From node 0, the operator's seat, `gpulaunch up mn --all-nodes` goes over
# the system's /usr/bin/ssh to both; then the ranks each mock engine recorded, `status --all-nodes`,
# a killed rank 1 restarting the whole group, a CUDA OOM on rank 1 stepping both ranks' memory
# share down alike, and `down --all-nodes`. Then a two-node vLLM group (the mock vLLM): rank 0
# serves, rank 1 runs --headless with no HTTP server and its unit is ready once its engine holds
# its connection to rank 0's master port; `status --all-nodes` shows each rank's role.
# Each rank's engine has NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME naming its own veth.
#
#   multinode_test.sh GPULAUNCH_BINARY SOURCE_DIR WORK_DIR
#
# The units read the venv, the keys and the binary from WORK_DIR and the binary's directory: the
# harness shares both with each host (GPULAUNCH_HARNESS_SHARE), also from a clone under /tmp or
# /var/tmp; WORK_DIR must not be under the other directories each host keeps private (/run, ...). All traffic stays on the two
# namespaces (a private /24) and their loopbacks; nothing listens on the host. Exit 77 (CTest skip)
# only when this machine cannot do it (not root, no `ip netns`, no unshare); a missing sshd is a
# failure (scripts/install-deps.sh installs it).
set -euo pipefail

if (($# != 3)); then
  echo "usage: $0 GPULAUNCH_BINARY SOURCE_DIR WORK_DIR" >&2
  exit 2
fi

skip() { echo "SKIP: multinode: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root (network namespaces, private systemd, sshd)"
ip netns list >/dev/null 2>&1 || skip "no 'ip netns' (iproute2)"
unshare --pid --mount --fork --mount-proc true 2>/dev/null ||
  skip "unshare --pid --mount is not permitted here"
unshare --net true 2>/dev/null || skip "unshare --net is not permitted here"

fail_early() { echo "FAIL: $*" >&2; exit 1; }
for tool in /usr/sbin/sshd /usr/bin/ssh /usr/bin/ssh-keygen; do
  [[ -x $tool ]] || fail_early "$tool missing: run scripts/install-deps.sh (installs openssh-server and openssh-client)"
done

binary=$(realpath "$1")
source_dir=$(realpath "$2")
[[ -x $binary ]] || fail_early "no gpulaunch binary at $1"
harness=$source_dir/tests/integration/harness/systemd-harness.sh
mkdir -p "$3"
work=$(realpath "$3")
case $work/ in
  /run/* | /var/lib/gpulaunch/* | /var/cache/* | /var/log/* | /etc/*)
    fail_early "WORK_DIR $work is private inside the harness; put it under the build tree" ;;
esac

readonly nodes=(node0 node1)
readonly unit=gpulaunch-mn.service
readonly vllm_unit=gpulaunch-mnv.service
# The engine, not `gpulaunch run`: the venv's interpreter running either launcher gpulaunch picks
# (the console script runs under its #! interpreter, so its cmdline starts with python too).
readonly engine_pattern='^[^ ]*/python[^ ]* (-m sglang\.launch_server|[^ ]*/bin/sglang serve)'

# --- cleanup ---------------------------------------------------------------------------------
# Idempotent, and also run at the start: a run killed by CTest's timeout (SIGKILL, no trap) leaves
# its managers and namespaces behind, named in WORK_DIR/netns.
cleanup() {
  local -  # set +e stays in here
  set +e
  local node ns
  for node in "${nodes[@]}"; do
    [[ -d $work/$node ]] && "$harness" poweroff "$work/$node"
  done
  if [[ -f $work/netns ]]; then
    while read -r ns; do
      [[ $ns == gl-mn-* ]] && ip netns del "$ns" 2>/dev/null
    done <"$work/netns"
    rm -f "$work/netns"
  fi
  rm -rf "$work/keys"
  return 0
}
cleanup
rm -rf "$work"
mkdir -p "$work"
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

inside() {  # inside NODE CMD...: run CMD on that node (its mount, PID and network namespaces)
  local node=$1
  shift
  "$harness" exec "$work/$node" -- "$@"
}

# Prints the unit's journal and sshd's on every node that is up, then exits 1.
fail() {
  echo "FAIL: $*" >&2
  local node
  for node in "${nodes[@]}"; do
    "$harness" pid "$work/$node" >/dev/null 2>&1 || continue
    for u in "$unit" "$vllm_unit"; do
      echo "--- $node: journalctl -u $u" >&2
      inside "$node" journalctl -u "$u" --no-pager -n 80 >&2 || true
    done
    echo "--- $node: journalctl -u gl-test-sshd.service" >&2
    inside "$node" journalctl -u gl-test-sshd.service --no-pager -n 20 >&2 || true
  done
  exit 1
}

# The binary under test, copied: both nodes' units run it (ExecStart=, ExecStopPost=) for minutes,
# and a rebuild relinking the original meanwhile would take it from under them mid-test.
mkdir -p "$work/bin"
cp "$binary" "$work/bin/gpulaunch"
cp "$(dirname "$binary")/gpulaunch-record-start" "$work/bin/"  # ExecStartPost= runs it
# The archive module, where a binary outside the build tree looks for it (../lib/gpulaunch/):
# the group's cache seeding exports and imports archives.
mkdir -p "$work/lib/gpulaunch"
cp "$(dirname "$binary")/../lib/gpulaunch/gpulaunch-archive.so" "$work/lib/gpulaunch/"
binary=$work/bin/gpulaunch
"$binary" --version >/dev/null || fail "the copy of the gpulaunch binary does not run"

# --- mock engine ---------------------------------------------------------------------------------
bash "$source_dir/mock/install.sh" "$work/venv" >/dev/null || fail "mock/install.sh"

# --- network: two namespaces, one veth pair, a private /24 -----------------------------------------
netns=(gl-mn-$$-0 gl-mn-$$-1)
subnet=10.213.$(($$ % 250 + 1))
addr=("$subnet.1" "$subnet.2")
printf '%s\n' "${netns[@]}" >"$work/netns"  # before creating them, so that cleanup finds them
for ns in "${netns[@]}"; do ip netns add "$ns"; done
# Created inside the first namespace with its peer in the second: the pair never exists on the host.
ip -n "${netns[0]}" link add gl-mn0 type veth peer name gl-mn1 netns "${netns[1]}"
for i in 0 1; do
  ip -n "${netns[i]}" link set lo up
  ip -n "${netns[i]}" addr add "${addr[i]}/24" dev "gl-mn$i"
  ip -n "${netns[i]}" link set "gl-mn$i" up
done
echo "network: ${netns[0]} ${addr[0]} <-> ${netns[1]} ${addr[1]}"

# --- keys: root's client identity, one host key per node ----------------------------------------
keys=$work/keys
mkdir -m 0700 "$keys"
ssh-keygen -q -t ed25519 -N '' -C gl-mn-client -f "$keys/id_ed25519"
cp "$keys/id_ed25519.pub" "$keys/authorized_keys"
: >"$keys/known_hosts"
for i in 0 1; do
  ssh-keygen -q -t ed25519 -N '' -C "gl-mn-node$i" -f "$keys/host${i}_ed25519"
  read -r key_type key _ <"$keys/host${i}_ed25519.pub"
  echo "${addr[i]} $key_type $key" >>"$keys/known_hosts"
done

# What gpulaunch's group/remote passes (BatchMode, the profile's identity and known_hosts, strict).
ssh_opts=(-o BatchMode=yes -o ConnectTimeout=5 -i "$keys/id_ed25519" -o IdentitiesOnly=yes
  -o "UserKnownHostsFile=$keys/known_hosts" -o StrictHostKeyChecking=yes)

# --- two hosts: a private systemd in each namespace, sshd as one of its units --------------------
mkdir -p "$work/ssh"
for i in 0 1; do
  node=${nodes[i]}
  GPULAUNCH_HARNESS_NETNS=${netns[i]} GPULAUNCH_HARNESS_SHARE="$work:$(dirname "$binary")" "$harness" boot "$work/$node" >/dev/null ||
    fail "boot of $node (console: $work/$node/console.log)"
  # StrictModes no: the keys lie in the build tree, whose directories sshd would not trust.
  cat >"$work/ssh/$node.sshd_config" <<EOF
ListenAddress ${addr[i]}
Port 22
HostKey $keys/host${i}_ed25519
AuthorizedKeysFile $keys/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
LogLevel VERBOSE
EOF
  # Without PAM, sshd refuses an account whose password field is locked ('!'); unlock root in the
  # node's private /etc overlay only (the host's /etc/shadow is never written).
  inside "$node" sh -c 'grep -q "^root:!" /etc/shadow && sed -i "s/^root:!*/root:*/" /etc/shadow || true'
  # /run (the node's private tmpfs) needs sshd's privilege-separation directory.
  inside "$node" install -d -m 0755 /run/sshd
  inside "$node" /usr/sbin/sshd -t -f "$work/ssh/$node.sshd_config" || fail "sshd -t on $node"
  # A unit of this node's systemd: the commands ssh runs then talk to this node's manager.
  inside "$node" systemd-run -q --unit=gl-test-sshd /usr/sbin/sshd -D -e -f "$work/ssh/$node.sshd_config" || fail "starting sshd on $node"
done

# Ready when node 0 (the operator) reaches both and node 1 reaches node 0 (ExecStopPost's path for
# a failing rank 1).
wait_for_ssh() {  # wait_for_ssh FROM_NODE ADDR
  local deadline=$((SECONDS + 60))
  until inside "$1" ssh "${ssh_opts[@]}" "root@$2" true 2>"$work/ssh/last-error"; do
    ((SECONDS < deadline)) || { cat "$work/ssh/last-error" >&2; fail "ssh from $1 to $2"; }
    sleep 0.5
  done
}
wait_for_ssh node0 "${addr[0]}"
wait_for_ssh node0 "${addr[1]}"
wait_for_ssh node1 "${addr[0]}"
echo "ssh: node0 -> ${addr[0]}, ${addr[1]}; node1 -> ${addr[0]}: ok"

# --- the profile, the same on both nodes -----------------------------------------------------
cat >"$work/mn.toml" <<EOF
[engine]
kind = "sglang"
venv = "$work/venv"
[model]
path = "/models/mock model"
[parallelism]
tp = 2
[nodes]
hosts = ["${addr[0]}", "${addr[1]}"]
ssh_identity = "$keys/id_ed25519"
ssh_known_hosts = "$keys/known_hosts"
gpulaunch = "$binary"
[server]
port = 31400
ready_timeout = "2min"
[restart]
delay = "1s"
[env]
MOCK_SGLANG_LOAD_SECONDS = "1"
MOCK_SGLANG_ARGV_FILE = "/var/lib/gpulaunch/mn/engine/mock-argv.json"
MOCK_SGLANG_MODE_FILE = "/var/lib/gpulaunch/mn/engine/mock-mode"
EOF
for node in "${nodes[@]}"; do
  inside "$node" sh -c 'mkdir -p /etc/gpulaunch/profiles && cat >/etc/gpulaunch/profiles/mn.toml' \
    <"$work/mn.toml"
done

# operator LIMIT ARGS...: `gpulaunch ARGS` on node 0, the operator's seat, within LIMIT seconds;
# prints it, leaves its output in $out and its exit status in $code.
operator() {
  local limit=$1
  shift
  set +e
  out=$(timeout "$limit" "$harness" exec "$work/node0" -- "$binary" "$@" 2>&1)
  code=$?
  set -e
  echo "$ gpulaunch $* (exit $code)"
  echo "$out"
}

# --- up --all-nodes, from node 0 -----------------------------------------------------------------
# --force: there are no GPUs, so every node's check reports errors.
operator 400 up mn --all-nodes --force
((code == 0)) || fail "up --all-nodes exited $code"
grep -qxF "ready: 'mn' serves on all 2 node(s)" <<<"$out" || fail "up --all-nodes: no 'ready' line"

# --- each rank's engine got its own rank and rank 0's address ------------------------------------
for i in 0 1; do
  inside "${nodes[i]}" cat /var/lib/gpulaunch/mn/engine/mock-argv.json >"$work/argv$i.json" ||
    fail "no recorded argv on ${nodes[i]}"
  python3 - "$work/argv$i.json" "$i" "${addr[0]}:5000" <<'PY' || fail "argv of ${nodes[i]}"
import json, sys
argv = json.load(open(sys.argv[1]))
want = {"--nnodes": "2", "--node-rank": sys.argv[2], "--dist-init-addr": sys.argv[3]}
got = {flag: argv[argv.index(flag) + 1] if flag in argv[:-1] else None for flag in want}
for flag in want:
    if got[flag] != want[flag]:
        print(f"  {flag}: want {want[flag]!r}, got {got[flag]!r} in {argv}")
sys.exit(0 if got == want else 1)
PY
  echo "rank $i argv: --nnodes 2 --node-rank $i --dist-init-addr ${addr[0]}:5000"
done

# --- each rank's NCCL and Gloo sockets are pinned to the veth its route to rank 0 uses -------------
# Rank 0's own address lies in its veth's /24: that interface, not loopback, is the one the other
# ranks reach it on, so NCCL and Gloo there must bind it too.
want_interface=(gl-mn0 gl-mn1)
for i in 0 1; do
  pid=$(inside "${nodes[i]}" pgrep -f -o "$engine_pattern") || fail "no engine process on ${nodes[i]}"
  inside "${nodes[i]}" cat "/proc/$pid/environ" | tr '\0' '\n' >"$work/environ$i"
  for variable in NCCL_SOCKET_IFNAME GLOO_SOCKET_IFNAME; do
    grep -qxF "$variable=${want_interface[i]}" "$work/environ$i" ||
      fail "rank $i's engine: want $variable=${want_interface[i]}, got: $(grep "^$variable=" "$work/environ$i" || echo unset)"
  done
  echo "rank $i engine: NCCL_SOCKET_IFNAME=GLOO_SOCKET_IFNAME=${want_interface[i]}"
done

# --- status --all-nodes ----------------------------------------------------------------------------
operator 120 status mn --all-nodes
((code == 0)) || fail "status --all-nodes exited $code"
# Each rank's block ("rank N (ADDR):" then its node's status, indented) says the unit is active.
echo "$out" >"$work/status-all.txt"
python3 - "$work/status-all.txt" "${addr[@]}" <<'PY' || fail "status --all-nodes: not both ranks active"
import re, sys
text = open(sys.argv[1]).read()
for rank, addr in enumerate(sys.argv[2:]):
    m = re.search(rf"^rank {rank} \({re.escape(addr)}\):\n((?:    .*\n?)*)", text, re.M)
    if not m or not re.search(r"^\s+state:\s+active \(running\)", m.group(1), re.M):
        print(f"  rank {rank} ({addr}): no 'state: active (running)' in its block")
        sys.exit(1)
PY

# --- group restart: rank 1's engine dies, the whole group comes back -------------------------------
engine_pid() {  # engine_pid NODE: the one engine process there (the harness has its own /proc)
  local pids
  pids=$(inside "$1" pgrep -f "$engine_pattern" || true)
  [[ $pids =~ ^[0-9]+$ ]] && echo "$pids"
}
unit_state() {  # unit_state NODE: the unit's state as `status --json` reports it
  inside "$1" "$binary" status mn --json 2>/dev/null |
    python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["state"])' 2>/dev/null || true
}
declare -A before
for node in "${nodes[@]}"; do
  before[$node]=$(engine_pid "$node") || fail "no single engine process on $node"
done
echo "engines: node0 PID ${before[node0]}, node1 PID ${before[node1]} (harness PID namespaces)"
inside node1 pkill -KILL -f "$engine_pattern" || fail "pkill on node1"
echo "killed rank 1's engine; waiting for both ranks to serve with new engines"
deadline=$((SECONDS + 120))
for node in "${nodes[@]}"; do
  while :; do
    pid=$(engine_pid "$node") || pid=""
    if [[ -n $pid && $pid != "${before[$node]}" && $(unit_state "$node") == active ]]; then
      echo "$node: serving again, engine PID ${before[$node]} -> $pid"
      break
    fi
    ((SECONDS < deadline)) ||
      fail "$node not serving with a new engine 120 s after rank 1's was killed (PID before ${before[$node]}, now '${pid}', state '$(unit_state "$node")')"
    sleep 2
  done
done

# Rank 0 restarted because of its peer (evidence names rank 1); rank 1 classified its own stop.
events_have() {  # events_have NODE FIELD SUBSTRING
  inside "$1" "$binary" events mn --json >"$work/events-$1.json" || return 1
  python3 - "$work/events-$1.json" "$2" "$3" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))
sys.exit(0 if any(sys.argv[3] in str(e.get(sys.argv[2], "")) for e in events) else 1)
PY
}
events_have node0 evidence "rank 1 (${addr[1]}): " ||
  fail "node0's events: none whose evidence names rank 1: $(cat "$work/events-node0.json")"
events_have node0 action "restart with the group" ||
  fail "node0's events: no group restart: $(cat "$work/events-node0.json")"
events_have node1 class crash || fail "node1's events: no 'crash': $(cat "$work/events-node1.json")"
echo "events: node0 has rank 1's failure, node1 has its crash"
# For bench/README.md (printed, not asserted): rank 1's classification -> rank 0's decision.
python3 - "$work/events-node1.json" "$work/events-node0.json" <<'PY'
import json, sys
own = [e for e in json.load(open(sys.argv[1])) if e["class"] == "crash"]
told = [e for e in json.load(open(sys.argv[2])) if e["evidence"].startswith("rank 1 ")]
if own and told:
    print(f"group notice latency: {(told[0]['time_usec'] - own[0]['time_usec']) / 1000:.0f} ms "
          "(rank 1's stop classified -> rank 0 restarting, over ssh)")
PY

# --- a CUDA OOM on rank 1 steps the memory share down on both ranks --------------------------------
# The mock reads its mode at each start (MOCK_SGLANG_MODE_FILE, in each node's private /var/lib):
# rank 1's next start runs out of GPU memory while loading. Its stop is classified cuda-oom there
# and told to rank 0, so both restart one step down. The mode goes back to normal as soon as rank
# 1's event is in; if a slow poll lets it OOM once more, both step down twice: the ranks' shares
# must match either way, and be below SGLang's default (0.95 where NVML cannot measure the GPU).
fraction_of() {  # fraction_of NODE: --mem-fraction-static in the argv the mock recorded there
  inside "$1" cat /var/lib/gpulaunch/mn/engine/mock-argv.json | python3 -c '
import json, sys
argv = json.load(sys.stdin)
print(argv[argv.index("--mem-fraction-static") + 1] if "--mem-fraction-static" in argv[:-1] else "")'
}
for node in "${nodes[@]}"; do before[$node]=$(engine_pid "$node") || fail "no single engine on $node"; done
echo cuda-oom | inside node1 sh -c 'cat >/var/lib/gpulaunch/mn/engine/mock-mode'
inside node1 pkill -KILL -f "$engine_pattern" || fail "pkill on node1"
echo "rank 1's next start runs out of GPU memory"
eventually() {  # eventually SECONDS CMD...: polls CMD until it succeeds
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.3
  done
}
eventually 120 events_have node1 class cuda-oom ||
  fail "node1: no cuda-oom event: $(cat "$work/events-node1.json")"
echo normal | inside node1 sh -c 'cat >/var/lib/gpulaunch/mn/engine/mock-mode'
serving_stepped_down() {  # both ranks serve new engines whose memory share was lowered
  local node pid
  for node in "${nodes[@]}"; do
    pid=$(engine_pid "$node") || return 1
    [[ $pid != "${before[$node]}" && $(unit_state "$node") == active && -n $(fraction_of "$node") ]] ||
      return 1
  done
}
eventually 180 serving_stepped_down ||
  fail "not both serving a stepped-down engine: node0 '$(fraction_of node0)' node1 '$(fraction_of node1)'"
share0=$(fraction_of node0)
share1=$(fraction_of node1)
[[ $share0 == "$share1" ]] || fail "the ranks stepped down differently: rank 0 $share0, rank 1 $share1"
python3 -c "import sys; sys.exit(0 if float('$share0') < 0.95 else 1)" ||
  fail "--mem-fraction-static $share0 is not below SGLang's default 0.95 (no NVML here)"
events_have node0 class cuda-oom || fail "node0: rank 1's cuda-oom not recorded: $(cat "$work/events-node0.json")"
echo "cuda-oom on rank 1: both ranks serve again with --mem-fraction-static $share0"

# --- down --all-nodes -----------------------------------------------------------------------------
operator 300 down mn --all-nodes
((code == 0)) || fail "down --all-nodes exited $code"
for node in "${nodes[@]}"; do
  state=$(inside "$node" systemctl show -p ActiveState --value "$unit")
  [[ $state == inactive ]] || fail "$node: $unit is '$state' after down --all-nodes"
done
echo "down: $unit inactive on both nodes"
# --- ansible: the collection from the controller --------------------------------------------------
# Node 0 is the Ansible controller: the collection's own playbooks/rollout.yml (role
# gpulaunch.fleet.gpulaunch, serial 1) over ssh to both hosts with the keys above. A profile `mna`
# like `mn` with a model directory a lock can pin, each rank's lock made there by `gpulaunch lock`;
# without forcing the check (no GPUs here) the play fails at node 0's check and starts nothing;
# forced, it places, verifies against the lock and starts the group once (all_nodes); run again,
# it changes nothing (changed=0); then state=stopped brings the group down.
ans=$work/ansible
mkdir -p "$ans/model" "$ans/host_vars"
echo '{"architectures": ["MockForCausalLM"], "num_hidden_layers": 2}' >"$ans/model/config.json"
sed -e "s|^path = .*|path = \"$ans/model\"|" -e 's/^port = 31400/port = 31600/' \
  -e 's|/var/lib/gpulaunch/mn/|/var/lib/gpulaunch/mna/|g' "$work/mn.toml" >"$ans/mna.toml"
for i in 0 1; do
  # The lock of rank i, from the profile where the role will place it, which it then leaves.
  inside "${nodes[i]}" sh -c 'cat >/etc/gpulaunch/profiles/mna.toml' <"$ans/mna.toml"
  inside "${nodes[i]}" "$binary" lock mna --node-rank "$i" >"$ans/mna-$i.lock" ||
    fail "ansible: gpulaunch lock mna on ${nodes[i]}"
  inside "${nodes[i]}" rm /etc/gpulaunch/profiles/mna.toml
  printf 'gpulaunch_node_rank: %s\ngpulaunch_lockfile_content: "{{ lookup('"'file'"', '"'%s'"', rstrip=False) }}"\n' \
    "$i" "$ans/mna-$i.lock" >"$ans/host_vars/${nodes[i]}.yml"
done
cat >"$ans/inventory" <<EOF
[gpu_nodes]
node0 ansible_host=${addr[0]}
node1 ansible_host=${addr[1]}
[gpu_nodes:vars]
ansible_user=root
ansible_python_interpreter=/usr/bin/python3
ansible_ssh_private_key_file=$keys/id_ed25519
ansible_ssh_common_args='-o BatchMode=yes -o IdentitiesOnly=yes -o UserKnownHostsFile=$keys/known_hosts -o StrictHostKeyChecking=yes'
EOF
cat >"$ans/vars.yml" <<EOF
gpulaunch_profile_name: mna
gpulaunch_profile_content: "{{ lookup('file', '$ans/mna.toml', rstrip=False) }}"
gpulaunch_bin: $binary
gpulaunch_all_nodes: true
EOF
# playbook LIMIT EXTRA_VARS...: ansible-playbook on node 0; output in $out, exit status in $code.
playbook() {
  local limit=$1
  shift
  local extra=()
  for var in "$@"; do extra+=(-e "$var"); done
  set +e
  out=$(timeout "$limit" "$harness" exec "$work/node0" -- env HOME="$ans" \
    ANSIBLE_COLLECTIONS_PATH="$source_dir/ansible" ANSIBLE_LOCAL_TEMP="$ans/tmp" \
    ANSIBLE_REMOTE_TEMP=/tmp/.ansible-remote ANSIBLE_PIPELINING=true ANSIBLE_NOCOLOR=1 \
    ANSIBLE_SSH_CONTROL_PATH_DIR=/tmp/.ansible-cp ANSIBLE_FORKS=2 LC_ALL=C.UTF-8 \
    ansible-playbook -i "$ans/inventory" -e "@$ans/vars.yml" "${extra[@]}" \
    "$source_dir/ansible/ansible_collections/gpulaunch/fleet/playbooks/rollout.yml" 2>&1)
  code=$?
  set -e
  echo "$ out of ansible-playbook rollout.yml $* (exit $code)" >"$ans/last.txt"
  echo "$out" >>"$ans/last.txt"
}
recap() {  # recap HOST: the PLAY RECAP line of HOST
  grep -E "^$1 +: ok=" <<<"$out" || true
}
ansible_started=$SECONDS
playbook 60 gpulaunch_force_check=false
((code != 0)) || fail "ansible: the play succeeded with the check failing and not forced: $out"
grep -q "gpulaunch check mna found errors on node0" <<<"$out" ||
  fail "ansible: the failed play does not name node 0's check: $out"
for node in "${nodes[@]}"; do
  state=$(inside "$node" systemctl show -p ActiveState --value gpulaunch-mna.service)
  [[ $state != active && $state != activating ]] || fail "ansible: refused, yet $node runs mna ($state)"
done
echo "ansible: without gpulaunch_force_check the play fails at node0's check, nothing started"

playbook 150 gpulaunch_force_check=true
((code == 0)) || fail "ansible: rollout.yml (forced check) exited $code: $out"
# Under serial 1 each batch's task header is followed by its one host's result.
verified=$(grep -A1 "Verify the node against the lock" <<<"$out" | grep -c "^ok: \[node[01]\]" || true)
((verified == 2)) || fail "ansible: the lock was not verified on both nodes: $out"
[[ $(recap node0) =~ changed=[1-9] ]] || fail "ansible: node 0 reports no change on the first run: $out"
for node in "${nodes[@]}"; do
  state=$(inside "$node" systemctl show -p ActiveState --value gpulaunch-mna.service)
  [[ $state == active ]] || fail "ansible: $node's gpulaunch-mna.service is '$state' after the play: $out"
done
echo "ansible: placed, verified against each rank's lock, group up on both nodes"

playbook 90 gpulaunch_force_check=true
((code == 0)) || fail "ansible: second run exited $code: $out"
for node in "${nodes[@]}"; do
  [[ $(recap "$node") =~ changed=0\  ]] || fail "ansible: second run changed something on $node: $(recap "$node")"
done
echo "ansible: second run: $(recap node0 | tr -s ' '); $(recap node1 | tr -s ' ')"
# What the modules read, straight from the CLI: each rank's dry run and status, over ssh.
inside node0 "$binary" up mna --all-nodes --dry-run --json --force >"$ans/dry-run.json" 2>"$ans/dry-run.err" ||
  fail "ansible: up --all-nodes --dry-run --json: $(cat "$ans/dry-run.err")"
inside node0 "$binary" status mna --all-nodes --json >"$ans/status.json" 2>"$ans/status.err" ||
  fail "ansible: status --all-nodes --json: $(cat "$ans/status.err")"
python3 - "$ans/dry-run.json" "$ans/status.json" "${addr[@]}" <<'PY' || fail "ansible: the group's JSON: $(cat "$ans/dry-run.json" "$ans/status.json")"
import json, sys
plan, status = (json.load(open(path)) for path in sys.argv[1:3])
hosts = sys.argv[3:]
assert plan["profile"] == "mna" and plan["changed"] is False, plan
assert [(r["rank"], r["host"], r["action"], r["unit_changed"], r["diff"]) for r in plan["ranks"]] == \
    [(i, h, "none", False, "") for i, h in enumerate(hosts)], plan
assert [(r["rank"], r["installed"], r["state"]) for r in status["ranks"]] == \
    [(i, True, "active") for i in range(len(hosts))], status
PY
operator 60 up mna --all-nodes --dry-run --force
((code == 0)) || fail "ansible: up --all-nodes --dry-run exited $code"
for i in 0 1; do
  grep -qF "rank $i (${addr[i]}): action none, unit unchanged, check " <<<"$out" ||
    fail "ansible: up --all-nodes --dry-run: no line for rank $i"
done

playbook 90 gpulaunch_force_check=true gpulaunch_state=stopped
((code == 0)) || fail "ansible: state=stopped exited $code: $out"
for node in "${nodes[@]}"; do
  state=$(inside "$node" systemctl show -p ActiveState --value gpulaunch-mna.service)
  [[ $state == inactive ]] || fail "ansible: $node's gpulaunch-mna.service is '$state' after state=stopped"
done
echo "ansible: state=stopped: gpulaunch-mna.service inactive on both nodes ($((SECONDS - ansible_started)) s in all)"

# --- ranks agree before they start ---------------------------------------------------------------
# A file only rank 1's FlashInfer cache holds, left as the engine (the unit's user) would: both
# ranks have the same facts, so `up --all-nodes` seeds rank 0 from rank 1 (rank 1's `cache export`
# streamed into rank 0's `cache import` over ssh) before either starts, and says so; every rank's
# path to rank 0's rendezvous port is tested first. Then rank 1 cannot reach that port (a policy
# routing rule in node1's namespace, TCP to port 5000 only, so ssh still works): the start is
# refused naming rank 1, and nothing starts.
fi_dir=$(inside node1 "$binary" cache mn | awk '$1 == "flashinfer" {print $2}')
[[ -n $fi_dir ]] || fail "ranks agree: no flashinfer cache listed for mn on node1"
fi_owner=$(inside node1 stat -c %U "$fi_dir") || fail "ranks agree: no $fi_dir on node1"
inside node1 runuser -u "$fi_owner" -- sh -c \
  "mkdir -p '$fi_dir/only-rank1' && echo differs >'$fi_dir/only-rank1/kernel.so'" ||
  fail "ranks agree: could not write into $fi_dir on node1 as $fi_owner"
operator 400 up mn --all-nodes --force
((code == 0)) || fail "ranks agree: up --all-nodes exited $code"
grep -qxF "  rank 0 (${addr[0]}): listened on port 5000: rank(s) 1 connected" <<<"$out" ||
  fail "ranks agree: no rendezvous line for rank 0"
grep -qxF "  rank 1 (${addr[1]}): reaches ${addr[0]}:5000" <<<"$out" ||
  fail "ranks agree: no rendezvous line for rank 1"
grep -qE "^  flashinfer: rank 1 (has files, rank 0 none|differs) \(.*\); seeded rank 0 \(${addr[0]//./\\.}\) from rank 1 \(${addr[1]//./\\.}\)$" <<<"$out" ||
  fail "ranks agree: no line saying flashinfer was seeded on rank 0 from rank 1: $out"
[[ $(inside node0 cat "$fi_dir/only-rank1/kernel.so") == differs ]] ||
  fail "ranks agree: rank 1's file was not seeded into rank 0"
for i in 0 1; do
  fi_digest[i]=$(inside "${nodes[i]}" "$binary" cache mn --json |
    python3 -c 'import json, sys; c = json.load(sys.stdin)["caches"]["flashinfer"]; print(c["digest"], c["files"])') ||
    fail "ranks agree: cache mn --json on ${nodes[i]}"
done
[[ ${fi_digest[0]} == "${fi_digest[1]}" ]] ||
  fail "ranks agree: flashinfer differs after the start: ${fi_digest[0]} vs ${fi_digest[1]}"
echo "ranks agree: flashinfer seeded on rank 0 from rank 1, now equal (${fi_digest[0]})"
operator 300 down mn --all-nodes
((code == 0)) || fail "ranks agree: down --all-nodes exited $code"
block_rule=(priority 100 ipproto tcp dport 5000 unreachable)
ip -n "${netns[1]}" rule add "${block_rule[@]}" || fail "ranks agree: ip rule add in ${netns[1]}"
operator 120 up mn --all-nodes --force
ip -n "${netns[1]}" rule del "${block_rule[@]}" || fail "ranks agree: ip rule del in ${netns[1]}"
((code == 1)) || fail "ranks agree: up with rank 1 cut off from the rendezvous exited $code, not 1"
grep -qE "^  rank 1 \(${addr[1]//./\\.}\): FAILED: cannot reach ${addr[0]//./\\.}:5000: no route \(" <<<"$out" ||
  fail "ranks agree: no line naming rank 1's unreachable rendezvous"
grep -qF "Refusing to start 'mn': rank 1 (${addr[1]}) did not pass the rendezvous test of ${addr[0]}:5000" <<<"$out" ||
  fail "ranks agree: the refusal does not name rank 1 alone"
for node in "${nodes[@]}"; do
  state=$(inside "$node" systemctl show -p ActiveState --value "$unit")
  [[ $state == inactive ]] || fail "ranks agree: $node: $unit is '$state' after a refused start"
done
echo "ranks agree: rank 1 cut off from ${addr[0]}:5000, the start refused naming it"
# --- vLLM over two nodes: rank 0 serves, rank 1 runs headless -------------------------------------
# The mock vLLM (mock/vllm, `VENV/bin/vllm serve` as the catalog launches vLLM) takes vLLM's flags
# only: rank 0 listens on the master port and serves once rank 1 has joined; rank 1 serves no HTTP.
cat >"$work/mnv.toml" <<EOF
[engine]
kind = "vllm"
venv = "$work/venv"
[model]
path = "/models/mock model"
[parallelism]
tp = 2
[nodes]
hosts = ["${addr[0]}", "${addr[1]}"]
ssh_identity = "$keys/id_ed25519"
ssh_known_hosts = "$keys/known_hosts"
gpulaunch = "$binary"
dist_init_port = 5100
[server]
port = 31500
ready_timeout = "2min"
[restart]
delay = "1s"
[env]
MOCK_VLLM_LOAD_SECONDS = "1"
MOCK_VLLM_ARGV_FILE = "/var/lib/gpulaunch/mnv/engine/mock-argv.json"
EOF
for node in "${nodes[@]}"; do
  inside "$node" sh -c 'cat >/etc/gpulaunch/profiles/mnv.toml' <"$work/mnv.toml"
done
operator 400 up mnv --all-nodes --force
((code == 0)) || fail "vLLM: up --all-nodes exited $code"
grep -qxF "ready: 'mnv' serves on rank 0 (${addr[0]}); 1 headless rank(s) joined it" <<<"$out" ||
  fail "vLLM: up --all-nodes: no 'ready' line naming the headless rank"

for i in 0 1; do
  inside "${nodes[i]}" cat /var/lib/gpulaunch/mnv/engine/mock-argv.json >"$work/vllm-argv$i.json" ||
    fail "vLLM: no recorded argv on ${nodes[i]}"
  python3 - "$work/vllm-argv$i.json" "$i" "${addr[0]}" <<'PY' || fail "vLLM: argv of ${nodes[i]}"
import json, sys
argv = json.load(open(sys.argv[1]))
rank = int(sys.argv[2])
want = {"--nnodes": "2", "--node-rank": str(rank), "--master-addr": sys.argv[3],
        "--master-port": "5100", "--tensor-parallel-size": "2"}
got = {flag: argv[argv.index(flag) + 1] if flag in argv[:-1] else None for flag in want}
ok = got == want and argv[1:2] == ["serve"] and argv[0].endswith("/bin/vllm")
# Ranks >= 1 are headless (vLLM's docs/serving/parallelism_scaling.md); rank 0 is not.
if ("--headless" in argv) != (rank > 0):
    print(f"  --headless {'missing' if rank else 'present'} in {argv}")
    ok = False
if not ok:
    print(f"  want {want}, got {got} in {argv}")
sys.exit(0 if ok else 1)
PY
  echo "vLLM rank $i argv: --nnodes 2 --node-rank $i --master-addr ${addr[0]} --master-port 5100$( ((i)) && echo ' --headless')"
done

# Rank 1 is active although nothing listens on its HTTP port: a headless rank serves no HTTP.
inside node1 python3 -c 'import socket, sys
try:
    socket.create_connection(("127.0.0.1", 31500), 2)
except OSError:
    sys.exit(0)
sys.exit(1)' || fail "vLLM: something answers on rank 1's HTTP port; a headless rank serves none"

operator 120 status mnv --all-nodes
((code == 0)) || fail "vLLM: status --all-nodes exited $code"
echo "$out" >"$work/vllm-status-all.txt"
python3 - "$work/vllm-status-all.txt" "${addr[@]}" <<'PY' || fail "vLLM: status --all-nodes: roles or states wrong"
import re, sys
text = open(sys.argv[1]).read()
addrs = sys.argv[2:]
roles = ["serving", f"headless (no HTTP; joins rank 0 at {addrs[0]}:5100)"]
for rank, addr in enumerate(addrs):
    m = re.search(rf"^rank {rank} \({re.escape(addr)}\):\n((?:    .*\n?)*)", text, re.M)
    block = m.group(1) if m else ""
    if not re.search(rf"^\s+role:\s+{re.escape(roles[rank])}$", block, re.M):
        print(f"  rank {rank}: no 'role: {roles[rank]}' in its block:\n{block}")
        sys.exit(1)
    if not re.search(r"^\s+state:\s+active \(running\)", block, re.M):
        print(f"  rank {rank}: not active (running):\n{block}")
        sys.exit(1)
PY
inside node1 "$binary" status mnv --json >"$work/vllm-status1.json" || fail "vLLM: status --json on node1"
python3 - "$work/vllm-status1.json" <<'PY' || fail "vLLM: node1's status --json: $(cat "$work/vllm-status1.json")"
import json, sys
status = json.load(open(sys.argv[1]))[0]
sys.exit(0 if status["role"] == "headless" and status["phase"] == "headless, joined rank 0" else 1)
PY
echo "vLLM status: rank 0 serving, rank 1 headless and joined"

operator 300 down mnv --all-nodes
((code == 0)) || fail "vLLM: down --all-nodes exited $code"
for node in "${nodes[@]}"; do
  state=$(inside "$node" systemctl show -p ActiveState --value "$vllm_unit")
  [[ $state == inactive ]] || fail "$node: $vllm_unit is '$state' after down --all-nodes"
done
echo "vLLM down: $vllm_unit inactive on both nodes"
echo "PASS"
