// SPDX-License-Identifier: Apache-2.0
#include "group/slurm_script.hpp"

#include <charconv>
#include <map>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "engines/engine_argv.hpp"
#include "group/remote.hpp"
#include "group/rendezvous_probe.hpp"
#include "plan/launch_plan.hpp"

namespace gl {

namespace {

// The script, with @KEY@ for what the profile decides. Facts it relies on (Debian 12's
// slurm-wlm 22.05.8): srun answers its own SIGTERM by sending SIGKILL to the tasks
// (src/srun/srun_job.c, _srun_signal_mgr: "forcing job termination"), so the batch shell never
// signals srun; `scancel --signal=TERM JOB` signals every step but not the batch shell (scancel(1),
// --batch); a plain `scancel` sends SIGCONT, then SIGTERM to every step and the batch shell, then
// SIGKILL after KillWait; `--signal=B:TERM@N` signals the batch shell alone, N s (or up to 60 s
// more) before the time limit (sbatch(1)); srun's exit status is the highest of its tasks'.
constexpr std::string_view kTemplate = R"SCRIPT(#!/bin/bash
# The Slurm batch job of gpulaunch profile @NAME@ (gpulaunch @VERSION@, `gpulaunch render --slurm`).
# Submit it with sbatch, adding what your site asks for (--time, --partition, --account). Every
# node of the allocation runs `gpulaunch run --foreground` in one srun step; `man gpulaunch`,
# "On a Slurm cluster", says what each exit code does to the job.
#SBATCH --job-name=gpulaunch-@NAME@
#SBATCH --nodes=@NODES@
#SBATCH --ntasks-per-node=1
@GPUS@#SBATCH --signal=B:TERM@@SIGNAL@
#SBATCH --requeue
#SBATCH --open-mode=append
set -uo pipefail

gpulaunch=@BINARY@
profile=@PROFILE@
# This job's ports: the profile's (server.port @SERVER_PORT@, rendezvous @RENDEZVOUS_PORT@) moved by
# (SLURM_JOB_ID mod @SLOTS@) * @STRIDE@, so that jobs sharing a node do not collide.
port_offset=$(((SLURM_JOB_ID % @SLOTS@) * @STRIDE@))
server_port=$((@SERVER_PORT@ + port_offset))
rendezvous_port=$((@RENDEZVOUS_PORT@ + port_offset))
health_path=@HEALTH_PATH@
model_json=@MODEL_JSON@
# An exit 75 starts the step again in this allocation up to @MAX_STEPS@ times in all (restart.budget
# + 1: the start gate sleeps the backoff and counts the budget), then the job requeues itself up
# to @MAX_REQUEUES@ times (a new allocation may avoid a bad node; its first step forgives the
# failures, as a new submission's does).
max_steps=@MAX_STEPS@
max_requeues=@MAX_REQUEUES@
cache_archive=@CACHE_ARCHIVE@
head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
endpoints=${GPULAUNCH_ENDPOINTS:-${SLURM_SUBMIT_DIR:-$PWD}/gpulaunch-$profile-$SLURM_JOB_ID.endpoints.json}

# One rank, on its own node: this job's ports and rendezvous as a drop-in of the profile, read
# from ./profiles (the first directory of gpulaunch's search path), the caches seeded, then the
# supervision. The step's SIGTERM reaches every process of the task; the shell waits it out.
rank_step() {
  local gpulaunch=$1 profile=$2 head=$3 server_port=$4 rendezvous_port=$5 archive=$6 first=$7
  local dir pid rc stop=0
  # The step's SIGTERM (a scancel, or srun ending this rank because another exited non-zero) may
  # come before the supervision has started: this rank then ends 0, so that the step's status
  # (srun's: the highest of its tasks') stays the status of the rank that failed.
  trap 'stop=1' TERM INT
  dir=$(umask 077 && mktemp -d "${TMPDIR:-/tmp}/gpulaunch-slurm-$SLURM_JOB_ID.XXXXXX") || exit 70
  mkdir -p "$dir/profiles/$profile.toml.d" || exit 70
  {
    echo "# gpulaunch render --slurm: job $SLURM_JOB_ID's ports and rendezvous"
    echo "[server]"
    echo "port = $server_port"
    if ((SLURM_JOB_NUM_NODES > 1)); then
      echo "[parallelism]"
      echo "dist_init_addr = \"$head:$rendezvous_port\""
    fi
  } >"$dir/profiles/$profile.toml.d/90-slurm-job.toml" || exit 70
  cd "$dir" || exit 70
  # The node's copy seeds caches that are not current at the start (run --foreground imports it
  # under its own records), once per allocation: the copy is gone when a step starts again.
  local options=()
  [[ -n $archive && -f $archive ]] && options=(--cache-archive "$archive")
  # A job's first step (a submission, or a requeue onto a new allocation) is the operator's word,
  # as `up` is: an earlier run's crash-loop failures are forgiven; the step-down levels stay.
  ((first)) && options+=(--reset-crash-loop)
  if ((stop)); then
    cd / && rm -rf "$dir"
    [[ -n $archive ]] && rm -f "$archive"
    exit 0
  fi
  "$gpulaunch" run --foreground "$profile" --node-rank "$SLURM_NODEID" "${options[@]}" &
  pid=$!
  while :; do
    wait "$pid"
    rc=$?
    kill -0 "$pid" 2>/dev/null || break
  done
  cd / && rm -rf "$dir"
  [[ -n $archive ]] && rm -f "$archive"
  # Ended by the stop signal itself, before it could take it: told to stop, not failed.
  ((stop && rc == 143)) && rc=0
  exit "$rc"
}

# Rank 0 serves the group's HTTP endpoint; the endpoints file appears once it answers health 200.
health_ok() {
  local reply=""
  { exec 3<>"/dev/tcp/$head/$server_port"; } 2>/dev/null || return 1
  printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$health_path" "$head" >&3
  IFS= read -r -t 5 reply <&3
  exec 3<&-
  [[ $reply == HTTP/1.?" 200"* ]]
}

write_endpoints() {
  printf '[{"rank": 0, "host": "%s", "port": %d, "model": %s}]\n' "$head" "$server_port" \
    "$model_json" >"$endpoints.$$" && mv -f "$endpoints.$$" "$endpoints"
}

stopping=0
step=""
on_term() {
  stopping=1
  rm -f "$endpoints"
  # A plain scancel has signalled the steps already (the job is no longer RUNNING); the time
  # limit's --signal=B:TERM reached this shell alone. Never signal srun: it would SIGKILL.
  if [[ $(squeue -h -j "$SLURM_JOB_ID" -o %T 2>/dev/null) == RUNNING ]]; then
    scancel --signal=TERM "$SLURM_JOB_ID"
  fi
}
trap on_term TERM INT

local_archive=""
if [[ -n $cache_archive ]]; then
  local_archive=${GPULAUNCH_NODE_TMP:-${TMPDIR:-/tmp}}/gpulaunch-$profile-$SLURM_JOB_ID.cache.tar.zst
  sbcast --force "$cache_archive" "$local_archive" ||
    echo "gpulaunch-slurm: sbcast of $cache_archive failed; the engines compile their own caches" >&2
fi

steps=0
while :; do
  steps=$((steps + 1))
  srun --kill-on-bad-exit=1 --ntasks-per-node=1 --nodes="$SLURM_JOB_NUM_NODES" \
    bash -c "$(declare -f rank_step); rank_step \"\$@\"" rank_step \
    "$gpulaunch" "$profile" "$head" "$server_port" "$rendezvous_port" "$local_archive" \
    "$((steps == 1))" &
  step=$!
  ready=0
  while kill -0 "$step" 2>/dev/null && ((!ready && !stopping)); do
    if health_ok; then
      write_endpoints
      ready=1
    else
      sleep 0.25
    fi
  done
  while :; do
    wait "$step"
    rc=$?
    kill -0 "$step" 2>/dev/null || break
  done
  rm -f "$endpoints"
  if ((stopping)) || ((rc != @RETRY@)); then
    ((rc == @REFUSED@)) && echo "gpulaunch-slurm: refused (exit @REFUSED@: usage, configuration or check); not requeued" >&2
    exit "$rc"
  fi
  if ((steps < max_steps)); then
    echo "gpulaunch-slurm: the group stopped (exit @RETRY@); starting it again in this allocation ($steps of $max_steps)" >&2
    continue
  fi
  if ((${SLURM_RESTART_COUNT:-0} < max_requeues)); then
    echo "gpulaunch-slurm: $steps steps ended with @RETRY@; requeueing job $SLURM_JOB_ID" >&2
    scontrol requeue "$SLURM_JOB_ID"
  fi
  exit "$rc"
done
)SCRIPT";

// One pass, so a value that happens to contain "@KEY@" stays as it is.
std::string fill(std::string_view text, const std::map<std::string_view, std::string>& values) {
  std::string out;
  out.reserve(text.size() + 1024);
  for (size_t at = 0; at < text.size();) {
    bool replaced = false;
    if (text[at] == '@')
      for (const auto& [key, value] : values)
        if (text.substr(at).starts_with(key)) {
          out += value;
          at += key.size();
          replaced = true;
          break;
        }
    if (!replaced) out += text[at++];
  }
  return out;
}

}  // namespace

Result<std::string> render_slurm_script(const Profile& profile, const SlurmScriptOptions& options) {
  const long long nodes = profile.parallelism.nodes;
  long long rendezvous_port = profile.nodes.dist_init_port;
  if (auto rendezvous = group_rendezvous(profile)) rendezvous_port = rendezvous->port;
  for (auto [key, port] : {std::pair{"server.port", profile.server.port},
                           std::pair{"the rendezvous port", rendezvous_port}})
    if (port + kSlurmPortSpan > 65535)
      return failf(
          "{} {} leaves no room for a Slurm job's port offset (up to +{}): choose one below {}",
          key, port, kSlurmPortSpan, 65535 - kSlurmPortSpan + 1);

  LaunchOptions launch{0, std::nullopt};
  const LaunchPlan plan = make_launch_plan(profile, launch);
  const auto drain = std::chrono::duration_cast<std::chrono::seconds>(profile.server.drain_timeout);

  std::map<std::string_view, std::string> values{
      {"@NAME@", profile.name},
      {"@VERSION@", options.version},
      {"@NODES@", std::to_string(nodes)},
      {"@GPUS@", options.gres && profile.gpus.available() > 0
                     ? fmt::format("#SBATCH --gpus-per-node={}\n", profile.gpus.available())
                     : std::string()},
      {"@SIGNAL@", std::to_string((drain + kSlurmSignalMargin).count())},
      {"@BINARY@", shell_quote(options.gpulaunch_binary)},
      {"@PROFILE@", shell_quote(profile.name)},
      {"@SERVER_PORT@", std::to_string(profile.server.port)},
      {"@RENDEZVOUS_PORT@", std::to_string(rendezvous_port)},
      {"@SLOTS@", std::to_string(kSlurmPortSlots)},
      {"@STRIDE@", std::to_string(kSlurmPortStride)},
      {"@HEALTH_PATH@", shell_quote(profile.server.health_path)},
      {"@MODEL_JSON@", shell_quote(nlohmann::json(served_model_name(profile, plan)).dump())},
      {"@MAX_STEPS@", std::to_string(profile.restart.budget + 1)},
      {"@MAX_REQUEUES@", std::to_string(kSlurmMaxRequeues)},
      {"@CACHE_ARCHIVE@", shell_quote(options.cache_archive.value_or(""))},
      {"@RETRY@", std::to_string(kForegroundRetry)},
      {"@REFUSED@", std::to_string(kForegroundRefused)},
  };
  return fill(kTemplate, values);
}

std::optional<std::chrono::seconds> parse_kill_wait(std::string_view show_config) {
  size_t at = 0;
  while (at < show_config.size()) {
    const size_t end = std::min(show_config.find('\n', at), show_config.size());
    std::string_view line = show_config.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with("KillWait")) continue;
    const size_t equals = line.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    std::string_view value = line.substr(equals + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    long long seconds = 0;
    const auto [rest, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (error != std::errc() || rest == value.data() || seconds < 0) return std::nullopt;
    const std::string_view unit(rest, static_cast<size_t>(value.data() + value.size() - rest));
    if (unit != " sec" && !unit.empty()) return std::nullopt;
    return std::chrono::seconds(seconds);
  }
  return std::nullopt;
}

std::optional<std::string> kill_wait_warning(const Profile& profile,
                                             std::chrono::seconds kill_wait) {
  const auto drain = std::chrono::duration_cast<std::chrono::seconds>(profile.server.drain_timeout);
  if (kill_wait >= drain) return std::nullopt;
  return fmt::format(
      "warning: the cluster's KillWait ({} s) is shorter than server.drain_timeout ({} s): a "
      "scancel SIGKILLs the engines {} s into their drain; ask the administrators for KillWait "
      ">= {} or lower server.drain_timeout",
      kill_wait.count(), drain.count(), kill_wait.count(), drain.count());
}

}  // namespace gl
