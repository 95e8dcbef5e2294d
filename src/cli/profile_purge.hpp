// SPDX-License-Identifier: Apache-2.0
#pragma once
// `down --purge`: everything gpulaunch wrote for a profile besides its unit file, removed, and
// what is left said with the command that removes it. Removed: the installed snapshot (so `check
// --all` and `status` no longer see the profile), root's state directory (history, supervisor
// state, gate record, cache stamps, the engine's home), the runtime directory, and the default
// service user where no other installed profile runs as it. Left: the JIT caches (a rebuild costs
// minutes to hours; the operator decides) and an administrator's own service.user.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "profile/profile.hpp"
#include "util/error.hpp"

namespace gl {

struct PurgePlaces {
  std::filesystem::path snapshot;           // state_paths::snapshot_file
  std::filesystem::path state_directory;    // state_paths::profile_directory
  std::filesystem::path runtime_directory;  // state_paths::runtime_directory
  static PurgePlaces of(const std::string& profile);
};

struct PurgeReport {
  std::vector<std::string> removed;  // "removed X (what)"
  std::vector<std::string> left;     // "left X: why; remove with: COMMAND"
};

// Removes the snapshot and the two directories (each confined, never following a link); a
// missing one is skipped. The first failure stops the purge and comes back with what it had done.
Result<void> purge_profile_files(const PurgePlaces& places, PurgeReport& report);

// What the installed profile leaves behind: its cache root (or each cache directory outside it),
// with the command that removes it.
void report_left_caches(const Profile& installed, PurgeReport& report);

// The default service user gpulaunch created for `installed` (profile/service_user), removed with
// userdel unless one of `others` (the other installed profiles) runs as it; an administrator's
// service.user, or a shared one, is left and said so.
Result<void> purge_service_user(const Profile& installed, const std::vector<Profile>& others,
                                PurgeReport& report);

}  // namespace gl
