// SPDX-License-Identifier: Apache-2.0
// `gpulaunch run --foreground NAME`: what a unit's ExecStartPre=+ (prepare-caches), ExecStart=
// (run), ExecStopPost=+ (record-exit) and Restart= do, in one process of an ordinary user. The
// decisions are the same layers' (rules/check, plan/, caches/prepare, supervise/start_gate,
// run/bridge, supervise/record_exit), driven by run/foreground's loop; this file wires them to
// the node: the user's state directory, the pinned environment, the stop signals, stderr.

#include "cli/run_foreground.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <utility>

#include <fmt/core.h>

#include "caches/cache_import.hpp"
#include "caches/cache_records.hpp"
#include "caches/fingerprint_facts.hpp"
#include "caches/prepare.hpp"
#include "caches/quarantine.hpp"
#include "catalog/exit_codes.hpp"
#include "catalog/journal_messages.hpp"
#include "cli/command_preamble.hpp"
#include "cli/exit_status.hpp"
#include "cli/stop_level.hpp"
#include "facts/node_fs.hpp"
#include "log/logger.hpp"
#include "plan/launch_plan.hpp"
#include "plan/node_launch.hpp"
#include "plan/run_settings.hpp"
#include "profile/profile_name.hpp"
#include "profile/secret_files.hpp"
#include "rules/check.hpp"
#include "rules/node_probe.hpp"
#include "run/bridge.hpp"
#include "run/cache_meter.hpp"
#include "run/run_options.hpp"
#include "supervise/cgroup.hpp"
#include "supervise/exit_class.hpp"
#include "supervise/exit_status.hpp"
#include "supervise/metrics.hpp"
#include "supervise/unit_transition.hpp"
#include "systemd/notify.hpp"
#include "util/atomic_file.hpp"
#include "util/byte_size.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/terminal_text.hpp"
#include "util/try.hpp"
#include "util/unique_fd.hpp"

namespace gl {
namespace {

// The engine's last lines kept for the stop's classification: the journal's whole invocation is
// what record-exit reads under systemd; the signatures sit in the last screenful of a traceback.
constexpr size_t kCapturedLines = 2000;

// SIGTERM, SIGINT, SIGHUP: set once for the process (the loop's), each also a byte on a pipe that
// wakes a backoff's sleep and that run/bridge reads while an engine runs.
std::atomic<bool> stop_flag{false};
int stop_pipe[2] = {-1, -1};

extern "C" void on_stop_signal(int signal) {
  stop_flag.store(true);
  const unsigned char byte = static_cast<unsigned char>(signal);
  [[maybe_unused]] const ssize_t written = ::write(stop_pipe[1], &byte, 1);
}

Result<void> take_stop_signals() {
  if (::pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    return failf("Failed to create the stop signal pipe: {}", std::strerror(errno));
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int signal : {SIGTERM, SIGINT, SIGHUP})
    if (::sigaction(signal, &action, nullptr) != 0)
      return failf("Failed to take {}: {}", strsignal(signal), std::strerror(errno));
  return {};
}

// The system's clock whose sleep (a backoff, the wait for GPU memory) ends at a stop signal.
class StoppableClock final : public Timekeeper {
 public:
  int64_t now_usec() override { return system_timekeeper().now_usec(); }
  std::chrono::steady_clock::time_point steady_now() override {
    return system_timekeeper().steady_now();
  }
  void sleep(std::chrono::milliseconds duration) override {
    const auto until = steady_now() + duration;
    while (!stop_flag.load()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(until - steady_now()).count();
      if (left <= 0) return;
      pollfd wake{stop_pipe[0], POLLIN, 0};
      ::poll(&wake, 1, static_cast<int>(std::min<long long>(left, 60'000)));
    }
  }
};

// sd-notify where a service manager asked for it (NOTIFY_SOCKET), and READY=1's time for the
// stop's record either way.
class ForegroundNotifier final : public Notifier {
 public:
  explicit ForegroundNotifier(std::function<void()> on_ready)
      : systemd_(std::getenv("NOTIFY_SOCKET") ? systemd_notifier() : nullptr),
        on_ready_(std::move(on_ready)) {}
  void notify(std::string_view state) override {
    if (state == "READY=1" && ready_usec_ == 0) {
      ready_usec_ = system_timekeeper().now_usec();
      on_ready_();
    }
    if (systemd_) systemd_->notify(state);
  }
  std::optional<std::chrono::microseconds> watchdog_interval() override {
    return systemd_ ? systemd_->watchdog_interval() : std::nullopt;
  }
  int64_t take_ready() { return std::exchange(ready_usec_, 0); }

 private:
  std::unique_ptr<Notifier> systemd_;
  std::function<void()> on_ready_;
  int64_t ready_usec_ = 0;
};

// record-exit's acts without systemd: caches/quarantine on the user's caches, lines on stderr;
// the group is told by the scheduler, which ends the other ranks when this one exits.
class ForegroundStopActions final : public StopActions {
 public:
  ForegroundStopActions(const LaunchPlan& plan, std::filesystem::path records, long long rank)
      : plan_(plan), records_(std::move(records)), rank_(rank) {}

  Result<std::filesystem::path> quarantine(std::string_view cache, int64_t time_usec) override {
    return quarantine_cache(plan_, cache, time_usec, records_);
  }
  std::string tell_group(const Classification&, int64_t) override {
    return fmt::format(
        "rank {} exits with {}: the scheduler ends the other ranks (srun --kill-on-bad-exit) and "
        "the group's next start reads this history on every rank",
        rank_, kExitTempFail);
  }
  void stable(std::string_view action) override {
    logging::Fields stable;
    stable.kind = kStableMessage;
    logging::info(fmt::format("gpulaunch: stable: {}", action), stable);
  }
  void classified(const Classification& stop, const SupervisorEvent& event) override {
    logging::Fields fields;
    fields.kind = event.kind;
    fields.exit_class = std::string(exit_class_name(stop.value));
    logging::write(stop_level(stop.value),
                   fmt::format("gpulaunch: stop classified as {}: {}; action: {}", event.kind,
                               terminal_text(event.evidence), event.action),
                   fields);
  }
  void keeps_dying(const Classification& stop, const SupervisorEvent& event) override {
    logging::Fields fields;
    fields.kind = kKeepsDyingMessage;
    fields.exit_class = std::string(exit_class_name(stop.value));
    logging::error(fmt::format("gpulaunch: keeps dying: {}", event.action), fields);
  }
  void group_told(std::string_view action) override {
    logging::info(fmt::format("gpulaunch: {}", action));
  }
  void warning(std::string_view line) override {
    logging::warning(fmt::format("gpulaunch: {}", line));
  }
  void error(std::string_view line) override { logging::error(fmt::format("gpulaunch: {}", line)); }

 private:
  const LaunchPlan& plan_;
  std::filesystem::path records_;
  long long rank_;
};

struct Wired {
  std::string name;
  std::unique_ptr<History> history;
  Profile profile;
  LaunchPlan plan;
  std::filesystem::path state;
  BridgeOptions bridge;
  RunSettings settings;
};

// The loop's side effects on this node.
class NodeForegroundIo final : public ForegroundIo {
 public:
  NodeForegroundIo(Wired& wired, ForegroundStopActions& actions)
      : wired_(wired), actions_(actions), notifier_([this] { write_metrics("active"); }) {}

  StartGate gate(const History& history) override {
    StartGateIo io{notifier_, clock_, unit_gpu_holders(wired_.profile.parallelism),
                   [](const std::string& line) { logging::info("gpulaunch: " + line); },
                   [](std::string_view kind, const std::string& line) {
                     logging::Fields fields;
                     fields.kind = kind;
                     logging::write(kind == kCrashLoopStopMessage ? logging::Level::error
                                                                  : logging::Level::warning,
                                    "gpulaunch: " + line, fields);
                   }};
    return gate_start(
        StartGateInput{
            wired_.name, wired_.profile.restart, wired_.profile.engine.kind,
            wired_.settings.ready_timeout.count(), wired_.settings.engine_argv,
            wired_.settings.engine_version,
            fmt::format("remove '{}' (its failures and step-down levels)",
                        (wired_.state / history_place(wired_.name).supervisor_name).string())},
        history, io);
  }

  EngineRun run_engine(const StartGate& gate) override {
    EngineRun run;
    BridgeOptions options = wired_.bridge;
    options.argv = gate.argv;
    options.stable_after = gate.stable_after;
    options.on_stable = [message = gate.stable_message] { return message; };
    // The engine's options file, in its home, before each start (as the unit's `run` writes it).
    if (!wired_.settings.engine_options_path.empty())
      if (auto written = write_file_atomically(wired_.settings.engine_options_path,
                                               wired_.settings.engine_options_text, 0600);
          !written)
        logging::warning(fmt::format("gpulaunch: {}", written.error().message));
    options.cache_meter = directory_cache_meter(compiling_cache_directories(
        [](const char* variable) -> const char* { return std::getenv(variable); }));
    std::deque<std::string> lines;
    const auto keep = [&lines](std::string_view line) {
      lines.emplace_back(line);
      if (lines.size() > kCapturedLines) lines.pop_front();
    };
    const std::function<void(std::string_view)> print = [&keep](std::string_view line) {
      keep(line);
      std::fwrite(line.data(), 1, line.size(), stderr);
      std::fputc('\n', stderr);
      std::fflush(stderr);
    };
    const BridgeLog log = [&keep](logging::Level level, std::string_view line,
                                  const logging::Fields& fields) {
      keep(line);
      logging::write(level, line, fields);
    };
    notifier_.take_ready();
    run.times.main_start_usec = clock_.now_usec();
    run.status = run_bridge(options, notifier_, print, log);
    run.ended_usec = clock_.now_usec();
    run.times.active_enter_usec = notifier_.take_ready();
    if (run.times.active_enter_usec > 0) run.times.active_exit_usec = run.ended_usec;
    run.lines.assign(lines.begin(), lines.end());
    // One node's own counter; a group's ranks each have theirs and share one history.
    if (wired_.profile.nodes.hosts.size() <= 1) run.cgroup_oom_kills = own_cgroup_oom_kills();
    return run;
  }

  bool stop_requested() override { return stop_flag.load(); }

  std::shared_ptr<void> hold_history() override {
    // flock(2): the ranks sharing the state directory (a shared filesystem) record one at a time.
    const auto path = wired_.state / "history.lock";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      logging::warning(fmt::format("gpulaunch: Failed to open '{}': {}; recording unlocked",
                                   path.string(), std::strerror(errno)));
      return nullptr;
    }
    if (::flock(fd, LOCK_EX) != 0)
      logging::warning(fmt::format("gpulaunch: Failed to lock '{}': {}; recording unlocked",
                                   path.string(), std::strerror(errno)));
    return std::shared_ptr<void>(nullptr, [fd](void*) { ::close(fd); });
  }

  Timekeeper& clock() override { return clock_; }
  StopActions& actions() override { return actions_; }
  void recorded(const History&, const StopDecision& decision) override {
    write_metrics(decision.stop.value == ExitClass::clean ? "inactive" : "failed");
  }

  // The profile's metrics (supervise/metrics' families) in the state directory, as root writes
  // them for node_exporter's textfile collector: a collector pointed there reads them. The
  // caches are not walked for it (a unit's timer does that; here it would delay each start).
  void write_metrics(std::string_view active_state) {
    ProfileMetricsInput input;
    input.profile = wired_.name;
    input.unit.name = unit_name_for(wired_.name);
    input.unit.load_state = "loaded";
    input.unit.active_state = active_state;
    if (auto state = wired_.history->state()) input.state = *state;
    input.now_usec = clock_.now_usec();
    const std::string name = state_paths::metrics_file_name(wired_.name);
    auto directory = open_user_owned_directory(wired_.state, ::geteuid());
    auto written = directory ? write_atomically_at(directory->get(), name, metrics_text({input}),
                                                   0644, (wired_.state / name).string())
                             : Result<void>(std::unexpected(directory.error()));
    if (!written)
      logging::warning(fmt::format("gpulaunch: metrics not written: {}", written.error().message));
  }
  void say(logging::Level level, const std::string& line) override {
    logging::write(level, "gpulaunch: " + line);
  }

 private:
  Wired& wired_;
  ForegroundStopActions& actions_;
  StoppableClock clock_;
  ForegroundNotifier notifier_;
};

// ${XDG_STATE_HOME:-$HOME/.local/state}/gpulaunch/NAME, or --state-dir.
Result<std::filesystem::path> state_directory(const std::string& name, const std::string& given) {
  if (!given.empty()) return std::filesystem::absolute(given).lexically_normal();
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state && *state == '/') return std::filesystem::path(state) / "gpulaunch" / name;
  const char* home = std::getenv("HOME");
  if (home && *home == '/')
    return std::filesystem::path(home) / ".local" / "state" / "gpulaunch" / name;
  return failf("no state directory: set HOME or XDG_STATE_HOME, or pass --state-dir DIR");
}

// ${XDG_CACHE_HOME:-$HOME/.cache}/gpulaunch/NAME: the user's own cache root where the profile
// keeps the unit's (CacheDirectory=, which no user can write).
std::optional<std::string> user_cache_root(const std::string& name) {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  if (cache && *cache == '/') return (std::filesystem::path(cache) / "gpulaunch" / name).string();
  const char* home = std::getenv("HOME");
  if (home && *home == '/')
    return (std::filesystem::path(home) / ".cache" / "gpulaunch" / name).string();
  return std::nullopt;
}

// The check gate: an error refuses the start, a line each with its fix.
bool passes_check(const Profile& profile, const LaunchPlan& plan, const Facts& facts,
                  const ShellEnvironment& shell) {
  auto findings = evaluate(profile, plan, facts, shell);
  // What root runs around a unit's engine (record-start, ExecStartPost=) is not part of this start.
  std::erase_if(findings,
                [](const Finding& finding) { return finding.code == kProgramMissingCode; });
  for (const auto& finding : findings) {
    if (finding.severity == Severity::info) continue;
    const std::string line =
        fmt::format("gpulaunch: check: {}[{}] {}; fix: {}", severity_name(finding.severity),
                    finding.code, terminal_text(finding.summary), finding.fix);
    if (finding.severity == Severity::error)
      logging::error(line);
    else
      logging::warning(line);
  }
  return !has_errors(findings);
}

// The process's environment becomes the unit's (the plan's, each [secrets] entry's file as
// NAME_PATH), as systemd gives a service nothing else; NOTIFY_SOCKET stays for a manager above.
void pin_environment(const Profile& profile, const LaunchPlan& plan) {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  const std::string notify = socket ? socket : "";
  ::clearenv();
  for (const auto& [name, value] : plan.environment) ::setenv(name.c_str(), value.c_str(), 1);
  for (const auto& [name, file] : profile.secrets)
    ::setenv((name + "_PATH").c_str(), file.c_str(), 1);
  if (!notify.empty()) ::setenv("NOTIFY_SOCKET", notify.c_str(), 1);
}

// A stop signal taken while the start was still being judged (a scancel, or srun ending this
// rank because another refused): the engine never started, so nothing failed here. Exit 0 keeps
// the step's status (srun's: the highest of its tasks') the refusing rank's own.
std::optional<int> stopped_before_start(std::string_view during) {
  if (!stop_flag.load()) return std::nullopt;
  logging::info(fmt::format(
      "gpulaunch: a stop signal arrived during {}; the engine was not started; exiting with {}",
      during, kExitOk));
  return kExitOk;
}

// Ranks sharing a cache root and a state directory (a shared home) take their turns here.
UniqueFd lock_cache_upkeep(const std::filesystem::path& state) {
  const auto path = state / "caches.lock";
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd || ::flock(fd.get(), LOCK_EX) != 0)
    logging::warning(
        fmt::format("gpulaunch: Failed to lock '{}': {}; the caches are prepared unlocked",
                    path.string(), std::strerror(errno)));
  return fd;
}

// `cache import`'s seeding, as the start's own step: the same records as the upkeep's, so the
// stamp it writes is the one the start reads. Refused (other facts, a bad archive): said, and
// the engine compiles its own.
void seed_caches(const Wired& wired, const FingerprintInputs& inputs, const PrepareOptions& prepare,
                 const std::string& archive) {
  UniqueFd fd(::open(archive.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW));
  struct stat info {};
  Result<ImportReport> imported =
      !fd ? Result<ImportReport>(failf("Failed to open '{}': {}", archive, std::strerror(errno)))
      : ::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)
          ? Result<ImportReport>(failf("'{}' is not a regular file", archive))
          : import_caches(wired.plan, inputs, ImportOptions{prepare, {}}, fd.get(), archive);
  if (!imported) {
    logging::warning(
        fmt::format("gpulaunch: caches not seeded from '{}': {}; the engine compiles "
                    "its own",
                    archive, imported.error().message));
    return;
  }
  for (const auto& cache : imported->caches)
    logging::info(fmt::format("gpulaunch: imported {} into {}: {} file(s), {}", cache.name,
                              cache.path, cache.files, format_bytes(cache.bytes)));
  logging::info(fmt::format("gpulaunch: caches seeded from profile '{}' of '{}'; fingerprint {}",
                            imported->profile, archive, imported->prepared.fingerprint));
}

// The cache upkeep root does before a unit's start, on the user's own caches, its records in the
// state directory: a cache it did not make, or one someone else owns, is refused. With
// --cache-archive, caches that were not current (a first start, other facts) are seeded from it.
Result<void> upkeep_caches(const Wired& wired, const FingerprintInputs& inputs,
                           const ForegroundArgs& args) {
  const UniqueFd held = lock_cache_upkeep(wired.state);
  const PrepareOptions options{wired.state / "caches", DirectoryOwner{::geteuid(), ::getegid()}};
  GL_TRY(const auto prepared,
         prepare_caches(wired.plan, inputs, options, [](const Removal& removal) {
           logging::info(fmt::format("gpulaunch: removed {} ({} bytes): {}", removal.what,
                                     removal.bytes, removal.why));
         }));
  if (!prepared.change.empty())
    logging::info(fmt::format("gpulaunch: JIT caches were stale: {}", prepared.change));
  else
    logging::info(
        fmt::format("gpulaunch: JIT caches current (fingerprint {})", prepared.fingerprint));
  if (args.cache_archive.empty()) return {};
  // Current caches (an earlier start here, or another rank sharing them) hold what the archive
  // would bring, or more: replacing them would take away what this node compiled since.
  if (prepared.change.empty()) {
    logging::info(
        fmt::format("gpulaunch: '{}' not imported: the caches are current", args.cache_archive));
    return {};
  }
  seed_caches(wired, inputs, options, args.cache_archive);
  return {};
}

// Everything before the loop; an exit status where the start is refused.
std::optional<int> wire(const CliContext& context, const std::string& profile_arg,
                        const ForegroundArgs& args, Wired& wired) {
  const auto refuse = [](const std::string& why) {
    logging::error(fmt::format("gpulaunch: {}; not starting", why));
    return kExitUsage;
  };
  auto loaded = load_for_rank(context, ProfileArgs{profile_arg, args.node_rank});
  if (!loaded) return refuse(loaded.error().message);
  wired.profile = std::move(*loaded);
  wired.name = wired.profile.name;
  logging::configure({context.log_threshold, logging::Stream::err, wired.name});
  Profile& profile = wired.profile;
  if (profile.engine.image)
    return refuse(
        "engine.image runs under root's podman, which --foreground does not use: start the "
        "engine from engine.venv or engine.python, or with `gpulaunch up` under systemd");

  auto state = state_directory(wired.name, args.state_dir);
  if (!state) return refuse(state.error().message);
  wired.state = *state;
  const uid_t uid = ::geteuid();
  if (auto opened = open_user_owned_directory(wired.state, uid); !opened)
    return refuse(opened.error().message);
  const auto engine_home = wired.state / "engine";
  if (auto opened = open_user_owned_directory(engine_home, uid); !opened)
    return refuse(opened.error().message);
  // The unit's cache root is CacheDirectory='s, root's to create: a user's own instead.
  if (profile.caches.root == state_paths::default_cache_root(wired.name).string()) {
    auto root = user_cache_root(wired.name);
    if (!root) return refuse("no cache root: set HOME or XDG_CACHE_HOME, or caches.root");
    profile.caches.root = *root;
  }
  if (!profile.secrets.empty())
    if (auto secrets = check_secret_files(profile, uid); !secrets)
      return refuse(secrets.error().message);

  NodeLaunch node = node_launch_options(profile, args.node_rank, NodeFs());
  for (const auto& warning : node.warnings) logging::warning("gpulaunch: " + warning);
  node.options.engine_home = engine_home.string();
  wired.plan = make_launch_plan(profile, node.options);

  const auto shell = ShellEnvironment::current();
  const Facts facts = probe_node_for(profile, wired.plan, shell);
  if (!passes_check(profile, wired.plan, facts, shell))
    return refuse(fmt::format("`gpulaunch check {}` found errors", profile_arg));
  if (auto stopped = stopped_before_start("the check")) return stopped;

  if (auto upkept = upkeep_caches(wired, fingerprint_inputs(profile, wired.plan, facts), args);
      !upkept)
    return refuse(upkept.error().message);
  if (auto stopped = stopped_before_start("the cache upkeep")) return stopped;

  wired.settings = run_settings(profile, wired.plan);
  auto bridge = bridge_options(wired.settings);
  if (!bridge) return refuse(bridge.error().message);
  wired.bridge = std::move(*bridge);
  if (!wired.settings.api_key_credential.empty()) {
    const auto file = profile.secrets.find(wired.settings.api_key_credential);
    if (file == profile.secrets.end())
      return refuse(fmt::format("no [secrets] entry '{}' holds the engine's API key",
                                wired.settings.api_key_credential));
    auto read = read_regular_nofollow(file->second, kMaxApiKeyBytes);
    if (!read || !*read)
      return refuse(read ? fmt::format("no API key file '{}'", file->second)
                         : read.error().message);
    wired.bridge.api_key = api_key_of((*read)->content);
  }
  pin_environment(profile, wired.plan);
  if (!wired.settings.api_key_variable.empty())
    ::setenv(wired.settings.api_key_variable.c_str(), wired.bridge.api_key.c_str(), 1);
  wired.bridge.stop_signal_fd = stop_pipe[0];
  return std::nullopt;
}

// The group's ranks: parallelism.nodes (a Slurm job names no hosts: the allocation is its hosts),
// or [nodes] hosts where the profile lists them. One rank's engine death ends a group's step.
size_t group_ranks(const Profile& profile) {
  const auto nodes = static_cast<size_t>(std::max<long long>(1, profile.parallelism.nodes));
  return std::max(nodes, profile.nodes.hosts.size());
}

// --reset-crash-loop: the operator's word, as `up` gives it (a new job, or its requeue onto
// another allocation): the failures of an earlier run are forgiven, the step-down levels kept.
// The ranks sharing the history forgive once, under its lock.
void forgive_earlier_failures(const History& history, ForegroundIo& io) {
  const auto held = io.hold_history();
  const auto before = history.state_to_update();
  if (before.state.consecutive_failures == 0 && before.problem.empty()) return;
  if (auto reset = reset_crash_loop(
          history, "run --foreground --reset-crash-loop: a new job, or a requeue", io.clock());
      !reset) {
    logging::warning(fmt::format("gpulaunch: crash loop not reset: {}", reset.error().message));
    return;
  }
  logging::info(fmt::format(
      "gpulaunch: forgave {} failure(s) of an earlier run (--reset-crash-loop); step-down levels "
      "kept (GPU memory level {}, host memory level {})",
      before.state.consecutive_failures, before.state.gpu_level, before.state.host_level));
}

}  // namespace

int foreground_exit_status(ForegroundEnd end) {
  switch (end) {
    case ForegroundEnd::stopped:
      return kExitOk;
    case ForegroundEnd::stays_down:
      return kExitFailed;
    case ForegroundEnd::config_error:
      return kExitUsage;
    case ForegroundEnd::retry_elsewhere:
      return kExitTempFail;
  }
  return kExitInternal;
}

int run_foreground_command(const CliContext& context, const std::string& profile,
                           const ForegroundArgs& args) {
  logging::configure({context.log_threshold, logging::Stream::err, ""});
  // Taken first: a SIGTERM during the check or the cache upkeep ends the start quietly (exit 0),
  // never by the signal's default action (143, which srun would report as the step's status).
  if (auto taken = take_stop_signals(); !taken) {
    logging::error(fmt::format("gpulaunch: {}", taken.error().message));
    return kExitInternal;
  }
  Wired wired;
  if (auto refused = wire(context, profile, args, wired)) return *refused;
  const HistoryPlace names = history_place(wired.name);
  wired.history = std::make_unique<History>(HistoryPlace{wired.state, wired.state,
                                                         names.events_name, names.supervisor_name,
                                                         names.marker_name, ::geteuid()});
  const History& history = *wired.history;
  const auto records = wired.state / "caches";
  ForegroundSettings settings{wired.name,
                              wired.profile.restart,
                              wired.profile.engine.kind,
                              group_ranks(wired.profile),
                              args.node_rank,
                              {}};
  if (auto places = movable_caches(wired.plan, records))
    settings.caches = std::move(*places);
  else
    logging::warning(fmt::format("gpulaunch: caches not examined: {}", places.error().message));
  ForegroundStopActions actions(wired.plan, records, args.node_rank);
  NodeForegroundIo io(wired, actions);
  if (args.reset_crash_loop) forgive_earlier_failures(history, io);
  const ForegroundEnd end = run_foreground(settings, history, io);
  const int status = foreground_exit_status(end);
  logging::write(status == 0 ? logging::Level::info : logging::Level::warning,
                 fmt::format("gpulaunch: {}; exiting with {}", foreground_end_name(end), status));
  return status;
}

}  // namespace gl
