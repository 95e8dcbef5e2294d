#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <fmt/core.h>

#include "cli/context.hpp"
#include "cli/supervise.hpp"
#include "facts/gpu_probe.hpp"
#include "plan/gpu_assignment.hpp"
#include "profile/validate.hpp"
#include "run/bridge.hpp"
#include "supervise/exit_status.hpp"
#include "supervise/history.hpp"
#include "supervise/policy.hpp"
#include "supervise/step_down.hpp"
#include "util/duration.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"

namespace gl {
namespace {

// How long a start waits for other processes to release the GPUs' memory.
constexpr std::chrono::seconds kResidueWait{60};

void say(const std::string& line) {
  fmt::print("gpulaunch: {}\n", line);
  std::fflush(stdout);
}

// GPUs this unit may use, as NVML indices from the assignment the unit pins; empty means all
// (unset, or UUIDs we do not map here).
std::vector<int> assigned_gpus() {
  const char* visible = std::getenv(std::string(kVisibleDevicesVariable).c_str());
  return visible ? visible_device_indices(visible) : std::vector<int>{};
}

std::string process_name(unsigned pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name.empty() ? "?" : name;
}

// Leftover workers of an earlier engine (or anyone else) still holding memory on our GPUs make
// the next start run out of memory: report them and wait, bounded, for them to let go.
bool wait_for_gpu_residue(Notifier& notifier, std::chrono::seconds limit) {
  const auto gpus = assigned_gpus();
  const auto deadline = std::chrono::steady_clock::now() + limit;
  bool reported = false;
  for (;;) {
    auto processes = nvml_compute_processes(gpus);
    if (!processes) return true;  // no NVML here: nothing to check
    std::erase_if(*processes, [](const GpuProcessUse& use) {
      return use.pid == static_cast<unsigned>(::getpid());
    });
    if (processes->empty()) {
      if (reported) say("GPU memory released; starting the engine");
      return true;
    }
    if (!reported) {
      for (const auto& use : *processes)
        say(fmt::format("GPU residue: pid {} ({}) holds {} MiB on GPU {}", use.pid,
                        process_name(use.pid), use.used_mib, use.gpu));
      notifier.notify(fmt::format("STATUS=waiting for {} process(es) to release GPU memory",
                                  processes->size()));
      notifier.notify(fmt::format("EXTEND_TIMEOUT_USEC={}", (limit.count() + 120) * 1'000'000LL));
      reported = true;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      say(fmt::format("GPU memory still held after {}s; not starting into an OOM", limit.count()));
      return false;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

// Why root's prepare-caches refused this start, if it did (the ExecStartPre=- status is ignored
// by systemd, so that the refusal is this process's exit status, which is not restarted).
std::optional<std::string> caches_refused(const std::string& name) {
  auto marker = read_regular_nofollow(state_paths::caches_refused_marker(name), 64 * 1024);
  if (!marker) return marker.error().message;  // a link or FIFO there: not root's doing either
  if (!*marker) return std::nullopt;
  std::string why = (*marker)->content;
  while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
  return why.empty() ? "prepare-caches refused the start" : why;
}

// The supervisor's part of a start: stay down after a crash loop, back off after failures,
// step the memory knobs down after OOMs. Returns an exit code when the engine must not start.
std::optional<int> supervise_start(const std::string& name, const std::string& snapshot,
                                   long long ready_timeout, Notifier& notifier,
                                   std::vector<std::string>& argv, BridgeOptions& options) {
  const SupervisedProfile supervised = load_supervised(name, snapshot);
  if (!supervised.loaded) return std::nullopt;  // no snapshot: systemd's own restart only
  // Only root writes the history (record-exit); the service user reads it and, where it cannot
  // trust it, decides conservatively.
  const History history(name);
  auto unrecorded = history.unrecorded();
  auto state = history.state();
  StartDecision decision;
  if (!unrecorded || *unrecorded || !state) {
    std::optional<std::string> why;
    if (!unrecorded)
      why = unrecorded.error().message;
    else
      why = *unrecorded;
    decision =
        decide_start_without_history(why, state ? "" : state.error().message, supervised.restart);
    state = SupervisorState{};  // the profile's own settings: no step-down it cannot read
  } else {
    decision = decide_start(*state, supervised.restart);
  }
  if (decision.stay_down) {
    say(
        fmt::format("{}; staying down. Fix the cause (`gpulaunch events {}`), then "
                    "`gpulaunch restart {}` to try again",
                    decision.reason, name, name));
    notifier.notify(
        fmt::format("STATUS={}; gpulaunch restart {} to try again", decision.reason, name));
    return kExitCrashLoop;
  }
  if (decision.delay.count() > 0) {
    say(decision.reason);
    notifier.notify("STATUS=" + decision.reason);
    // The start job's timeout keeps running while we wait: push it past wait + load.
    const long long extend = (decision.delay.count() + ready_timeout + 60) * 1'000'000LL;
    notifier.notify(fmt::format("EXTEND_TIMEOUT_USEC={}", extend));
    std::this_thread::sleep_for(decision.delay);
  }
  if (!wait_for_gpu_residue(notifier, kResidueWait)) return kExitGpuResidue;
  if (supervised.restart.step_down && (state->gpu_level > 0 || state->host_level > 0)) {
    auto stepped = step_down(argv, supervised.kind, state->gpu_level, state->host_level);
    for (const auto& change : stepped.changes)
      say(fmt::format("step-down (GPU memory level {}, concurrency level {}): {}", state->gpu_level,
                      state->host_level, change));
    argv = std::move(stepped.argv);
  }
  options.stable_after =
      std::chrono::duration_cast<std::chrono::seconds>(supervised.restart.stable_after);
  // Forgiveness is root's, at the stop (record-exit reads how long this served from systemd).
  options.on_stable = [settings = supervised.restart, state = *state]() -> std::string {
    if (state.consecutive_failures == 0 && state.gpu_level == 0 && state.host_level == 0) return {};
    return fmt::format("served for restart.stable_after ({}): forgiven at the next stop",
                       format_duration(settings.stable_after));
  };
  return std::nullopt;
}

}  // namespace

void add_run_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "run", "The service's main process (ExecStart=): start the engine, report readiness");
  command->group("");  // units call it; people use `up`
  static std::string profile, engine, health_url, snapshot;
  static long long ready_timeout = 1200;
  static long long progress_grace = 0;
  static std::vector<std::string> argv;
  command->add_option("--profile", profile, "Profile this engine belongs to")
      ->required()
      ->check(profile_name_check());
  command->add_option("--engine", engine, "Engine kind");
  command->add_option("--snapshot", snapshot, "The merged profile `up` wrote");
  command->add_option("--health-url", health_url, "URL answering 200 once serving")->required();
  command->add_option("--ready-timeout", ready_timeout, "Seconds to wait for health 200")
      ->check(CLI::Range(1LL, 86400LL));
  command
      ->add_option("--progress-grace", progress_grace,
                   "Seconds by which loading progress pushes the ready deadline back "
                   "(default: the ready timeout, at most 300)")
      ->check(CLI::Range(1LL, 86400LL));
  command->add_option("engine_argv", argv, "The engine's command line, after --")->required();
  command->callback([&context] {
    BridgeOptions options;
    options.health_url = health_url;
    options.readiness.ready_timeout = Seconds{ready_timeout};
    options.readiness.progress_grace =
        Seconds{progress_grace > 0 ? progress_grace : std::min(300LL, ready_timeout)};
    auto notifier = systemd_notifier();
    if (auto refused = caches_refused(profile)) {
      say(fmt::format("{}; not starting (a configuration error: fix it, then `gpulaunch up {}`)",
                      *refused, profile));
      notifier->notify("STATUS=" + *refused);
      context.exit_code = kExitConfig;
      return;
    }
    if (auto stop = supervise_start(profile, snapshot, ready_timeout, *notifier, argv, options)) {
      context.exit_code = *stop;
      return;
    }
    // The JIT caches were prepared by root before this (ExecStartPre=+ prepare-caches).
    options.argv = argv;
    // Output goes to the journal through stdout; flush per line so lines keep their order.
    std::function<void(std::string_view)> print = [](std::string_view line) {
      fmt::print("{}\n", line);
      std::fflush(stdout);
    };
    context.exit_code = run_bridge(options, *notifier, print);
  });
}

}  // namespace gl
