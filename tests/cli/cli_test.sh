#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The command line as users meet it: listing, rendering, and bad input giving one located line on
# stderr and a non-zero exit, from any working directory.
set -uo pipefail
gpulaunch=$1
src=$2
failures=0
check() {  # description, then a command that must succeed
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi
}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"

# From a directory without ./profiles, -P finds the examples.
out=$("$gpulaunch" -P "$src/profiles" list)
check "list names k26-ar, its engine, port and file" grep -qE "^k26-ar +sglang +30000 +[-a-z]+ +$src/profiles/k26-ar.toml$" <<<"$out"

unit=$("$gpulaunch" -P "$src/profiles" render k26-ar --offline)
check "render pins CUDA_HOME to the 13.0 toolkit" grep -qx 'Environment="CUDA_HOME=/usr/local/cuda-13.0"' <<<"$unit"
check "render puts the 13.0 toolkit first on PATH" grep -q '^Environment="PATH=/usr/local/cuda-13.0/bin:' <<<"$unit"
check "render names this binary in ExecStart" grep -q "^ExecStart=\"$gpulaunch\" \"run\"" <<<"$unit"
check "render without --infiniband sets no memlock limit" bash -c '! grep -q "^LimitMEMLOCK=" <<<"$1"' _ "$unit"
ib_unit=$("$gpulaunch" -P "$src/profiles" render k26-ar --offline --infiniband)
check "render --infiniband lifts the memlock limit" grep -qx 'LimitMEMLOCK=infinity' <<<"$ib_unit"
check "render --infiniband allows the verbs devices" grep -qx 'DeviceAllow=char-infiniband_verbs rw' <<<"$ib_unit"
# issue 26: the device unit, pidfd_getfd, the node's optional devices and MPS daemon.
check "render waits for the NVIDIA device nodes" grep -qx 'Requires=gpulaunch-nvidia-devices.service' <<<"$unit"
check "render allows pidfd_getfd" grep -qx 'SystemCallFilter=pidfd_getfd' <<<"$unit"
node_unit=$("$gpulaunch" -P "$src/profiles" render k26-ar --offline --device gdrdrv --mps)
check "render --device gdrdrv allows it" grep -qx 'DeviceAllow=/dev/gdrdrv rw' <<<"$node_unit"
check "render --mps binds the MPS pipe directory" grep -qx 'BindPaths="/tmp/nvidia-mps"' <<<"$node_unit"
check "render --device takes only catalogued devices" bash -c '! "$1" -P "$2/profiles" render k26-ar --device nvidia-fs 2>/dev/null' _ "$gpulaunch" "$src"
# A fresh boot's node under --root: what the device unit would run.
mkdir -p node/proc/driver/nvidia/gpus/0000:18:00.0 node/dev
echo "NVRM version: 580" >node/proc/driver/nvidia/version
printf 'Device Minor: \t 0\n' >node/proc/driver/nvidia/gpus/0000:18:00.0/information
echo "195 nvidia" >node/proc/devices
devices_out=$("$gpulaunch" nvidia-devices --root "$scratch/node")
check "nvidia-devices under --root says what a boot runs" test "$devices_out" = "gpulaunch: would run /usr/bin/nvidia-modprobe -c 255 -c 0
gpulaunch: would run /usr/bin/nvidia-modprobe -u -c 0"

mkdir -p profiles
cp "$src/tests/malformed/tp-zero.toml" profiles/
"$gpulaunch" render tp-zero >stdout.txt 2>stderr.txt
status=$?
check "a bad profile exits non-zero" test "$status" -ne 0
check "a bad profile prints nothing on stdout" test ! -s stdout.txt
check "a bad profile prints exactly one line" test "$(wc -l <stderr.txt)" -eq 1
check "the line names file, line and column" grep -qx "$scratch/profiles/tp-zero.toml:8:6: 'parallelism.tp' must be between 1 and 1024, got 0" stderr.txt

# -q keeps errors (the same line, word for word); -v and -q together are refused.
"$gpulaunch" -q render tp-zero >/dev/null 2>stderr.txt
check "-q still prints the error line" grep -qx "$scratch/profiles/tp-zero.toml:8:6: 'parallelism.tp' must be between 1 and 1024, got 0" stderr.txt
"$gpulaunch" -v -q list >/dev/null 2>stderr.txt
check "-v with -q is refused" test $? -ne 0
JOURNAL_STREAM=1:1 "$gpulaunch" render tp-zero >/dev/null 2>stderr.txt
check "a JOURNAL_STREAM naming another file leaves errors on stderr" test "$(wc -l <stderr.txt)" -eq 1

"$gpulaunch" render no-such >/dev/null 2>stderr.txt
check "an unknown profile exits non-zero" test $? -ne 0
check "an unknown profile is named" grep -q "profile 'no-such' not found" stderr.txt

show=$("$gpulaunch" -P "$src/profiles" show k26-eagle3)
check "show lists both source files" grep -q "#   $src/profiles/k26-ar.toml" <<<"$show"
check "show has the child's override" grep -q "port = 30001" <<<"$show"
check "show prints a float as written" grep -qx "mem_fraction = 0.85" <<<"$show"

# metrics: a profile on the search path that was never installed is down, with no stops; --write
# needs the textfile directory (node_exporter's) and writes gpulaunch_NAME.prom there whole.
cp "$src/profiles/demo.toml" profiles/cli-metrics-none.toml
metrics=$("$gpulaunch" metrics cli-metrics-none 2>/dev/null)
check "metrics prints the profile down" grep -qx 'gpulaunch_up{profile="cli-metrics-none"} 0' <<<"$metrics"
check "metrics counts stops by class" grep -qx 'gpulaunch_stops_total{profile="cli-metrics-none",class="cuda-oom"} 0' <<<"$metrics"
check "metrics names each family's type once" test "$(grep -c '^# TYPE gpulaunch_stops_total counter$' <<<"$metrics")" -eq 1
"$gpulaunch" metrics 'bad/name' >/dev/null 2>stderr.txt
check "metrics refuses a bad profile name (exit 2)" test $? -eq 2
"$gpulaunch" metrics cli-metrics-nome >/dev/null 2>stderr.txt
check "metrics refuses a typo (exit 2)" test $? -eq 2
check "metrics names the closest profile" grep -q "(did you mean 'cli-metrics-none'?)" stderr.txt
if [[ $(id -u) -eq 0 ]]; then
  "$gpulaunch" metrics cli-metrics-none --write --textfile-directory "$scratch/no-exporter" 2>stderr.txt
  check "metrics --write without node_exporter's directory succeeds" test $? -eq 0
  check "metrics --write says it wrote nothing" grep -q "does not exist (node_exporter is not installed)" stderr.txt
  mkdir -m 0755 "$scratch/exporter"
  "$gpulaunch" metrics cli-metrics-none --write --textfile-directory "$scratch/exporter" 2>/dev/null
  check "metrics --write writes gpulaunch_NAME.prom" cmp -s <(printf '%s\n' "$metrics") "$scratch/exporter/gpulaunch_cli-metrics-none.prom"
  mkdir -m 0777 "$scratch/open"
  "$gpulaunch" metrics cli-metrics-none --write --textfile-directory "$scratch/open" 2>stderr.txt
  check "metrics --write refuses a world-writable directory" test $? -eq 1
  check "the refusal says why" grep -q "Refusing to write metrics into '$scratch/open'" stderr.txt
fi

version=$("$gpulaunch" --version)
check "--version names gpulaunch" grep -qE '^gpulaunch [0-9]' <<<"$version"

exit $((failures > 0))
