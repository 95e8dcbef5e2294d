// SPDX-License-Identifier: Apache-2.0
#include <chrono>
#include <filesystem>
#include <optional>

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/nvidia_devices.hpp"
#include "cli/all_nodes.hpp"
#include "cli/colour.hpp"
#include "cli/context.hpp"
#include "cli/exit_status.hpp"
#include "cli/journal_lines.hpp"
#include "cli/lifecycle.hpp"
#include "cli/profile_lookup.hpp"
#include "cli/status_table.hpp"
#include "cli/supervise.hpp"
#include "log/logger.hpp"
#include "plan/launch_plan.hpp"
#include "plan/run_settings.hpp"
#include "profile/installed_snapshot.hpp"
#include "profile/profile_name.hpp"
#include "profile/validate.hpp"
#include "supervise/history.hpp"
#include "supervise/policy.hpp"
#include "supervise/quarantine.hpp"
#include "supervise/record_stop.hpp"
#include "supervise/stall_report.hpp"
#include "supervise/start_phases.hpp"
#include "systemd/journal.hpp"
#include "util/duration.hpp"
#include "util/state_paths.hpp"
#include "util/terminal_text.hpp"

namespace gl {
namespace {

std::optional<long long> uptime_seconds(const UnitStatus& status) {
  if (status.active_state != "active" || status.active_enter_usec == 0) return std::nullopt;
  auto now = std::chrono::duration_cast<std::chrono::microseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  return (now - static_cast<long long>(status.active_enter_usec)) / 1'000'000;
}

std::string last_failure(const UnitStatus& status) {
  if (status.result.empty() || status.result == "success") return "";
  if (status.exec_main_code == 1)
    return fmt::format("{} (exit status {})", status.result, status.exec_main_status);
  if (status.exec_main_code == 2 || status.exec_main_code == 3)
    return fmt::format("{} (signal {})", status.result, status.exec_main_status);
  return status.result;
}

// The rank's role, from the installed unit's `run` settings (plan/run_settings, read back from
// the ExecStart= the manager loaded): a headless rank's carry a rendezvous.
struct RoleInUnit {
  RankRole role = RankRole::serving;
  std::string rendezvous;  // HOST:PORT for a headless rank
  // A serving rank whose health server is a stub: rank 0's liveness watches the group.
  bool rank0_watches = false;
};

RoleInUnit role_in_unit(const std::vector<std::string>& exec_start) {
  // gpulaunch run SETTINGS... -- ENGINE...; a unit whose main process is not `run` has no role.
  if (exec_start.size() < 2 || exec_start[1] != "run") return {};
  auto settings =
      parse_run_settings(std::vector<std::string>(exec_start.begin() + 2, exec_start.end()));
  if (!settings) return {};
  RoleInUnit role;
  role.rank0_watches = settings->rank0_watches;
  if (settings->rendezvous) {
    role.role = RankRole::headless;
    role.rendezvous = rendezvous_text(*settings->rendezvous);
  }
  return role;
}

// The unit's last journal lines, as `systemctl status` ends with them; nothing where the journal
// cannot be read (it says so).
void print_journal_tail(const std::string& unit) {
  constexpr size_t kTailLines = 10;
  auto journal = open_journal();
  auto entries = journal ? (*journal)->tail(unit, kTailLines)
                         : Result<std::vector<JournalEntry>>(std::unexpected(journal.error()));
  if (!entries) {
    fmt::print("  journal: {}\n", terminal_text(entries.error().message));
    return;
  }
  if (entries->empty()) return;
  fmt::print("\n");
  for (const auto& entry : *entries) fmt::print("{}\n", journal_line(entry));
}

int status(const CliContext& context, const std::string& profile, bool json, bool user) {
  const ManagerScope scope = user ? ManagerScope::user : ManagerScope::system;
  std::vector<std::string> names;
  if (!profile.empty()) {
    auto name = profile_name_of(profile);
    if (!name) return report(name.error(), kExitUsage);
    if (auto known = check_known_service(context, *name, scope); !known)
      return report(known.error(), kExitUsage);
    names.push_back(*name);
  }
  auto manager = connect_systemd(scope);
  if (!manager) return report(manager.error(), kExitUsage);
  if (profile.empty()) {
    auto listed = (*manager)->list_units(unit_name_pattern());
    if (!listed) return report(listed.error());
    // The device oneshot shares the units' prefix and is no profile.
    for (const auto& unit : *listed)
      if (auto name = profile_of_unit(unit); name && unit != kNvidiaDevicesUnit)
        names.push_back(*name);
    // An installed profile whose unit systemd does not have (down and disabled) is a row too.
    for (auto& installed : installed_profile_names()) names.push_back(std::move(installed));
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
  }
  const bool overview = profile.empty();
  const int64_t now = now_usec();
  std::vector<ServiceRow> rows;
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  int exit_code = 0;
  for (const auto& name : names) {
    const std::string unit = unit_name_for(name);
    auto state = (*manager)->status(unit);
    if (!state) return report(state.error());
    // The supervisor's view: failures in a row, the step-down ladder, the last classified event.
    const History history(name);
    auto read = history.state();
    const SupervisorState supervisor = read.value_or(SupervisorState{});
    const std::string history_problem = read ? "" : read.error().message;
    // Engine, endpoint and GPUs are the installed snapshot's (none: shown as "-").
    const auto snapshot = load_installed_profile(name);
    const Profile* installed = snapshot && *snapshot ? &**snapshot : nullptr;
    const ServiceRow row = service_row(name, *state, supervisor, installed);
    if (state->load_state != "loaded") {
      if (!overview) {
        logging::error(fmt::format("{} is not installed (run 'gpulaunch up {}')", unit, name));
        exit_code = kExitNotRunning;  // as `systemctl status` for a unit that is not there
        continue;
      }
      rows.push_back(row);
      if (json) all.push_back(service_row_json(row, now));
      continue;
    }
    rows.push_back(row);
    const auto uptime = uptime_seconds(*state);
    std::string last_event;
    std::string last_stop;    // the last stop, when a later event (a start) followed it
    std::string thread_dump;  // the last stop's, a stall's: where its thread dump is
    if (auto events = history.events(50); events && !events->empty()) {
      // A restart's `started` event follows the stop: the stop's action ("restart after 20s
      // (after serving 14min: ...)") and a stall's thread dump stay in view while the engine
      // serves again.
      const SupervisorEvent* stop = previous_stop_event(*events);
      if (stop && stop != &events->back()) last_stop = stop->kind + ": " + stop->action;
      if (stop && !stop->journal_cursor.empty())
        thread_dump = thread_dump_command(unit, stop->journal_cursor);
      last_event = events->back().kind + ": " + events->back().action;
      if (auto stall = parse_stall_line(events->back().evidence))
        last_event = fmt::format("{}: {}; {}", events->back().kind, describe_stall(*stall),
                                 events->back().action);
    }
    const auto unrecorded = history.unrecorded().value_or(std::nullopt);
    // Forgiveness happens at a stop, from how long this invocation served.
    const bool serving = state->active_state == "active";
    const InvocationTimes times{static_cast<int64_t>(state->main_start_usec),
                                static_cast<int64_t>(state->active_enter_usec),
                                serving ? 0 : static_cast<int64_t>(state->active_exit_usec)};
    const RestartSettings settings = load_supervised(name).restart;
    const std::string forgiveness = forgiveness_outlook(
        supervisor, serving ? served_for(times, supervisor, now_usec()) : Seconds{0}, serving,
        settings);
    const RoleInUnit role = role_in_unit(state->exec_start);
    if (json) {
      const nlohmann::json dump =
          thread_dump.empty() ? nlohmann::json() : nlohmann::json(thread_dump);
      nlohmann::ordered_json entry{
          {"profile", name},
          {"unit", unit},
          {"role", rank_role_name(role.role)},
          {"rendezvous",
           role.rendezvous.empty() ? nlohmann::json() : nlohmann::json(role.rendezvous)},
          {"liveness_by_rank0", role.rank0_watches},
          {"state", state->active_state},
          {"sub_state", state->sub_state},
          {"phase", state->status_text},
          {"main_pid", state->main_pid},
          {"uptime_seconds", uptime ? nlohmann::json(*uptime) : nlohmann::json()},
          {"restarts", state->restarts},
          {"last_failure", last_failure(*state)},
          {"consecutive_failures", supervisor.consecutive_failures},
          {"failed_starts", failed_starts(supervisor)},
          {"budget", settings.budget},
          {"deaths_after_serving", supervisor.deaths_after_serving},
          {"step_down",
           {{"gpu_memory_level", supervisor.gpu_level},
            {"concurrency_level", supervisor.host_level}}},
          {"last_class", supervisor.last_class},
          {"forgiveness", forgiveness},
          {"history_problem", history_problem},
          {"unrecorded", unrecorded ? nlohmann::json(*unrecorded) : nlohmann::json()},
          {"last_event", last_event},
          {"last_stop", last_stop},
          {"thread_dump", dump},
          {"last_start", supervisor.last_start
                             ? nlohmann::json(start_timeline_json(*supervisor.last_start))
                             : nlohmann::json()},
          {"unit_file", state->fragment_path}};
      // The overview's columns, under the names the row's JSON gives them.
      const nlohmann::ordered_json columns = service_row_json(row, now);
      for (const auto& [key, value] : columns.items())
        if (!entry.contains(key)) entry[key] = value;
      all.push_back(std::move(entry));
      continue;
    }
    if (overview) continue;
    fmt::print("{} ({})\n", name, unit);
    fmt::print("  role:     {}\n",
               role.role == RankRole::headless
                   ? fmt::format("headless (no HTTP; joins rank 0 at {})", role.rendezvous)
                   : std::string("serving"));
    if (role.rank0_watches)
      fmt::print("  liveness: rank 0 watches the group (this rank's health server is a stub)\n");
    fmt::print("  engine:   {}\n", row.engine.empty() ? "-" : row.engine);
    // Coloured as the overview's STATE column is, on a terminal only.
    fmt::print("  state:    {} ({}) since {}\n",
               paint(state->active_state, state_tone(state->active_state)), state->sub_state,
               format_ago(row.since_usec, now));
    fmt::print("  phase:    {}\n",
               state->status_text.empty() ? "-" : terminal_text(state->status_text));
    fmt::print("  main pid: {}\n", state->main_pid ? std::to_string(state->main_pid) : "-");
    fmt::print("  uptime:   {}\n", uptime ? format_duration(Seconds{*uptime}) : "-");
    fmt::print("  restarts: {}\n", state->restarts);
    auto failure = last_failure(*state);
    // The failure and the event quote engine lines.
    fmt::print("  last failure: {}\n", failure.empty() ? "-" : terminal_text(failure));
    fmt::print("  failures in a row: {}{}\n", supervisor.consecutive_failures,
               supervisor.last_class.empty() ? "" : " (last: " + supervisor.last_class + ")");
    // What the budget counts, and the deaths it does not (each restarted: it had served).
    fmt::print(
        "  failed starts: {} of restart.budget {} (never ready, or died within {} of "
        "ready){}\n",
        failed_starts(supervisor), settings.budget, format_duration(settings.probation),
        supervisor.deaths_after_serving == 0
            ? ""
            : fmt::format("; {} death(s) after serving longer, each restarted",
                          supervisor.deaths_after_serving));
    fmt::print("  step-down: GPU memory level {}, concurrency level {}{}\n", supervisor.gpu_level,
               supervisor.host_level, forgiveness.empty() ? "" : " (" + forgiveness + ")");
    if (!history_problem.empty()) fmt::print("  history: {}\n", terminal_text(history_problem));
    if (unrecorded)
      fmt::print("  history: a stop went unrecorded: {}\n", terminal_text(*unrecorded));
    fmt::print("  last event: {}\n", last_event.empty() ? "-" : terminal_text(last_event));
    if (!last_stop.empty()) fmt::print("  last stop:  {}\n", terminal_text(last_stop));
    if (!thread_dump.empty()) fmt::print("  thread dump: {}\n", thread_dump);
    if (supervisor.last_start) {
      fmt::print("  last start: {}\n", describe_start(*supervisor.last_start));
      for (const auto& span : supervisor.last_start->phases)
        fmt::print("    {:<14}{:>10}\n", start_phase_name(span.phase),
                   format_duration(span_duration(span, supervisor.last_start->ready_usec)));
    }
    fmt::print("  endpoint: {}\n",
               role.role == RankRole::headless || row.endpoint.empty() ? "-" : row.endpoint);
    fmt::print("  gpus:     {}\n",
               row.gpus.empty() ? "-" : fmt::format("{}", fmt::join(row.gpus, ",")));
    fmt::print("  unit file: {}\n", state->fragment_path);
    print_journal_tail(unit);
    if (state->active_state != "active") exit_code = std::max(exit_code, kExitNotRunning);
  }
  if (json)
    fmt::print("{}\n", all.dump(2));
  else if (overview && rows.empty())
    fmt::print("no gpulaunch services are loaded or installed\n");
  else if (overview)
    fmt::print("{}", status_table(rows, now, stdout_colour()));
  return exit_code;
}

}  // namespace

void add_status_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("status", "Show the state of one or all gpulaunch services");
  static std::string profile;
  static bool json = false, user = false;
  command->add_option("profile", profile, "Profile name (default: all)")
      ->check(profile_argument_check());
  command->add_flag("--json", json, "Machine-readable output");
  command->add_flag("--user", user, "Use the calling user's systemd manager");
  static AllNodesOptions all_nodes;
  static bool on_all_nodes = false;
  command->add_flag("--all-nodes", on_all_nodes,
                    "Status of the profile on every node of 'nodes.hosts', over ssh");
  command->add_option("--ssh", all_nodes.ssh, "ssh client for --all-nodes (default /usr/bin/ssh)");
  command->callback([&context] {
    if (on_all_nodes) {
      auto loaded = load_profile_or_installed(context, profile);
      context.exit_code = !loaded ? report(loaded.error())
                          : json  ? status_all_nodes_json(*loaded, all_nodes)
                                  : status_all_nodes(*loaded, all_nodes);
      return;
    }
    context.exit_code = status(context, profile, json, user);
  });
}

}  // namespace gl
