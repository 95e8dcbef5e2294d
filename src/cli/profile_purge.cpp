// SPDX-License-Identifier: Apache-2.0
#include "cli/profile_purge.hpp"

#include <fmt/core.h>

#include "caches/safe_remove.hpp"
#include "group/remote.hpp"
#include "plan/launch_plan.hpp"
#include "profile/service_user.hpp"
#include "util/byte_size.hpp"
#include "util/process.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/system_users.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

// A directory root wrote, emptied through a confined root (the engine owns parts of it: a link
// it left is removed, never followed), then removed.
Result<RemovedTree> remove_tree(const std::filesystem::path& directory) {
  GL_TRY(auto root, ConfinedRoot::open_own(directory));
  RemovedTree total;
  std::error_code error;
  std::vector<std::string> entries;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error))
    entries.push_back(entry.path().filename().string());
  if (error) return failf("Failed to list '{}': {}", directory.string(), error.message());
  for (const auto& entry : entries) {
    GL_TRY(auto removed, root.remove(entry));
    total.bytes += removed.bytes;
    total.entries += removed.entries;
  }
  if (!std::filesystem::remove(directory, error) && error)
    return failf("Failed to remove '{}': {}", directory.string(), error.message());
  return total;
}

}  // namespace

PurgePlaces PurgePlaces::of(const std::string& profile) {
  return {state_paths::snapshot_file(profile), state_paths::profile_directory(profile),
          state_paths::runtime_directory(profile)};
}

Result<void> purge_profile_files(const PurgePlaces& places, PurgeReport& report) {
  if (exists_no_follow(places.snapshot)) {
    std::error_code error;
    if (!std::filesystem::remove(places.snapshot, error))
      return failf("Failed to remove '{}': {}", places.snapshot.string(), error.message());
    report.removed.push_back(
        fmt::format("removed {} (the installed profile)", places.snapshot.string()));
  }
  const std::pair<const std::filesystem::path*, const char*> trees[] = {
      {&places.state_directory,
       "history, supervisor state, gate record, cache stamps, the engine's home"},
      {&places.runtime_directory, "runtime markers"}};
  for (const auto& [directory, what] : trees) {
    if (!exists_no_follow(*directory)) continue;
    GL_TRY(auto removed, remove_tree(*directory));
    report.removed.push_back(fmt::format("removed {} ({}: {} entries, {})", directory->string(),
                                         what, removed.entries, format_bytes(removed.bytes)));
  }
  return {};
}

void report_left_caches(const Profile& installed, PurgeReport& report) {
  const LaunchPlan plan = make_launch_plan(installed);
  auto left = [&](const std::string& directory, const std::string& what) {
    if (!exists_no_follow(directory)) return;
    std::string size;
    if (auto root = ConfinedRoot::open(directory))
      if (auto usage = root->usage(""); usage && usage->is_directory)
        size = fmt::format(", {}", format_bytes(usage->bytes));
    report.left.push_back(fmt::format("left {} ({}{}): remove with `rm -rf -- {}`", directory, what,
                                      size, shell_quote(directory)));
  };
  left(plan.cache_root, "the JIT caches");
  // A cache the profile put outside the cache root is its own directory.
  const std::filesystem::path root(plan.cache_root);
  for (const auto& cache : plan.caches) {
    const auto relative = std::filesystem::path(cache.directory).lexically_relative(root);
    if (relative.empty() || relative.string().starts_with("..")) left(cache.directory, cache.name);
  }
}

// shadow's userdel (passwd package, Debian's /usr/sbin/userdel): removes the account and, with
// USERGROUPS_ENAB (Debian's login.defs default), its own group; never a home (no -r).
constexpr const char* kUserdel = "/usr/sbin/userdel";

Result<void> purge_service_user(const Profile& installed, const std::vector<Profile>& others,
                                PurgeReport& report) {
  const std::string user = service_user(installed);
  if (!service_user_is_default(installed)) {
    report.left.push_back(fmt::format("left user {} (service.user: the administrator's)", user));
    return {};
  }
  for (const auto& other : others)
    if (other.name != installed.name && service_user(other) == user) {
      report.left.push_back(
          fmt::format("left user {} (profile '{}' runs as it too)", user, other.name));
      return {};
    }
  GL_TRY(auto account, lookup_user(user));
  if (!account) return {};
  GL_TRY(auto deleted, run_process(kUserdel, {user}));
  if (deleted.exit_code != 0)
    return failf("Failed to remove user '{}': {} exited {}", user, kUserdel, deleted.exit_code);
  report.removed.push_back(fmt::format("removed user {} (uid {})", user, account->uid));
  return {};
}

}  // namespace gl
