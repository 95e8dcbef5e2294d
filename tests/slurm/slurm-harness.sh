#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A private Slurm 22.05 (Debian 12's slurmctld and slurmd) for tests: one slurmctld and two slurmd
# on one machine (multiple-slurmd: node1 and node2 are both this machine), inside namespaces of
# the test's own, never the host's Slurm.
#
#   slurm-harness.sh enter WORK_DIR -- CMD..   run CMD as PID 1's child of new PID, mount, network
#                                              and UTS namespaces (hostname slurmhead, a bridge
#                                              10.47.0.254/24, a private /etc/hosts naming
#                                              slurmhead, node1 10.47.0.1 and node2 10.47.0.2);
#                                              every process started inside, the daemons
#                                              included, dies with CMD's namespace
#   slurm-harness.sh boot WORK_DIR [KEY=VALUE..]  (inside `enter`) write WORK_DIR/slurm.conf, with
#                                              the KEY=VALUE lines appended, start slurmctld on
#                                              the bridge and each slurmd in a network namespace
#                                              of its own (a veth on the bridge), so each node's
#                                              jobs have their own loopback and ports, as two
#                                              machines would; wait until both nodes are idle
#   slurm-harness.sh stop WORK_DIR             (inside) stop the daemons by their own PIDs and
#                                              wait until they are gone
#
# What keeps it off the host: everything Slurm writes (state, spool, PID and log files) lies under
# WORK_DIR, and /var/lib, /var/cache and /var/log are overlays with a private tmpfs upper layer
# (root's gpulaunch records land there); the tools and the daemons read WORK_DIR/slurm.conf through SLURM_CONF, so the host's
# /etc/slurm is never read or written, and the packages' own services are never started. The
# network namespaces hold only loopbacks, the bridge and the nodes' veths, so the daemons' ports
# (SlurmctldPort 6817, slurmd 17001-17002), srun's and the engines' are private. The PID namespace's init is `unshare --fork`'s child: when
# it ends (also by CTest's SIGKILL) the kernel kills every daemon and job left inside.
#
# The configuration follows Debian's slurm-wlm 22.05.8 slurm.conf(5) (the installed man page):
# AuthType=auth/none and CredType=cred/none need no munge; ProctrackType=proctrack/pgid and
# TaskPlugin=task/none need no cgroup; SlurmdSpoolDir, SlurmdPidFile and SlurmdLogFile take "%n",
# the node's name, so the two slurmd keep separate files; each slurmd is started with -N NODE and
# listens on its node's Port. KillWait (30 s by default) is set per test with a KEY=VALUE.
#
# Cannot run here -> exit 77 (CTest's skip): not root, unshare of these namespaces refused, or the
# Debian packages absent (a missing package is a failure under CI=true: install-deps installs them).
set -euo pipefail

SELF=$(realpath "${BASH_SOURCE[0]}")
readonly SELF
readonly NODES=(node1 node2)
readonly BOOT_TIMEOUT=${GL_SLURM_BOOT_TIMEOUT:-60}

skip() {
  echo "SKIP: slurm: $*"
  exit 77
}

usage() {
  echo "usage: $0 enter WORK_DIR -- CMD.. | boot WORK_DIR [KEY=VALUE..] | stop WORK_DIR" >&2
  exit 2
}

cmd_enter() {
  local work=$1
  shift
  [[ ${1:-} == -- ]] || usage
  shift
  [[ $(id -u) -eq 0 ]] || skip "needs root (slurmd runs jobs as any user; SlurmUser=root)"
  local tool
  for tool in slurmctld slurmd sbatch srun scontrol sinfo squeue scancel sbcast; do
    if ! command -v "$tool" >/dev/null; then
      [[ ${CI:-} == true ]] && {
        echo "FAIL: $tool missing: run scripts/install-deps.sh (slurmctld slurmd slurm-client)" >&2
        exit 1
      }
      skip "$tool missing (Debian 12: slurmctld slurmd slurm-client)"
    fi
  done
  unshare --pid --mount --net --uts --fork --mount-proc true 2>/dev/null ||
    skip "unshare --pid --mount --net --uts is not permitted here"
  mkdir -p "$work"
  exec unshare --pid --mount --net --uts --fork --mount-proc --propagation private \
    bash "$SELF" _inside "$(realpath "$work")" "$@"
}

# In the new namespaces, before CMD: loopback, hostname, /etc/hosts.
cmd_inside() {
  local work=$1
  shift
  ip link set lo up
  # Slurm resolves its listening addresses with AI_ADDRCONFIG, which finds nothing where the only
  # interface is a loopback: every namespace here has an address on the bridge.
  ip link add gl-slurm type bridge
  ip addr add 10.47.0.254/24 dev gl-slurm
  ip link set gl-slurm up
  hostname slurmhead
  printf '127.0.0.1 localhost\n10.47.0.254 slurmhead\n10.47.0.1 node1\n10.47.0.2 node2\n' >"$work/hosts"
  mount --bind "$work/hosts" /etc/hosts
  # What root's gpulaunch writes outside WORK_DIR (/var/lib/gpulaunch: root's records and cache
  # stamps; /var/cache/gpulaunch) lands in overlays whose upper layer is a tmpfs of this namespace.
  mkdir -p "$work/overlay"
  mount -t tmpfs -o mode=0755 gl-slurm-overlay "$work/overlay"
  local dir name
  for dir in /var/lib /var/cache /var/log; do
    name=${dir//\//_}
    mkdir -p "$work/overlay/$name.upper" "$work/overlay/$name.work"
    mount -t overlay overlay \
      -o "lowerdir=$dir,upperdir=$work/overlay/$name.upper,workdir=$work/overlay/$name.work" "$dir"
  done
  exec "$@"
}

conf() { echo "$1/slurm.conf"; }

cmd_boot() {
  local work=$1
  shift
  export SLURM_CONF=$work/slurm.conf
  rm -rf "$work/ctld" "$work/spool" "$work/log"
  mkdir -p "$work/ctld" "$work/spool/node1" "$work/spool/node2" "$work/log"
  : >"$work/plugstack.conf"
  {
    cat <<CONF
# Written by tests/slurm/slurm-harness.sh for one test run.
ClusterName=gltest
SlurmctldHost=slurmhead(10.47.0.254)
SlurmctldPort=6817
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/linear
ReturnToService=2
MinJobAge=300
StateSaveLocation=$work/ctld
SlurmdSpoolDir=$work/spool/%n
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd-%n.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$work/plugstack.conf
CONF
    local line
    for line in "$@"; do echo "$line"; done
    cat <<CONF
NodeName=node1 NodeHostname=slurmhead NodeAddr=10.47.0.1 Port=17001 CPUs=1 RealMemory=100 State=UNKNOWN
NodeName=node2 NodeHostname=slurmhead NodeAddr=10.47.0.2 Port=17002 CPUs=1 RealMemory=100 State=UNKNOWN
PartitionName=test Nodes=node[1-2] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
  } >"$work/slurm.conf"
  slurmctld -i -f "$work/slurm.conf" >"$work/log/slurmctld.out" 2>&1
  local node index=0 pid
  for node in "${NODES[@]}"; do
    index=$((index + 1))
    # The node's own network namespace: its veth arrives from here, then slurmd starts (it
    # daemonizes; its PID file is WORK_DIR/slurmd-NODE.pid).
    unshare --net bash -c '
      while ! ip link show "$1" >/dev/null 2>&1; do sleep 0.02; done
      ip link set lo up && ip addr add "$2/24" dev "$1" && ip link set "$1" up &&
        exec slurmd -f "$3" -N "$4"' _ "gl-$node-in" "10.47.0.$index" "$work/slurm.conf" "$node" \
      >"$work/log/slurmd-$node.out" 2>&1 &
    pid=$!
    # The veth may only move once unshare(2) has made the node's namespace: moved before that,
    # "netns PID" names this namespace, the veth stays here, and the node waits for it forever
    # (a loaded CI machine hit it).
    local own
    own=$(readlink /proc/self/ns/net)
    while [[ $(readlink "/proc/$pid/ns/net" 2>/dev/null) == "$own" ]]; do sleep 0.01; done
    ip link add "gl-$node" type veth peer name "gl-$node-in"
    ip link set "gl-$node-in" netns "$pid"
    ip link set "gl-$node" master gl-slurm up
    wait "$pid" || {
      echo "FAIL: slurmd $node did not start" >&2
      cat "$work/log/slurmd-$node.out" >&2
      return 1
    }
  done
  local deadline=$((SECONDS + BOOT_TIMEOUT)) states
  while ((SECONDS < deadline)); do
    states=$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u | tr '\n' ' ')
    [[ $states == "node1 idle node2 idle " ]] && return 0
    sleep 0.2
  done
  echo "FAIL: slurm did not boot within ${BOOT_TIMEOUT}s (nodes: ${states:-none})" >&2
  tail -n 20 "$work"/log/*.log >&2 || true
  return 1
}

# Gone: no such process, or a zombie (its parent, this namespace's init, has yet to reap it).
gone() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  [[ ${stat##*) } == Z* ]]
}

cmd_stop() {
  local work=$1 file pid pids=()
  for file in "$work"/slurmd-node*.pid "$work/slurmctld.pid"; do
    [[ -f $file ]] || continue
    pid=$(cat "$file")
    kill "$pid" 2>/dev/null && pids+=("$pid")
    rm -f "$file"
  done
  # Waited out: slurmctld writes its state files as it stops, and a `boot` right after (the
  # prolog case boots again) would clear the directory under it.
  local deadline=$((SECONDS + 30)) left
  while :; do
    left=()
    for pid in "${pids[@]}"; do gone "$pid" || left+=("$pid"); done
    ((${#left[@]})) || return 0
    if ((SECONDS >= deadline)); then
      echo "slurm-harness: ${left[*]} still running 30 s after SIGTERM; SIGKILL" >&2
      kill -KILL "${left[@]}" 2>/dev/null
      sleep 0.5
      return 0
    fi
    sleep 0.05
  done
}

(($# >= 2)) || usage
case $1 in
  enter) shift; cmd_enter "$@" ;;
  _inside) shift; cmd_inside "$@" ;;
  boot) shift; cmd_boot "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  *) usage ;;
esac
