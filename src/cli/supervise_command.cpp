// `record-exit` (ExecStopPost=: classify the stop, record it, decide), `events PROFILE`, and the
// supervision steps `run` takes before it starts the engine.

#include "cli/supervise.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/context.hpp"
#include "cli/group_restart.hpp"
#include "group/remote.hpp"
#include "profile/validate.hpp"
#include "supervise/cgroup.hpp"
#include "supervise/exit_class.hpp"
#include "supervise/exit_status.hpp"
#include "supervise/group_policy.hpp"
#include "supervise/history.hpp"
#include "supervise/policy.hpp"
#include "supervise/step_down.hpp"
#include "systemd/journal.hpp"
#include "systemd/manager.hpp"
#include "util/duration.hpp"

namespace gl {
namespace {

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string format_time(int64_t usec) {
  const std::time_t seconds = static_cast<std::time_t>(usec / 1'000'000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03}Z", text, (usec / 1000) % 1000);
}

bool saw_run_verdict(const std::vector<std::string>& lines) {
  for (auto line = lines.rbegin(); line != lines.rend(); ++line)
    if (parse_run_verdict(*line)) return true;
  return false;
}

// Reads the invocation's journal and classifies. journald takes the last lines from the stream
// and the kernel a moment after the process ended, so an unexplained stop is read again for up
// to a second before it is called a plain crash.
Classification classify_invocation(StopReport& report, const std::string& invocation_id) {
  auto journal = open_journal();
  Classification result = classify_stop(report);
  for (int attempt = 0; attempt < 6 && journal && !invocation_id.empty(); ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    report.lines.clear();
    report.kernel_lines.clear();
    uint64_t since = 0;
    if (auto lines = (*journal)->invocation(invocation_id)) {
      for (const auto& entry : *lines) report.lines.push_back(entry.message);
      if (!lines->empty()) since = lines->front().realtime_usec;
    }
    if (since == 0) since = static_cast<uint64_t>(now_usec() - 3600LL * 1'000'000);
    if (auto kernel = (*journal)->kernel_since(since, kKernelOomKillMarker))
      for (const auto& entry : *kernel) report.kernel_lines.push_back(entry.message);
    result = classify_stop(report);
    if (result.value != ExitClass::crash) break;
    // `run`'s own verdict is its last line, after all engine output: once it is in, only an OOM
    // kill's kernel line can still be late, and only a SIGKILL can be one.
    if (saw_run_verdict(report.lines) && !report.exit_status.ends_with("KILL") &&
        report.exit_status != "137")
      break;
  }
  return result;
}

struct RecordExitOptions {
  std::string profile;
  std::string snapshot;
  long long node_rank = -1;  // multi-node profiles: this node's rank
  std::string ssh = std::string(kSystemSsh);
};

// systemd's timestamps of the invocation that is stopping; zeros when the manager cannot say.
InvocationTimes invocation_times(const std::string& unit) {
  InvocationTimes times;
  auto manager = connect_systemd(ManagerScope::system);
  if (!manager) return times;
  auto status = (*manager)->status(unit);
  if (!status) return times;
  times.main_start_usec = static_cast<int64_t>(status->main_start_usec);
  times.active_enter_usec = static_cast<int64_t>(status->active_enter_usec);
  times.active_exit_usec = static_cast<int64_t>(status->active_exit_usec);
  return times;
}

int record_exit(const RecordExitOptions& options) {
  const std::string& name = options.profile;
  const std::string& snapshot = options.snapshot;
  const SupervisedProfile supervised = load_supervised(name, snapshot);
  StopReport report;
  report.unit = unit_name_for(name);
  report.service_result = env_or_empty("SERVICE_RESULT");
  report.exit_code = env_or_empty("EXIT_CODE");
  report.exit_status = env_or_empty("EXIT_STATUS");
  const History history(name);
  auto current = history.state_to_update();
  if (!current.problem.empty()) fmt::print("gpulaunch record-exit: {}\n", current.problem);
  SupervisorState state = current.state;
  if (auto kills = own_cgroup_oom_kills()) {
    const long long before = *kills >= state.cgroup_oom_kills ? state.cgroup_oom_kills : 0;
    if (*kills > before)
      report.cgroup_oom_kill =
          fmt::format("memory cgroup oom_kill counter {} -> {}", before, *kills);
    state.cgroup_oom_kills = *kills;
  }
  const Classification stop = classify_invocation(report, env_or_empty("INVOCATION_ID"));
  const int64_t now = now_usec();
  std::vector<SupervisorEvent> events;
  // Serving for restart.stable_after forgives what came before, whatever ended it (a failure,
  // `gpulaunch down`): root decides it here, from systemd's own timestamps.
  const Seconds served = served_for(invocation_times(report.unit), state, now);
  if (auto stable = forgive_if_stable(state, served, supervised.restart, now)) {
    state = stable->state;
    events.push_back(
        SupervisorEvent{now, "stable",
                        fmt::format("served {} (restart.stable_after {})", format_duration(served),
                                    format_duration(supervised.restart.stable_after)),
                        stable->action, state.gpu_level, state.host_level});
    fmt::print("gpulaunch: stable: {}\n", stable->action);
  }
  auto outcome = after_stop(state, stop, supervised.restart, now, max_gpu_level(supervised.kind),
                            max_host_level(supervised.kind));
  SupervisorEvent event{now,
                        std::string(exit_class_name(stop.value)),
                        stop.evidence,
                        outcome.action,
                        outcome.state.gpu_level,
                        outcome.state.host_level};
  fmt::print("gpulaunch: stop classified as {}: {}; action: {}\n", event.kind, event.evidence,
             event.action);
  std::vector<std::string> failures;
  if (auto saved = history.save(outcome.state); !saved) failures.push_back(saved.error().message);
  if (supervised.nodes.hosts.size() > 1 && group_must_know(stop.value)) {
    if (options.node_rank < 0) {
      event.action +=
          "; the other ranks were not told (the unit predates group restarts: "
          "run `gpulaunch up --all-nodes` again)";
    } else {
      std::fflush(stdout);
      event.action += "; the group: " + notify_group(name, supervised.nodes, options.node_rank,
                                                     stop, now, options.ssh);
    }
    fmt::print("gpulaunch: {}\n", event.action);
  }
  events.push_back(std::move(event));
  for (const auto& each : events) {
    auto appended = history.append(each);
    if (!appended)
      failures.push_back(appended.error().message);
    else if (!appended->empty())
      fmt::print("gpulaunch record-exit: {}\n", *appended);
  }
  // An unrecorded stop must not let the next start escape the crash-loop budget: `run` stays
  // down while the marker says so (a tmpfs: it does not need the full disk).
  if (!failures.empty()) {
    for (const auto& failure : failures) fmt::print("gpulaunch record-exit: {}\n", failure);
    if (auto marked = history.mark_unrecorded(failures.front()); !marked)
      fmt::print("gpulaunch record-exit: {}\n", marked.error().message);
  } else if (auto cleared = history.clear_unrecorded(); !cleared) {
    fmt::print("gpulaunch record-exit: {}\n", cleared.error().message);
  }
  return 0;
}

int show_events(const std::string& name, bool json, size_t count) {
  const History history(name);
  auto events = history.events(count);
  if (!events) {
    fmt::print(stderr, "{}\n", events.error().message);
    return 1;
  }
  if (json) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& event : *events)
      all.push_back({{"time", format_time(event.time_usec)},
                     {"time_usec", event.time_usec},
                     {"class", event.kind},
                     {"evidence", event.evidence},
                     {"action", event.action},
                     {"gpu_level", event.gpu_level},
                     {"host_level", event.host_level}});
    fmt::print("{}\n", all.dump(2));
    return 0;
  }
  if (events->empty()) {
    fmt::print("no events recorded for {}\n", name);
    return 0;
  }
  for (const auto& event : *events)
    fmt::print("{}  {:<14} {}\n{:26}evidence: {}\n{:26}action:   {}\n",
               format_time(event.time_usec), event.kind, "", "", event.evidence, "", event.action);
  return 0;
}

}  // namespace

int64_t now_usec() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

SupervisedProfile load_supervised(const std::string& name, const std::string& snapshot) {
  SupervisedProfile supervised;
  if (snapshot.empty() || !std::filesystem::exists(snapshot)) return supervised;
  auto profile = load_profile(DirectorySource({}), snapshot);
  if (!profile) return supervised;
  (void)name;
  supervised.restart = profile->restart;
  supervised.kind = profile->engine.kind;
  supervised.nodes = profile->nodes;
  supervised.loaded = true;
  return supervised;
}

Result<void> reset_crash_loop(const std::string& name, const std::string& why) {
  const History history(name);
  if (auto cleared = history.clear_unrecorded(); !cleared) return cleared;
  auto current = history.state_to_update();
  if (current.state.consecutive_failures == 0 && current.problem.empty()) return {};
  SupervisorState state = current.state;
  const long long forgiven = state.consecutive_failures;
  state.consecutive_failures = 0;
  if (auto saved = history.save(state); !saved) return saved;
  auto appended = history.append(SupervisorEvent{
      now_usec(), "operator-reset", why,
      current.problem.empty() ? fmt::format("forgave {} failure(s); starting again", forgiven)
                              : "replaced a bad history (" + current.problem + "); starting again",
      state.gpu_level, state.host_level});
  if (!appended) return std::unexpected(appended.error());
  return {};
}

void add_supervise_commands(CLI::App& app, CliContext& context) {
  auto* record = app.add_subcommand(
      "record-exit", "ExecStopPost=: classify why the engine stopped and record the event");
  record->group("");  // units call it
  static RecordExitOptions record_options;
  record->add_option("--profile", record_options.profile, "Profile name")
      ->required()
      ->check(profile_name_check());
  record->add_option("--snapshot", record_options.snapshot, "The merged profile `up` wrote");
  record->add_option("--node-rank", record_options.node_rank,
                     "This node's rank (multi-node: the other ranks are told of a failure)");
  record->add_option("--ssh", record_options.ssh, "ssh client (tests)");
  record->callback([&context] { context.exit_code = record_exit(record_options); });

  auto* events = app.add_subcommand("events", "Why a profile's engine stopped and what was done");
  static std::string events_profile;
  static bool events_json = false;
  static size_t events_count = 50;
  events->add_option("profile", events_profile, "Profile name")
      ->required()
      ->check(profile_name_check());
  events->add_flag("--json", events_json, "Machine-readable output");
  events->add_option("-n,--count", events_count, "How many of the latest events (default 50)");
  events->callback(
      [&context] { context.exit_code = show_events(events_profile, events_json, events_count); });
}

}  // namespace gl
