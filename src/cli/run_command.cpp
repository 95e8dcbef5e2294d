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
#include "cli/supervise.hpp"
#include "facts/gpu_probe.hpp"
#include "log/logger.hpp"
#include "plan/gpu_assignment.hpp"
#include "plan/launch_plan.hpp"
#include "profile/validate.hpp"
#include "run/bridge.hpp"
#include "run/prefetch.hpp"
#include "run/prefetch_io.hpp"
#include "supervise/exit_status.hpp"
#include "supervise/history.hpp"
#include "supervise/start_gate.hpp"
#include "util/atomic_file.hpp"
#include "util/duration.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/timekeeper.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// A key file larger than this is no key.
constexpr size_t kMaxApiKeyBytes = 64 * 1024;

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
std::optional<int> supervise_start(const std::string& name, const std::string& snapshot,
                                   long long ready_timeout,
                                   const std::optional<std::string>& engine_version,
                                   Notifier& notifier, std::vector<std::string>& argv,
                                   BridgeOptions& options) {
  const SupervisedProfile supervised = load_supervised(name, snapshot);
  if (!supervised.loaded) return std::nullopt;  // no snapshot: systemd's own restart only
  const std::vector<int> gpus = assigned_gpus();
  StartGateIo io{
      notifier, system_timekeeper(),
      GpuHolders{[gpus] { return nvml_compute_processes(gpus); }, process_name,
                 static_cast<unsigned>(::getpid()),
                 [&gpus, &supervised] { return unit_gpus(gpus, supervised.parallelism); }},
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
void prefetch_weights(const std::string& snapshot, long long ready_timeout, Notifier& notifier) {
  if (snapshot.empty()) return;
  auto profile = load_profile(DirectorySource({}), snapshot);
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
  std::string key = read->content.substr(0, read->content.find('\n'));
  while (!key.empty() && (key.back() == '\r' || key.back() == ' ' || key.back() == '\t'))
    key.pop_back();
  if (key.empty()) return failf("credential '{}' is empty", name);
  return key;
}

}  // namespace

void add_run_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "run", "The service's main process (ExecStart=): start the engine, report readiness");
  command->group("");  // units call it; people use `up`
  static std::string profile, health_url, snapshot, unused_engine, rendezvous;
  static bool rendezvous_any_port = false;
  static long long ready_timeout = 1200;
  static long long progress_grace = 0;
  // Units rendered before the flag existed get the shortest bound health_timing gives.
  static long long health_timeout = kMinHealthTimeout.count();
  static long long drain_timeout = kRunDefaultDrainTimeout.count();
  static std::vector<std::string> argv;
  static std::string engine_version;
  // Liveness (plan/launch_plan's LivenessPlan); without them, "health" as before.
  static std::string liveness = "health", ready = "health";
  static long long liveness_interval = kDefaultLivenessInterval.count();
  static long long liveness_timeout = kDefaultLivenessTimeout.count();
  static std::string probe_path, probe_body, metrics_path, in_flight_metric, tokens_metric;
  static std::string metrics_format = std::string(metrics_format_name(MetricsFormat::prometheus));
  static std::string engine_options_file, engine_options_text;
  static std::string api_key_credential, api_key_variable;
  static bool rank0_watches = false;
  command->add_option("--profile", profile, "Profile this engine belongs to")
      ->required()
      ->check(profile_name_check());
  // Units rendered by earlier versions pass --engine=KIND; `run` reads the kind from the
  // snapshot. Accepted and ignored, so that a package upgrade does not break an installed unit
  // before its next `up`.
  command->add_option("--engine", unused_engine)->group("");
  command->add_option(std::string(kRunEngineVersionOption), engine_version,
                      "The engine release the command line was built for");
  command->add_option("--snapshot", snapshot, "The merged profile `up` wrote");
  command->add_option("--health-url", health_url, "URL answering 200 once serving")->required();
  command->add_option("--ready-timeout", ready_timeout, "Seconds to wait for health 200")
      ->check(CLI::Range(1LL, 86400LL));
  command
      ->add_option("--progress-grace", progress_grace,
                   "Seconds by which loading progress pushes the ready deadline back "
                   "(default: the ready timeout, at most 300)")
      ->check(CLI::Range(1LL, 86400LL));
  command
      ->add_option("--health-timeout", health_timeout,
                   "Seconds one health answer may take (the engine's own bound and a margin)")
      ->check(CLI::Range(1LL, 86400LL));
  command
      ->add_option(std::string(kRunDrainTimeoutOption), drain_timeout,
                   "Seconds a stop lets the engine finish in-flight requests after SIGTERM")
      ->check(CLI::Range(1LL, 86400LL));
  command->add_option(std::string(kRunRendezvousOption), rendezvous,
                      "A headless rank: HOST:PORT of rank 0 its engine connects to; ready and "
                      "watched by that connection instead of --health-url");
  command->add_flag(std::string(kRunRendezvousAnyPortOption), rendezvous_any_port,
                    "Any port on the rendezvous host counts");
  command
      ->add_option(std::string(kRunLivenessOption), liveness,
                   "How a serving engine proves forward progress: generate, metrics, health or off")
      ->check(CLI::IsMember(liveness_mode_names()));
  command
      ->add_option(std::string(kRunLivenessIntervalOption), liveness_interval,
                   "Seconds between two liveness looks")
      ->check(CLI::Range(1LL, 86400LL));
  command
      ->add_option(std::string(kRunLivenessTimeoutOption), liveness_timeout,
                   "Seconds without forward progress that make a stall")
      ->check(CLI::Range(1LL, 86400LL));
  command->add_option(std::string(kRunLivenessProbeOption), probe_path,
                      "Path of the one-token generation probe (GET, or POST with the body)");
  command->add_option(std::string(kRunLivenessProbeBodyOption), probe_body,
                      "JSON body of the generation probe: it is a POST");
  command->add_option(std::string(kRunLivenessMetricsOption), metrics_path,
                      "Path of the engine's Prometheus metrics");
  command
      ->add_option(std::string(kRunLivenessMetricsFormatOption), metrics_format,
                   "What the metrics path answers: prometheus or iteration-stats")
      ->check(CLI::IsMember({std::string(metrics_format_name(MetricsFormat::prometheus)),
                             std::string(metrics_format_name(MetricsFormat::iteration_stats))}));
  command->add_option(std::string(kRunLivenessInFlightOption), in_flight_metric,
                      "Gauge of requests in flight (none: the metrics vouch for progress only)");
  command->add_option(std::string(kRunEngineOptionsFileOption), engine_options_file,
                      "The engine's options file, written before the engine starts");
  command->add_option(std::string(kRunEngineOptionsTextOption), engine_options_text,
                      "What that file holds");
  command->add_option(std::string(kRunLivenessTokensOption), tokens_metric,
                      "Counter that moves while tokens are generated");
  command->add_option(std::string(kRunApiKeyCredentialOption), api_key_credential,
                      "Credential holding the engine's API key, sent with the probe and metrics");
  command->add_option(std::string(kRunApiKeyVariableOption), api_key_variable,
                      "Environment variable the engine reads that key from; set for the engine");
  command->add_flag(std::string(kRunRank0WatchesOption), rank0_watches,
                    "This rank's health server is a stub: rank 0's liveness watches the group");
  command
      ->add_option(std::string(kRunReadyOption), ready,
                   "READY=1 on health 200, or on the first generation: health or generate")
      ->check(CLI::IsMember({"health", "generate"}));
  command->add_option("engine_argv", argv, "The engine's command line, after --")->required();
  command->callback([&context] {
    // Under systemd stdout is the journal: the engine's lines pass through it, ours are entries.
    logging::configure({context.log_threshold, logging::Stream::out, profile});
    BridgeOptions options;
    options.health_url = health_url;
    options.probe_timeout = std::chrono::seconds{health_timeout};
    options.drain_timeout = std::chrono::seconds{drain_timeout};
    options.stop_timeout = options.drain_timeout + kStopKillGrace;
    options.readiness.ready_timeout = Seconds{ready_timeout};
    options.readiness.progress_grace =
        Seconds{progress_grace > 0 ? progress_grace : std::min(300LL, ready_timeout)};
    options.liveness.mode = parse_liveness_mode(liveness).value_or(LivenessMode::health);
    options.liveness.interval = std::chrono::seconds{liveness_interval};
    options.liveness.timeout = std::chrono::seconds{liveness_timeout};
    options.liveness.has_probe = !probe_path.empty();
    options.liveness.has_metrics = !metrics_path.empty() && !tokens_metric.empty();
    options.probe_path = probe_path;
    options.probe_body = probe_body;
    options.metrics_path = metrics_path;
    options.metrics_format =
        parse_metrics_format(metrics_format).value_or(MetricsFormat::prometheus);
    options.in_flight_metric = in_flight_metric;
    options.tokens_metric = tokens_metric;
    options.stall_dump_grace = kStallDumpGrace;
    options.readiness.ready_on_generation = ready == "generate";
    if (options.readiness.ready_on_generation && probe_path.empty()) {
      say(fmt::format("{}=generate needs {}", kRunReadyOption, kRunLivenessProbeOption),
          logging::Level::error);
      context.exit_code = kExitConfig;
      return;
    }
    if (rank0_watches)
      say("liveness: health alone on this rank, whose health server answers 200 whatever its "
          "engine does; rank 0 watches the group");
    if (!api_key_credential.empty()) {
      auto key = read_api_key(api_key_credential);
      if (!key) {
        say(fmt::format("Failed to read the API key: {}", key.error().message),
            logging::Level::error);
        context.exit_code = kExitConfig;
        return;
      }
      // The engine inherits run's environment; the key never appears in the unit's text.
      if (!api_key_variable.empty()) ::setenv(api_key_variable.c_str(), key->c_str(), 1);
      options.api_key = *key;
    }
    if (!rendezvous.empty()) {
      auto [host, port] = split_host_port(rendezvous);
      long long number = 0;
      const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
      if (host.empty() || error != std::errc{} || end != port.data() + port.size()) {
        say(fmt::format("invalid {} '{}': expected HOST:PORT", kRunRendezvousOption, rendezvous),
            logging::Level::error);
        context.exit_code = kExitConfig;
        return;
      }
      options.rendezvous = Rendezvous{host, number, rendezvous_any_port};
      options.readiness.headless = true;
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
    const std::optional<std::string> version =
        engine_version.empty() ? std::nullopt : std::optional(engine_version);
    if (auto stop =
            supervise_start(profile, snapshot, ready_timeout, version, *notifier, argv, options)) {
      context.exit_code = *stop;
      return;
    }
    prefetch_weights(snapshot, ready_timeout, *notifier);
    // The engine's options file, in its own home and written as the engine's user: renamed over
    // whatever is there (a link included, never followed), so each start reads what the unit says.
    if (!engine_options_file.empty()) {
      if (auto written = write_file_atomically(engine_options_file, engine_options_text, 0640);
          !written) {
        say(fmt::format("{}; not starting", written.error().message), logging::Level::error);
        context.exit_code = kExitConfig;
        return;
      }
    }
    // The JIT caches were prepared by root before this (ExecStartPre=+ prepare-caches). Those the
    // engine compiles into are where the unit's environment pins them; their growth is progress.
    options.argv = argv;
    options.cache_meter = directory_cache_meter(
        compiling_cache_directories([](const char* name) { return std::getenv(name); }));
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
