// SPDX-License-Identifier: Apache-2.0
#include <chrono>
#include <filesystem>

#include <fmt/core.h>

#include "cli/all_nodes.hpp"
#include "cli/context.hpp"
#include "cli/exit_status.hpp"
#include "cli/lifecycle.hpp"
#include "cli/metrics.hpp"
#include "cli/profile_lookup.hpp"
#include "cli/profile_purge.hpp"
#include "cli/supervise.hpp"
#include "cli/up_output.hpp"
#include "log/logger.hpp"
#include "plan/run_settings.hpp"
#include "profile/installed_snapshot.hpp"
#include "profile/loader.hpp"
#include "profile/profile_name.hpp"
#include "profile/validate.hpp"
#include "supervise/history.hpp"
#include "supervise/unit_transition.hpp"
#include "supervise/up_sequence.hpp"
#include "util/terminal_text.hpp"
#include "util/timekeeper.hpp"

namespace gl {
namespace {

struct DownOptions {
  std::string profile;
  bool purge = false;
  bool runtime = false;
  bool user = false;
};

// `down --purge` past the unit file: the snapshot, root's state, the metrics file and the service
// user go; the caches stay, each with its command. Every line says what went or what stays.
int purge_root_state(const std::string& name) {
  auto installed = load_installed_profile(name);
  if (!installed) logging::warning(fmt::format("warning: {}", installed.error().message));
  std::vector<Profile> others;
  for (const auto& other : installed_profile_names())
    if (other != name)
      if (auto loaded = load_installed_profile(other); loaded && *loaded)
        others.push_back(std::move(**loaded));
  PurgeReport purged;
  auto removed = purge_profile_files(PurgePlaces::of(name), purged);
  if (removed) remove_profile_metrics(name);
  if (removed && installed && *installed) {
    if (auto user = purge_service_user(**installed, others, purged); !user) removed = user;
    report_left_caches(**installed, purged);
  }
  // The paths are the profile's and its caches', which the engine may have named.
  for (const auto& line : purged.removed) fmt::print("{}\n", terminal_text(line));
  for (const auto& line : purged.left) fmt::print("{}\n", terminal_text(line));
  return removed ? kExitOk : report(removed.error());
}

int down(const CliContext& context, const DownOptions& options) {
  // `down` must work for a profile whose file is gone or broken: the name is enough.
  auto name = profile_name_of(options.profile);
  if (!name) return report(name.error(), kExitUsage);
  const UnitPlacement placement{options.user ? ManagerScope::user : ManagerScope::system,
                                options.runtime};
  const std::string unit = unit_name_for(*name);
  // A typo is not "not running": a name neither on the search path, installed, nor a unit.
  if (auto known = check_known_service(context, *name, placement.scope); !known)
    return report(known.error(), kExitUsage);
  auto manager = connect_systemd(placement.scope);
  if (!manager) return report(manager.error());
  // The unit's TimeoutStopSec= bounds the stop (server.drain_timeout, up to an hour, and its
  // margins, for the stop and again for ExecStopPost=): wait at least that long.
  auto stop = stop_unit(**manager, system_timekeeper(), unit, std::chrono::hours(2));
  if (!stop) return report(stop.error());
  if (!options.user) write_profile_metrics(*name, manager->get());  // kept, up 0, until --purge
  if (stop->was_running) {
    fmt::print("stopped {} ({})\n", unit, stop->job_result);
  } else {
    fmt::print("{} is not running\n", unit);
  }
  // Down stays down across a reboot: the boot no longer starts it. A unit that is not installed
  // has no links to remove (and DisableUnitFiles refuses a name with no file).
  bool unlinked = false;
  if (stop->before.load_state != "not-found") {
    auto disabled = start_at_boot(**manager, unit, false, placement.runtime);
    if (!disabled) return report(disabled.error());
    for (const auto& line : *disabled) fmt::print("{}\n", terminal_text(line));
    unlinked = !disabled->empty();
  }
  if (options.purge) {
    const std::filesystem::path file =
        unit_file_to_purge(placement, unit, stop->before.fragment_path);
    std::error_code error;
    if (std::filesystem::remove(file, error)) {
      fmt::print("removed {}\n", file.string());
      if (auto reloaded = (*manager)->reload(); !reloaded) return report(reloaded.error());
    } else if (error) {
      return report(
          Error{fmt::format("Failed to remove '{}': {}", file.string(), error.message())});
    } else if (unlinked) {
      if (auto reloaded = (*manager)->reload(); !reloaded) return report(reloaded.error());
    }
    // What root wrote for the profile lives under the system's directories: a user manager's
    // profile has none.
    if (!options.user) return purge_root_state(*name);
  } else if (unlinked) {
    if (auto reloaded = (*manager)->reload(); !reloaded) return report(reloaded.error());
  }
  return 0;
}

// `restart` asks only for the metrics of a start that did not become ready: nothing is checked,
// prepared or gated (the unit stays as installed).
class RestartActions final : public UpActions {
 public:
  RestartActions(std::string name, bool user, SystemdManager& manager)
      : name_(std::move(name)), user_(user), manager_(manager) {}
  std::vector<Finding> check() override { return {}; }
  Result<void> prepare_state() override { return {}; }
  std::optional<GateCheck> gate(bool) override { return std::nullopt; }
  void write_metrics() override {
    if (!user_) write_profile_metrics(name_, &manager_);
  }

 private:
  std::string name_;
  bool user_;
  SystemdManager& manager_;
};

// `restart`: the unit as installed, restarted and watched as `up` watches a start, said the same
// way (its progress with the deadline, the failure with the engine's last lines, ready).
int restart(const CliContext& context, const std::string& profile, bool user) {
  auto name = profile_name_of(profile);
  if (!name) return report(name.error(), kExitUsage);
  const std::string unit = unit_name_for(*name);
  const ManagerScope scope = user ? ManagerScope::user : ManagerScope::system;
  if (auto known = check_known_service(context, *name, scope); !known)
    return report(known.error(), kExitUsage);
  auto manager = connect_systemd(scope);
  if (!manager) return report(manager.error());
  auto before = (*manager)->status(unit);
  if (!before) return report(before.error());
  // The deadlines are the installed unit's: `run`'s ready timeout, the drain before it.
  const auto settings = installed_run_settings(*before);
  const RunSettings run = settings.value_or(RunSettings{});
  RestartActions actions(*name, user, **manager);
  PrintedUpOutput output(face_of(*name, *before, settings, user ? " --user" : ""));
  auto code = run_restart(RestartRequest{unit, run.ready_timeout + std::chrono::minutes(2),
                                         run.drain_timeout + kStopKillGrace + kStopTimeoutMargin},
                          **manager, system_timekeeper(), History(*name), actions, output);
  if (!code) return report(code.error());
  if (*code == 0 && !user) write_profile_metrics(*name, manager->get());
  return *code;
}

}  // namespace

void add_down_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand("down", "Stop a profile's service");
  static DownOptions options;
  command->add_option("profile", options.profile, "Profile name")
      ->required()
      ->check(profile_argument_check());
  command->add_flag("--purge", options.purge,
                    "Also remove the unit file and everything gpulaunch wrote for the profile "
                    "(snapshot, history, state, metrics, its own service user); the caches stay, "
                    "each named with the command that removes it");
  command->add_flag("--runtime", options.runtime, "The unit was installed with up --runtime");
  command->add_flag("--user", options.user, "Use the calling user's systemd manager");
  static AllNodesOptions all_nodes;
  static bool on_all_nodes = false;
  command->add_flag("--all-nodes", on_all_nodes,
                    "Stop the profile on every node of 'nodes.hosts', over ssh");
  command->add_option("--ssh", all_nodes.ssh, "ssh client for --all-nodes (default /usr/bin/ssh)");
  command->callback([&context] {
    if (on_all_nodes) {
      auto loaded = load_profile_or_installed(context, options.profile);
      all_nodes.purge = options.purge;
      context.exit_code = loaded ? down_all_nodes(*loaded, all_nodes) : report(loaded.error());
      return;
    }
    context.exit_code = down(context, options);
  });

  auto* restart_command = app.add_subcommand(
      "restart",
      "Restart a profile's service and wait until it serves, reporting as `up` does (progress "
      "with its deadline; a failure with the engine's last lines)");
  static std::string restart_profile;
  static bool restart_user = false;
  restart_command->add_option("profile", restart_profile, "Profile name")
      ->required()
      ->check(profile_argument_check());
  restart_command->add_flag("--user", restart_user, "Use the calling user's systemd manager");
  static AllNodesOptions restart_all;
  static bool restart_on_all_nodes = false;
  restart_command->add_flag("--all-nodes", restart_on_all_nodes,
                            "Restart the whole group: stop every rank, then bring every rank up");
  restart_command->add_option("--ssh", restart_all.ssh,
                              "ssh client for --all-nodes (default /usr/bin/ssh)");
  restart_command->callback([&context] {
    if (restart_on_all_nodes) {
      auto loaded = load_profile_or_installed(context, restart_profile);
      context.exit_code = loaded ? restart_all_nodes(*loaded, restart_all) : report(loaded.error());
      return;
    }
    context.exit_code = restart(context, restart_profile, restart_user);
  });
}

}  // namespace gl
