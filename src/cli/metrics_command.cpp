// SPDX-License-Identifier: Apache-2.0
// `gpulaunch metrics [PROFILE] [--write]` and write_profile_metrics(): what root reads about a
// profile (the manager's view of its unit, its history, its caches) into supervise/metrics' text.

#include "cli/metrics.hpp"

#include <unistd.h>
#include <filesystem>
#include <optional>
#include <vector>

#include <fmt/core.h>

#include "caches/cache_records.hpp"
#include "caches/cache_state.hpp"
#include "caches/fingerprint_facts.hpp"
#include "cli/context.hpp"
#include "cli/exit_status.hpp"
#include "cli/profile_lookup.hpp"
#include "plan/launch_plan.hpp"
#include "profile/installed_snapshot.hpp"
#include "profile/profile_name.hpp"
#include "rules/node_probe.hpp"
#include "supervise/history.hpp"
#include "supervise/metrics.hpp"
#include "supervise/metrics_file.hpp"
#include "systemd/manager.hpp"
#include "util/state_paths.hpp"
#include "util/terminal_text.hpp"
#include "util/timekeeper.hpp"

namespace gl {
namespace {

// The caches of the profile `up` installed (`installed`: its snapshot, read by the caller; null:
// read here), as `gpulaunch cache` sees them; nullopt when there is none or it cannot be read.
std::optional<std::vector<CacheStatus>> installed_caches(const std::string& name,
                                                         const Profile* installed) {
  std::optional<Profile> loaded;
  if (!installed) {
    auto read = load_installed_profile(name);
    if (!read || !*read) return std::nullopt;
    loaded = std::move(**read);
    installed = &*loaded;
  }
  const LaunchPlan plan = make_launch_plan(*installed);
  auto report = inspect_caches(
      plan,
      fingerprint_inputs(*installed, plan,
                         probe_node_for(*installed, plan, ShellEnvironment::current())),
      cache_records_directory(name, state_paths::kStateRoot));
  if (!report) return std::nullopt;
  return report->caches;
}

// What root knows about `name` now. A manager that cannot say leaves the unit unknown (not up).
ProfileMetricsInput gather(const std::string& name, SystemdManager* manager,
                           const Profile* installed = nullptr) {
  ProfileMetricsInput input;
  input.profile = name;
  input.unit.name = unit_name_for(name);
  if (manager)
    if (auto status = manager->status(input.unit.name)) input.unit = *status;
  if (auto state = History(name).state())
    input.state = *state;
  else
    fmt::print(stderr, "warning: {}\n", terminal_text(state.error().message));
  input.caches = installed_caches(name, installed);
  input.now_usec = system_timekeeper().now_usec();
  return input;
}

// Root's own state: only root writes it.
bool is_root() {
  return ::geteuid() == 0;
}

struct MetricsOptions {
  std::string profile;
  bool write = false;
  std::string directory{state_paths::kTextfileDirectory};  // hidden --textfile-directory (tests)
};

// Prints one line on a failure (or, with `verbose`, on a skip); true unless it failed.
bool write_one(const ProfileMetricsInput& input, const std::string& directory, bool verbose) {
  auto written = write_metrics_file(directory, input.profile, metrics_text({input}));
  if (!written) {
    fmt::print(stderr, "warning: metrics of {} not written: {}\n", input.profile,
               terminal_text(written.error().message));
    return false;
  }
  if (verbose && !written->done) fmt::print(stderr, "{}\n", written->note);
  return true;
}

int metrics(const MetricsOptions& options) {
  auto manager = connect_systemd(ManagerScope::system);
  std::vector<std::string> names;
  if (!options.profile.empty()) {
    auto name = profile_name_of(options.profile);
    if (!name) return report(name.error(), 2);
    names.push_back(*name);
    if (!manager) fmt::print(stderr, "warning: {}\n", terminal_text(manager.error().message));
  } else {
    if (!manager) return report(manager.error());
    auto listed = (*manager)->list_units(unit_name_pattern());
    if (!listed) return report(listed.error());
    for (const auto& unit : *listed)
      if (auto name = profile_of_unit(unit)) {
        auto status = (*manager)->status(unit);
        if (status && status->load_state == "loaded") names.push_back(*name);
      }
  }
  if (options.write && !is_root())
    return report(Error{"gpulaunch metrics --write: only root writes the metrics files"});
  std::vector<ProfileMetricsInput> inputs;
  for (const auto& name : names) inputs.push_back(gather(name, manager ? manager->get() : nullptr));
  if (!options.write) {
    fmt::print("{}", metrics_text(inputs));
    return 0;
  }
  bool all_written = true;
  for (const auto& input : inputs)
    all_written = write_one(input, options.directory, true) && all_written;
  return all_written ? 0 : 1;
}

// Where node_exporter is not installed there is nothing to write: no need to gather (a walk of
// the caches and the node's facts) for it. The write itself checks the directory again, safely.
bool textfile_directory_exists() {
  std::error_code error;
  return std::filesystem::is_directory(state_paths::kTextfileDirectory, error);
}

}  // namespace

void write_profile_metrics(const std::string& profile, SystemdManager* manager,
                           const Profile* installed) {
  if (!is_root() || !textfile_directory_exists()) return;
  std::unique_ptr<SystemdManager> own;
  if (!manager) {
    auto connected = connect_systemd(ManagerScope::system);
    if (connected) own = std::move(*connected);
    manager = own.get();
  }
  write_one(gather(profile, manager, installed), std::string(state_paths::kTextfileDirectory),
            false);
}

void remove_profile_metrics(const std::string& profile) {
  if (!is_root()) return;
  auto removed = remove_metrics_file(state_paths::kTextfileDirectory, profile);
  if (!removed)
    fmt::print(stderr, "warning: metrics of {} not removed: {}\n", profile,
               terminal_text(removed.error().message));
  else if (removed->done)
    fmt::print("removed {}\n", removed->path);
}

void add_metrics_command(CLI::App& app, CliContext& context) {
  auto* command = app.add_subcommand(
      "metrics", "Print a profile's Prometheus metrics (every installed profile without one)");
  static MetricsOptions options;
  command->add_option("profile", options.profile, "Profile name")->check(profile_name_check());
  command->add_flag("--write", options.write,
                    fmt::format("Write each profile's file into node_exporter's textfile "
                                "directory ({}) instead (root)",
                                state_paths::kTextfileDirectory));
  command->add_option("--textfile-directory", options.directory, "Where --write writes (tests)")
      ->group("");
  command->callback([&context] {
    // A typo is refused, not printed as a profile that is down.
    if (!options.profile.empty())
      if (auto known = check_known_service(context, options.profile, ManagerScope::system);
          !known) {
        context.exit_code = report(known.error(), kExitUsage);
        return;
      }
    context.exit_code = metrics(options);
  });
}

}  // namespace gl
