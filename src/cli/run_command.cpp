// SPDX-License-Identifier: Apache-2.0
#include <unistd.h>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/core.h>

#include "catalog/journal_messages.hpp"
#include "cli/context.hpp"
#include "cli/exit_status.hpp"
#include "cli/run_foreground.hpp"
#include "cli/supervise.hpp"
#include "facts/gpu_probe.hpp"
#include "log/logger.hpp"
#include "plan/container_command.hpp"
#include "plan/gpu_assignment.hpp"
#include "plan/launch_plan.hpp"
#include "plan/run_settings.hpp"
#include "profile/installed_snapshot.hpp"
#include "profile/secret_files.hpp"
#include "run/bridge.hpp"
#include "run/prefetch.hpp"
#include "run/prefetch_io.hpp"
#include "run/run_options.hpp"
#include "supervise/exit_status.hpp"
#include "supervise/history.hpp"
#include "supervise/start_gate.hpp"
#include "util/atomic_file.hpp"
#include "util/duration.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/system_users.hpp"
#include "util/timekeeper.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// A key file larger than this is no key.
// `run`'s own lines (log/logger: native journal entries with their fields under systemd).
void say(const std::string& line, logging::Level level = logging::Level::info,
         std::string_view kind = {}) {
  logging::Fields fields;
  fields.kind = kind;
  logging::write(level, fmt::format("{}{}", kRunLinePrefix, line), fields);
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

// The unit's GPUs as the engine's defaults see them: the smallest of them (the engines size by
// the device they run on; a unit's GPUs are alike in practice) and the model's split. Unknown
// where NVML cannot say: the engines have a fallback for that too.
GpuContext unit_gpus(const std::vector<int>& assigned, const ParallelismSettings& parallelism) {
  GpuContext context;
  context.tp = parallelism.tp;
  context.pp = parallelism.pp;
  auto probe = probe_nvml();
  if (!probe) return context;
  for (const GpuFact& gpu : probe->gpus) {
    if (!assigned.empty() &&
        std::find(assigned.begin(), assigned.end(), gpu.index) == assigned.end())
      continue;
    if (gpu.memory_total_mib == 0) continue;
    if (!context.memory_mib || gpu.memory_total_mib < *context.memory_mib) {
      context.memory_mib = gpu.memory_total_mib;
      context.name = gpu.name;
    }
  }
  return context;
}

// The supervisor's part of a start (supervise/start_gate), wired to this process: the unit's
// GPUs through NVML, the real clock, lines to the journal through stdout. Returns an exit code
// when the engine must not start.
std::optional<int> supervise_start(const std::string& name, const Profile* installed,
                                   long long ready_timeout,
                                   const std::optional<std::string>& engine_version,
                                   Notifier& notifier, std::vector<std::string>& argv,
                                   BridgeOptions& options) {
  const SupervisedProfile supervised = supervised_of(installed);
  if (!supervised.loaded) return std::nullopt;  // no snapshot: systemd's own restart only
  StartGateIo io{
      notifier, system_timekeeper(), unit_gpu_holders(supervised.parallelism),
      [](const std::string& line) { say(line); },
      [](std::string_view kind, const std::string& line) {
        // Staying down is the budget's stop; a back-off or a step-down follows a failure.
        say(line, kind == kCrashLoopStopMessage ? logging::Level::error : logging::Level::warning,
            kind);
      }};
  // Only root writes the history (record-exit); the service user reads it.
  const StartGate gate = gate_start(StartGateInput{name, supervised.restart, supervised.kind,
                                                   ready_timeout, argv, engine_version},
                                    History(name), io);
  if (gate.exit_code) return gate.exit_code;
  argv = gate.argv;
  options.stable_after = gate.stable_after;
  options.on_stable = [message = gate.stable_message] { return message; };
  return std::nullopt;
}

// model.prefetch: the weights into the page cache before the engine reads them. It runs here,
// in `run`, rather than in root's ExecStartPre=+ prepare-caches: `run` is the service user inside
// the unit's sandbox, so it reads exactly what the engine may read and root opens nothing more of
// the engine's; it is the unit's main process, the only one whose STATUS= and
// EXTEND_TIMEOUT_USEC= systemd takes (NotifyAccess=main), so a long read pushes the start timeout
// back while it progresses (and a stuck one is not kept alive); and it runs after the backoff
// and the wait for GPU memory, so the pages are fresh when the engine opens the files. Nothing it
// meets stops the start: each problem is a warning line and the engine starts anyway.
void prefetch_weights(const Profile* profile, long long ready_timeout, Notifier& notifier) {
  if (!profile || !profile->model.prefetch) return;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  // The hub cache the engine reads is named by the unit's environment, spelled by the plan.
  auto io = open_model_weights(profile->model.path, profile->model.revision,
                               make_launch_plan(*profile).environment);
  if (!io) {
    say(fmt::format("warning: prefetch skipped: {}", io.error().message));
    return;
  }
  const PrefetchOptions options;
  const PrefetchPlan plan = plan_prefetch(**io, options);
  notifier.notify(
      fmt::format("STATUS=prefetching weights: {} to read", format_bytes(plan.bytes_to_read)));
  auto last = start;
  const PrefetchResult result =
      run_prefetch(**io, plan, options, [&](const PrefetchProgress& progress) {
        const auto now = Clock::now();
        if (now - last < std::chrono::seconds{5}) return;
        last = now;
        notifier.notify(fmt::format("STATUS=prefetching weights: {} of {}, {}/{} file(s)",
                                    format_bytes(progress.bytes_done),
                                    format_bytes(progress.bytes_total), progress.files_done,
                                    progress.files_total));
        notifier.notify(fmt::format("EXTEND_TIMEOUT_USEC={}", kPrefetchExtendUsec));
      });
  for (const auto& problem : result.problems) say("warning: prefetch: " + problem);
  if (auto stop = prefetch_stop_reason(**io, plan)) say("prefetch " + *stop);
  say("prefetch: " +
      prefetch_summary(result, std::chrono::duration<double>(Clock::now() - start).count()));
  // The engine gets its whole start window from here, as if the read had taken no time.
  notifier.notify(fmt::format("EXTEND_TIMEOUT_USEC={}", (ready_timeout + 60) * 1'000'000LL));
}

// The engine's API key from the unit's credential `name` (plan/launch_plan's key_credential):
// systemd copied it into $CREDENTIALS_DIRECTORY, readable by the service's user alone. The first
// line is the key (llama.cpp's --api-key-file reads one a line).
Result<std::string> read_api_key(const std::string& name) {
  const char* directory = std::getenv("CREDENTIALS_DIRECTORY");
  if (!directory || !*directory)
    return failf("no credential '{}': $CREDENTIALS_DIRECTORY is not set", name);
  const std::filesystem::path path = std::filesystem::path(directory) / name;
  GL_TRY(auto read, read_regular_nofollow(path, kMaxApiKeyBytes));
  if (!read) return failf("no credential '{}' in {}", name, directory);
  const std::string key = api_key_of(read->content);
  if (key.empty()) return failf("credential '{}' is empty", name);
  return key;
}

}  // namespace

GpuHolders unit_gpu_holders(const ParallelismSettings& parallelism) {
  const std::vector<int> gpus = assigned_gpus();
  return GpuHolders{[gpus] { return nvml_compute_processes(gpus); }, process_name,
                    static_cast<unsigned>(::getpid()),
                    [gpus, parallelism] { return unit_gpus(gpus, parallelism); }};
}

void add_run_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "run", "The service's main process (ExecStart=): start the engine, report readiness");
  command->group("");  // units call it; people use `up`
  static RunSettings settings;
  add_run_settings_options(*command, settings);
  // `run --foreground NAME`: the whole supervision without systemd (cli/run_foreground). The
  // unit's options are then not asked for: it reads the profile itself.
  static ForegroundArgs foreground;
  command
      ->add_flag_callback(
          "--foreground",
          [command] {
            foreground.on = true;
            for (CLI::Option* option : command->get_options()) option->required(false);
          },
          "Supervise NAME in this process, without systemd: the check, the caches, the engine "
          "and its restarts (a Slurm step, a container's entrypoint)")
      ->trigger_on_parse();
  command->add_option("--node-rank", foreground.node_rank,
                      "With --foreground: this node's rank in a multi-node profile");
  command->add_option("--state-dir", foreground.state_dir,
                      "With --foreground: the history's directory (default "
                      "${XDG_STATE_HOME:-$HOME/.local/state}/gpulaunch/NAME)");
  command->add_option("--cache-archive", foreground.cache_archive,
                      "With --foreground: seed caches that are not current at the start from this "
                      "`gpulaunch cache export` archive (refused on other facts, as cache import "
                      "refuses)");
  command->add_flag("--reset-crash-loop", foreground.reset_crash_loop,
                    "With --foreground: forgive an earlier run's crash-loop failures before the "
                    "first start, as `up` does (step-down levels stay); render --slurm's job "
                    "passes it on its first step");
  command->callback([&context] {
    if (foreground.on || !foreground.state_dir.empty() || foreground.node_rank != 0 ||
        !foreground.cache_archive.empty() || foreground.reset_crash_loop) {
      if (!foreground.on || settings.engine_argv.size() != 1) {
        logging::error(
            "gpulaunch: run: --node-rank, --state-dir, --cache-archive and --reset-crash-loop go "
            "with --foreground, which takes one profile: gpulaunch run --foreground NAME "
            "[--node-rank N] [--state-dir DIR] [--cache-archive FILE] [--reset-crash-loop]");
        context.exit_code = kExitUsage;
        return;
      }
      context.exit_code = run_foreground_command(context, settings.engine_argv.front(), foreground);
      return;
    }
    const std::string& profile = settings.profile;
    // Under systemd stdout is the journal: the engine's lines pass through it, ours are entries.
    logging::configure({context.log_threshold, logging::Stream::out, profile});
    auto assembled = bridge_options(settings);
    if (!assembled) {
      say(assembled.error().message, logging::Level::error);
      context.exit_code = kExitConfig;
      return;
    }
    BridgeOptions options = std::move(*assembled);
    if (settings.rank0_watches)
      say("liveness: health alone on this rank, whose health server answers 200 whatever its "
          "engine does; rank 0 watches the group");
    if (!settings.api_key_credential.empty()) {
      auto key = read_api_key(settings.api_key_credential);
      if (!key) {
        say(fmt::format("Failed to read the API key: {}", key.error().message),
            logging::Level::error);
        context.exit_code = kExitConfig;
        return;
      }
      // The engine inherits run's environment; the key never appears in the unit's text.
      if (!settings.api_key_variable.empty())
        ::setenv(settings.api_key_variable.c_str(), key->c_str(), 1);
      options.api_key = *key;
    }
    auto notifier = systemd_notifier();
    if (auto refused = caches_refused(profile)) {
      say(fmt::format("{}; not starting (a configuration error: fix it, then `gpulaunch up {}`)",
                      *refused, profile),
          logging::Level::error);
      notifier->notify("STATUS=" + *refused);
      context.exit_code = kExitConfig;
      return;
    }
    // The installed snapshot, read once for the supervisor and the prefetch; none (or one root
    // would refuse) starts with systemd's own restart alone.
    auto installed = load_installed_profile(profile, settings.snapshot);
    if (!installed) say(fmt::format("warning: {}", installed.error().message));
    const Profile* snapshot = installed && *installed ? &**installed : nullptr;
    std::vector<std::string> argv = settings.engine_argv;
    if (auto stop = supervise_start(profile, snapshot, settings.ready_timeout.count(),
                                    settings.engine_version, *notifier, argv, options)) {
      context.exit_code = *stop;
      return;
    }
    // engine.image: the container runs as the engine's account, whose ids only this node knows.
    if (!settings.container_user.empty()) {
      auto account = lookup_user(settings.container_user);
      if (!account || !*account) {
        say(fmt::format("Failed to find the account '{}' the engine's container runs as: {}; not "
                        "starting (`gpulaunch up {}` creates it)",
                        settings.container_user,
                        account ? std::string("no such user") : account.error().message, profile),
            logging::Level::error);
        context.exit_code = kExitConfig;
        return;
      }
      auto contained = with_container_user(std::move(argv), (*account)->uid, (*account)->gid);
      if (!contained || !settings.engine_options_path.empty()) {
        say(fmt::format("not starting: {}",
                        contained ? "an engine image takes no engine options file (root would "
                                    "write it into the engine's home)"
                                  : contained.error().message),
            logging::Level::error);
        context.exit_code = kExitConfig;
        return;
      }
      argv = std::move(*contained);
      // Root's podman resolves each mount's source by name now: one a non-root user could have
      // replaced since `up` checked it (a link to a tree the engine's uid cannot reach) is refused.
      for (const auto& source : container_mount_sources(argv))
        if (auto reason = replaceable_reason(source)) {
          say(fmt::format("not starting: root's podman would bind-mount '{}' into the container, "
                          "and {}",
                          source, *reason),
              logging::Level::error);
          context.exit_code = kExitConfig;
          return;
        }
    }
    prefetch_weights(snapshot, settings.ready_timeout.count(), *notifier);
    // The engine's options file, in its own home and written as the engine's user: renamed over
    // whatever is there (a link included, never followed), so each start reads what the unit says.
    if (!settings.engine_options_path.empty()) {
      if (auto written = write_file_atomically(settings.engine_options_path,
                                               settings.engine_options_text, 0640);
          !written) {
        say(fmt::format("{}; not starting", written.error().message), logging::Level::error);
        context.exit_code = kExitConfig;
        return;
      }
    }
    // The JIT caches were prepared by root before this (ExecStartPre=+ prepare-caches). Those the
    // engine compiles into are where the unit's environment pins them; their growth is progress.
    options.argv = argv;
    // An image's engine gets them in podman's command, not from run's environment (root's).
    const bool container = !settings.container_user.empty();
    options.cache_meter =
        directory_cache_meter(compiling_cache_directories([&](const char* name) -> const char* {
          return container ? container_variable(argv, name) : std::getenv(name);
        }));
    // Output goes to the journal through stdout; flush per line so lines keep their order.
    std::function<void(std::string_view)> print = [](std::string_view line) {
      fmt::print("{}\n", line);
      std::fflush(stdout);
    };
    const BridgeLog log = [](logging::Level level, std::string_view line,
                             const logging::Fields& fields) {
      logging::write(level, line, fields);
    };
    context.exit_code = run_bridge(options, *notifier, print, log);
  });
}

}  // namespace gl
