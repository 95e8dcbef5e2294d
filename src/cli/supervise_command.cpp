// SPDX-License-Identifier: Apache-2.0
// `record-exit` (ExecStopPost=: classify the stop, record it, decide; the sequence is
// supervise/record_exit's, the decisions supervise/record_stop's), `record-start` (ExecStartPost=:
// the ready start's phases; supervise/record_start) and `events PROFILE`.

#include "cli/supervise.hpp"

#include <cstdlib>
#include <filesystem>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "caches/cache_records.hpp"
#include "caches/quarantine.hpp"
#include "catalog/journal_messages.hpp"
#include "cli/context.hpp"
#include "cli/exit_status.hpp"
#include "cli/metrics.hpp"
#include "cli/profile_lookup.hpp"
#include "cli/record_start.hpp"
#include "cli/stop_level.hpp"
#include "group/peer_notice.hpp"
#include "group/remote.hpp"
#include "log/logger.hpp"
#include "plan/launch_plan.hpp"
#include "profile/installed_snapshot.hpp"
#include "supervise/cgroup.hpp"
#include "supervise/exit_class.hpp"
#include "supervise/group_policy.hpp"
#include "supervise/history.hpp"
#include "supervise/quarantine.hpp"
#include "supervise/record_exit.hpp"
#include "supervise/record_stop.hpp"
#include "supervise/stall_report.hpp"
#include "supervise/start_phases.hpp"
#include "systemd/journal.hpp"
#include "systemd/manager.hpp"
#include "util/state_paths.hpp"
#include "util/terminal_text.hpp"
#include "util/timekeeper.hpp"

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

struct RecordExitOptions {
  std::string profile;
  std::string snapshot;
  long long node_rank = -1;  // multi-node profiles: this node's rank
  std::string ssh = std::string(kSystemSsh);
};

// record-exit's acts and lines, real: caches/quarantine, group/peer_notice over ssh, the journal
// (ExecStopPost='s stdout) with the class as a field.
class JournalStopActions final : public StopActions {
 public:
  JournalStopActions(const std::string& name, const Profile* installed,
                     const std::optional<LaunchPlan>& plan, std::filesystem::path records,
                     long long rank, std::string ssh)
      : name_(name),
        installed_(installed),
        plan_(plan),
        records_(std::move(records)),
        rank_(rank),
        ssh_(std::move(ssh)) {}

  Result<std::filesystem::path> quarantine(std::string_view cache, int64_t time_usec) override {
    if (!plan_) return fail("no installed profile names the caches");
    return quarantine_cache(*plan_, cache, time_usec, records_);
  }
  std::string tell_group(const Classification& stop, int64_t time_usec) override {
    std::fflush(stdout);
    auto runner = ssh_rank_runner(notice_nodes(installed_->nodes), ssh_);
    return notify_group(name_, installed_->nodes, rank_, stop, time_usec, *runner);
  }
  void stable(std::string_view action) override {
    logging::Fields stable;
    stable.kind = kStableMessage;
    logging::info(fmt::format("gpulaunch: stable: {}", action), stable);
  }
  void classified(const Classification& stop, const SupervisorEvent& event) override {
    logging::Fields fields;
    fields.kind = event.kind;  // the class's own MESSAGE_ID, or cache-quarantined's
    fields.exit_class = std::string(exit_class_name(stop.value));
    logging::write(stop_level(stop.value),
                   fmt::format("gpulaunch: stop classified as {}: {}; action: {}", event.kind,
                               event.evidence, event.action),
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
    logging::warning(fmt::format("gpulaunch record-exit: {}", line));
  }
  void error(std::string_view line) override {
    logging::error(fmt::format("gpulaunch record-exit: {}", line));
  }

 private:
  const std::string& name_;
  const Profile* installed_;
  const std::optional<LaunchPlan>& plan_;
  std::filesystem::path records_;
  long long rank_;
  std::string ssh_;
};

// Wires record-exit's sequence (supervise/record_exit) to what systemd handed ExecStopPost=, the
// installed snapshot (read once), the real manager, journal, clock and cgroup.
int record_exit_command(const RecordExitOptions& options) {
  const std::string& name = options.profile;
  auto installed = load_installed_profile(name, options.snapshot);
  if (!installed)
    fmt::print("gpulaunch record-exit: caches not examined: {}\n",
               terminal_text(installed.error().message));
  const Profile* profile = installed && *installed ? &**installed : nullptr;
  const SupervisedProfile supervised = supervised_of(profile);
  StopInput input;
  input.report.unit = unit_name_for(name);
  input.report.service_result = env_or_empty("SERVICE_RESULT");
  input.report.exit_code = env_or_empty("EXIT_CODE");
  input.report.exit_status = env_or_empty("EXIT_STATUS");
  input.invocation_id = env_or_empty("INVOCATION_ID");
  input.cgroup_oom_kills = own_cgroup_oom_kills();
  input.restart = supervised.restart;
  input.kind = supervised.kind;
  std::optional<LaunchPlan> plan;
  if (profile) plan = make_launch_plan(*profile);
  const auto records = cache_records_directory(name, state_paths::kStateRoot);
  if (plan) {
    if (auto places = movable_caches(*plan, records))
      input.caches = std::move(*places);
    else
      logging::warning(
          fmt::format("gpulaunch record-exit: caches not examined: {}", places.error().message));
  }
  auto manager = connect_systemd(ManagerScope::system);
  auto journal = open_journal();
  JournalStopActions actions(name, profile, plan, records, options.node_rank, options.ssh);
  record_exit(std::move(input), StopGroup{supervised.nodes.hosts.size(), options.node_rank},
              History(name), manager ? manager->get() : nullptr, journal ? journal->get() : nullptr,
              system_timekeeper(), actions);
  write_profile_metrics(name, manager ? manager->get() : nullptr, profile);
  return 0;
}

int show_events(const std::string& name, bool json, size_t count) {
  const History history(name);
  auto events = history.events(count);
  if (!events) {
    logging::error(events.error().message);
    return 1;
  }
  if (json) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& event : *events) {
      nlohmann::ordered_json one{{"time", format_time(event.time_usec)},
                                 {"time_usec", event.time_usec},
                                 {"class", event.kind},
                                 {"evidence", event.evidence},
                                 {"action", event.action},
                                 {"gpu_level", event.gpu_level},
                                 {"host_level", event.host_level}};
      // A stall's evidence is run's stall line: what it saw, as fields.
      if (auto stall = parse_stall_line(event.evidence))
        one["stall"] = {
            {"signal", stall_signal_name(stall->signal)},
            {"no_progress_seconds", stall->still_for.count()},
            {"in_flight", stall->in_flight ? nlohmann::json(*stall->in_flight) : nlohmann::json()},
            {"tokens", stall->tokens ? nlohmann::json(*stall->tokens) : nlohmann::json()}};
      if (!event.journal_cursor.empty()) {
        one["journal_cursor"] = event.journal_cursor;
        one["thread_dump"] = thread_dump_command(unit_name_for(name), event.journal_cursor);
      }
      if (event.start) one["start"] = start_timeline_json(*event.start);
      all.push_back(std::move(one));
    }
    fmt::print("{}\n", all.dump(2));
    return 0;
  }
  if (events->empty()) {
    fmt::print("no events recorded for {}\n", name);
    return 0;
  }
  for (const auto& event : *events) {
    fmt::print("{}  {:<14} {}\n{:26}evidence: {}\n{:26}action:   {}\n",
               format_time(event.time_usec), event.kind, "", "", terminal_text(event.evidence), "",
               terminal_text(event.action));
    if (!event.journal_cursor.empty())
      fmt::print("{:26}threads:  {}\n", "",
                 thread_dump_command(unit_name_for(name), event.journal_cursor));
  }
  return 0;
}

}  // namespace

nlohmann::ordered_json start_timeline_json(const StartTimeline& timeline) {
  nlohmann::ordered_json phases = nlohmann::ordered_json::array();
  for (const auto& span : timeline.phases)
    phases.push_back({{"phase", start_phase_name(span.phase)},
                      {"begin_usec", span.begin_usec},
                      {"end_usec", span.end_usec},
                      {"seconds", span_duration(span, timeline.ready_usec).count()}});
  return {
      {"process_start_usec", timeline.process_start_usec},
      {"ready_usec", timeline.ready_usec},
      {"seconds", timeline.ready_usec > timeline.process_start_usec
                      ? (timeline.ready_usec - timeline.process_start_usec + 500'000) / 1'000'000
                      : 0},
      {"summary", describe_start(timeline)},
      {"phases", std::move(phases)}};
}

int64_t now_usec() {
  return system_timekeeper().now_usec();
}

SupervisedProfile supervised_of(const Profile* installed) {
  SupervisedProfile supervised;
  if (!installed) return supervised;
  supervised.restart = installed->restart;
  supervised.kind = installed->engine.kind;
  supervised.nodes = installed->nodes;
  supervised.parallelism = installed->parallelism;
  supervised.loaded = true;
  return supervised;
}

SupervisedProfile load_supervised(const std::string& name) {
  auto installed = load_installed_profile(name);
  return supervised_of(installed && *installed ? &**installed : nullptr);
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
  record->callback([&context] {
    // Its lines go to the journal (ExecStopPost='s stdout), with the class as a field.
    logging::configure({context.log_threshold, logging::Stream::out, record_options.profile});
    context.exit_code = record_exit_command(record_options);
  });

  auto* record_started = app.add_subcommand(
      "record-start", "ExecStartPost=: record the phases of the start that just became ready");
  record_started->group("");  // units call it
  static std::string started_profile;
  record_started->add_option("--profile", started_profile, "Profile name")
      ->required()
      ->check(profile_name_check());
  record_started->callback([&context] { context.exit_code = record_start(started_profile); });

  auto* events = app.add_subcommand("events", "Why a profile's engine stopped and what was done");
  static std::string events_profile;
  static bool events_json = false;
  static size_t events_count = 50;
  events->add_option("profile", events_profile, "Profile name")
      ->required()
      ->check(profile_name_check());
  events->add_flag("--json", events_json, "Machine-readable output");
  events->add_option("-n,--count", events_count, "How many of the latest events (default 50)");
  events->callback([&context] {
    // A typo is refused, not shown as a profile with no events.
    if (auto known = check_known_service(context, events_profile, ManagerScope::system); !known) {
      context.exit_code = report(known.error(), kExitUsage);
      return;
    }
    context.exit_code = show_events(events_profile, events_json, events_count);
  });
}

}  // namespace gl
