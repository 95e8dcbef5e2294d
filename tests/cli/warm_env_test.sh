#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `gpulaunch env` and `gpulaunch warm` as users meet them: the exports a POSIX shell sources back
# to the exact values the unit sets (quotes, spaces, $, newlines), no secret's value, and the
# page cache filled from a model directory.
set -uo pipefail
gpulaunch=$1
src=$2
failures=0
check() {  # description, then a command that must succeed
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi
}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gl-warm-env-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
mkdir -p profiles

# --- warm --compile: refused by name where the engine has no precompile step ---
cat >profiles/vl.toml <<TOML
[engine]
kind = "vllm"
venv = "/opt/venvs/vllm"
[model]
path = "/models/m"
TOML
"$gpulaunch" warm --compile vl >compile.txt 2>&1
check "warm --compile of a vLLM profile exits 125" test $? -eq 125
check "warm --compile names why vLLM has no step and what to do instead" \
  grep -q "^Profile 'vl' has no precompile step (vllm): vLLM fills its torch.compile and CUDA graph caches (VLLM_CACHE_ROOT) during a start.*cache export" compile.txt

# --- env ---
echo "s3cret-token-value" >hf_token
cat >profiles/odd.toml <<TOML
[engine]
kind = "sglang"
venv = "/opt/venvs/sglang"
[model]
path = "/models/m"
[toolkit]
cuda_home = "/usr/local/cuda-13.0"
[env]
ODD = "it's \"quoted\" \$HOME \`date\` \\\\ a b\nsecond line"
[secrets]
HF_TOKEN = "$scratch/hf_token"
TOML
"$gpulaunch" env odd >env.sh 2>stderr.txt
check "env exits 0" test $? -eq 0
check "env prints nothing on stderr" test ! -s stderr.txt
check "env exports CUDA_HOME as the unit pins it" grep -qx "export CUDA_HOME=/usr/local/cuda-13.0" env.sh
check "env never prints a secret's value" bash -c '! grep -q s3cret env.sh'
check "env names the secret's path in the credentials directory" \
  grep -qx "export HF_TOKEN_PATH=/run/credentials/gpulaunch-odd.service/HF_TOKEN" env.sh
# Sourced by a POSIX shell (dash where it is /bin/sh), each value comes back byte for byte.
expected=$(printf "it's \"quoted\" \$HOME \`date\` \\\\ a b\nsecond line")
got=$(env -i /bin/sh -c '. ./env.sh && printf %s "$ODD"')
check "sh sources ODD back to the exact value" test "$got" = "$expected"
# Every Environment= of the unit comes back the same from the sourced exports.
"$gpulaunch" render odd >unit.service
while IFS= read -r line; do
  name=${line#Environment=\"}; name=${name%%=*}
  [[ $name == HF_TOKEN_PATH || $name == ODD ]] && continue
  value=${line#Environment=\"$name=}; value=${value%\"}
  got=$(env -i /bin/sh -c ". ./env.sh && printf %s \"\$$name\"")
  check "sh sources $name as the unit sets it" test "$got" = "$value"
done < <(grep '^Environment=' unit.service)
check "env and the unit have as many variables" \
  test "$(grep -c '^export ' env.sh)" -eq "$(grep -c '^Environment=' unit.service)"

# --- warm ---
model=$scratch/model
mkdir -p "$model"
for i in 1 2 3; do head -c $((3 << 20)) /dev/urandom >"$model/model-0000$i-of-00003.safetensors"; done
echo '{}' >"$model/config.json"
cat >profiles/local.toml <<TOML
[engine]
kind = "sglang"
venv = "/opt/venvs/sglang"
[model]
path = "$model"
TOML
# Out of the page cache first (fincore shows what stays; a filesystem that keeps everything in
# memory, such as tmpfs, cannot be tested here).
sync
for f in "$model"/*.safetensors; do dd if="$f" iflag=nocache count=0 status=none; done
if [[ $(fincore --noheadings --bytes --output RES "$model"/*.safetensors | awk '{s+=$1} END {print s+0}') -eq 0 ]]; then
  "$gpulaunch" warm local >warm.txt 2>warm.err
  check "warm exits 0" test $? -eq 0
  check "warm reads the three shards" grep -q "^$model: read 3 of 3 file(s) (9.0 MiB)" warm.txt
  # What warm read is in the page cache; how much of it stays is the kernel's: these VMs run
  # DAMON's proactive reclaim (kdamond, action pageout by sampled region age), which evicted a
  # few of the fresh pages before fincore looked in one CI run. Warm's own count above is exact.
  check "warm left the shards in the page cache" \
    test "$(fincore --noheadings --bytes --output RES "$model"/*.safetensors | awk '{s+=$1} END {print s}')" -gt 0
  check "warm reports progress on stderr" grep -q "warm: 9.0 MiB of 9.0 MiB, 3/3 file(s)" warm.err
else
  echo "skip warm's first read: this filesystem keeps the files in memory"
fi
# Pages read once sit on the kernel's inactive list: a machine busy writing elsewhere may evict
# some between two warms, and warm then rightly reads them again. A warm right after a warm that
# left them all resident reads nothing; three tries tell that from a warm that never skips.
for _ in 1 2 3; do
  "$gpulaunch" warm local >warm.txt 2>warm.err
  grep -q "read 0 of 0 file(s) (0 B) .*; 3 file(s) already in the page cache" warm.txt && break
done
check "a second warm reads nothing" grep -q "read 0 of 0 file(s) (0 B) .*; 3 file(s) already in the page cache" warm.txt

cat >profiles/remote.toml <<TOML
[engine]
kind = "sglang"
venv = "/opt/venvs/sglang"
[model]
path = "org/not-here"
[env]
HF_HOME = "$scratch/hf"
TOML
"$gpulaunch" warm remote >stdout.txt 2>stderr.txt
check "warm of a hub id not downloaded exits 1" test $? -eq 1
check "it prints nothing on stdout" test ! -s stdout.txt
check "it says what to run, in one line" grep -qx "Model 'org/not-here' is not downloaded yet: '$scratch/hf/hub/models--org--not-here' has no snapshot of revision 'main'. Download it first as the service user: HF_HUB_CACHE='$scratch/hf/hub' hf download org/not-here --revision main" stderr.txt
check "that is the only line" test "$(wc -l <stderr.txt)" -eq 1

exit $((failures > 0))
