// SPDX-License-Identifier: Apache-2.0
// `gpulaunch prepare-caches --profile=NAME --snapshot=PATH` (hidden): the unit's
// ExecStartPre=+, run by root before the engine starts as the service user. Root does the cache
// upkeep so that what it trusts later (the stamp, the record of the directories it created)
// lives where the engine cannot write, and so that the engine's `run` needs no privilege.

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include <fmt/core.h>

#include "caches/cache_owner.hpp"
#include "caches/cache_records.hpp"
#include "caches/fingerprint_facts.hpp"
#include "caches/prepare.hpp"
#include "cli/context.hpp"
#include "cli/prepare_caches.hpp"
#include "plan/launch_plan.hpp"
#include "profile/installed_snapshot.hpp"
#include "profile/service_user.hpp"
#include "rules/node_probe.hpp"
#include "supervise/exit_status.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/system_users.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// For the journal: one line each, flushed so they keep their order with stderr's.
void say(const std::string& line) {
  fmt::print("gpulaunch: {}\n", line);
  std::fflush(stdout);
}

}  // namespace

Result<void> prepare_profile_caches(const std::string& name, const Profile& profile,
                                    const std::string& state_root) {
  // `up` creates the profile's own user before it installs a unit that names it: without that
  // user, the installed unit is an older gpulaunch's, with no User= (its engine runs as root),
  // so its caches stay root's until `up` installs the new unit.
  std::optional<DirectoryOwner> older_unit;
  if (service_user_is_default(profile)) {
    GL_TRY(auto account, lookup_user(service_user(profile)));
    if (!account) {
      older_unit = DirectoryOwner{0, 0};
      say(
          fmt::format("the installed unit predates one user per profile and runs the engine as "
                      "root: run `gpulaunch up {}` to move it to its own user {}",
                      name, service_user(profile)));
    }
  }
  GL_TRY(auto owner, older_unit ? Result<DirectoryOwner>(*older_unit) : cache_owner(profile));
  const LaunchPlan plan = make_launch_plan(profile);
  const Facts facts = probe_node_for(profile, plan, ShellEnvironment::current());
  GL_TRY(auto report,
         prepare_caches(plan, fingerprint_inputs(profile, plan, facts),
                        PrepareOptions{cache_records_directory(name, state_root), owner},
                        [](const Removal& removal) {
                          say(fmt::format("removed {} ({} bytes): {}", removal.what, removal.bytes,
                                          removal.why));
                        }));
  // Said at the one start that moved them: the records name the new owner from then on.
  if (const auto& moved = report.owner_change)
    say(
        fmt::format("caches moved to the service user {} (uid {}, was uid {}): {} entries "
                    "handed over, compiled kernels kept",
                    service_user(profile), moved->to.uid, moved->from, moved->entries));
  if (!report.change.empty())
    say(fmt::format("JIT caches were stale: {}", report.change));
  else
    say(fmt::format("JIT caches current (fingerprint {})", report.fingerprint));
  for (const auto& kept : report.kept) say("kept " + kept);
  for (const auto& held : report.held_locks) say("lock still held, left in place: " + held);
  return {};
}

namespace {

// The installed snapshot at `snapshot` (profile/installed_snapshot), then its caches.
Result<void> prepare_installed_caches(const std::string& name, const std::string& snapshot,
                                      const std::string& state_root) {
  GL_TRY(auto installed, load_installed_profile(name, snapshot));
  if (!installed) {
    say(fmt::format(
        "no profile snapshot at '{}': JIT caches not checked (install with `gpulaunch up`)",
        snapshot));
    return {};
  }
  return prepare_profile_caches(name, *installed, state_root);
}

// The verdict for `run`, which starts next as the service user: the marker holds why the start
// was refused, and is gone once a start was allowed.
Result<void> leave_verdict(const std::string& name, const std::optional<std::string>& refusal) {
  const auto marker = state_paths::caches_refused_marker(name);
  GL_TRY(auto directory, open_root_owned_directory(marker.parent_path()));
  if (!refusal) return remove_regular_at(directory.get(), marker.filename().string(), marker);
  return write_atomically_at(directory.get(), marker.filename().string(), *refusal + "\n", 0644,
                             marker.string());
}

}  // namespace

void add_prepare_caches_command(CLI::App& app, CliContext& context) {
  auto* command =
      app.add_subcommand("prepare-caches",
                         "Before each start, as root (ExecStartPre=+): bring the JIT caches up to "
                         "date with the node and create the missing ones for the service user");
  command->group("");  // units call it; people use `up` and `cache clear`
  static std::string profile, snapshot;
  static std::string state_root{state_paths::kStateRoot};
  command->add_option("--profile", profile, "Profile the caches belong to")->required();
  command->add_option("--snapshot", snapshot, "The merged profile `up` installed")->required();
  command->add_option("--state-root", state_root, "Where root keeps its state (tests)");
  command->callback([&context] {
    auto prepared = prepare_installed_caches(profile, snapshot, state_root);
    std::optional<std::string> refusal;
    if (!prepared) refusal = prepared.error().message;
    if (auto left = leave_verdict(profile, refusal); !left)
      say(fmt::format("{}; the start goes on without it", left.error().message));
    if (refusal)
      // A refusal would refuse the same way at every start: a configuration error. The unit
      // ignores this status (ExecStartPre=-+); `run` reads the marker and exits with it.
      context.exit_code = report(Error{"gpulaunch: " + *refusal}, kExitConfig);
  });
}

}  // namespace gl
