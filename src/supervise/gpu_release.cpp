// SPDX-License-Identifier: Apache-2.0
#include "supervise/gpu_release.hpp"

#include <algorithm>
#include <csignal>
#include <set>

#include <fmt/core.h>

namespace gl {
namespace {

struct Target {
  unsigned pid = 0;
  unsigned long long start = 0;
  std::string label;
};

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : "; ") + item;
  return text;
}

// Sleeps one poll, never past the deadline; false once the deadline has passed.
bool wait_a_poll(Timekeeper& clock, std::chrono::steady_clock::time_point deadline,
                 std::chrono::milliseconds poll) {
  const auto now = clock.steady_now();
  if (now >= deadline) return false;
  clock.sleep(std::min(poll, std::chrono::ceil<std::chrono::milliseconds>(deadline - now)));
  return true;
}

}  // namespace

std::optional<std::string> not_the_jobs(const HolderProcess& process,
                                        const GpuReleaseInput& input) {
  if (process.uid == 0) return std::string("root's");
  if (process.uid != input.uid)
    return fmt::format("uid {}'s, not the job's user (uid {})", process.uid, input.uid);
  if (process.job && *process.job != input.job) return fmt::format("job {}'s", *process.job);
  if (!process.job && !input.gpus_known)
    return std::string("it names no Slurm job, and the job's GPUs are unknown");
  return std::nullopt;
}

GpuRelease release_job_gpus(const GpuReleaseInput& input, GpuReleaseIo& io) {
  GpuRelease out;
  auto listed = io.holders();
  if (!listed) {
    out.exit_code = kReleaseCouldNotRun;
    out.problem = "gpu-holders-unknown: " + listed.error().message;
    return out;
  }
  std::vector<Target> targets;
  std::set<unsigned> seen;
  for (const auto& use : *listed) {
    if (use.pid == input.own_pid || !seen.insert(use.pid).second) continue;
    auto process = io.inspect(use.pid);
    if (!process) continue;
    std::string label =
        fmt::format("pid {} ({}) on GPU {}, {} MiB", use.pid, process->name, use.gpu, use.used_mib);
    if (auto why = not_the_jobs(*process, input)) {
      io.say("left alone: " + label + ": " + *why);
      out.left_alone.push_back(label + ": " + *why);
      continue;
    }
    targets.push_back({use.pid, process->start, std::move(label)});
  }
  if (targets.empty()) return out;
  for (const auto& target : targets)
    if (io.send(target.pid, target.start, SIGTERM)) {
      io.say("SIGTERM " + target.label);
      out.ended.push_back(target.label);
    }
  auto alive = [&](const Target& target) {
    auto process = io.inspect(target.pid);
    return process && process->start == target.start;
  };
  const auto grace_end = io.clock.steady_now() + input.grace;
  std::vector<const Target*> remaining;
  do {
    remaining.clear();
    for (const auto& target : targets)
      if (alive(target)) remaining.push_back(&target);
  } while (!remaining.empty() && wait_a_poll(io.clock, grace_end, input.poll));
  for (const auto* target : remaining)
    if (io.send(target->pid, target->start, SIGKILL))
      io.say(fmt::format("SIGKILL {} (still there {} ms after SIGTERM)", target->label,
                         input.grace.count()));
  // The driver frees a process's memory once its last handle to the GPU closes: wait until NVML
  // lists none of them.
  const auto wait_end = io.clock.steady_now() + input.wait;
  std::vector<std::string> held;
  do {
    held.clear();
    auto now = io.holders();
    if (!now) {
      held.push_back("NVML: " + now.error().message);
      continue;
    }
    for (const auto& target : targets)
      if (std::ranges::any_of(*now,
                              [&](const GpuProcessUse& use) { return use.pid == target.pid; }))
        held.push_back(target.label);
  } while (!held.empty() && wait_a_poll(io.clock, wait_end, input.poll));
  if (held.empty()) {
    io.say(fmt::format("the GPU memory of {} process(es) of job {} is released", targets.size(),
                       input.job));
    return out;
  }
  out.exit_code = kReleaseMemoryHeld;
  out.problem = fmt::format(
      "gpu-memory-held: job {}'s processes ended, their GPU memory still held {} ms later: {}",
      input.job, input.wait.count(), joined(held));
  io.say(out.problem);
  return out;
}

}  // namespace gl
