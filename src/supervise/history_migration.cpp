// SPDX-License-Identifier: Apache-2.0
#include "supervise/history_migration.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/core.h>

#include "supervise/history.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/try.hpp"
#include "util/unique_fd.hpp"

namespace gl {

namespace {

std::string errno_text(int error) {
  return std::strerror(error);
}

struct LegacyHistory {
  std::optional<SupervisorState> state;
  std::vector<SupervisorEvent> events;
};

// Reads the old layout's history from the user-owned directory: bounded, no link followed,
// strictly parsed. An error says which file and why.
Result<LegacyHistory> read_legacy_history(int directory_fd, const std::filesystem::path& shown,
                                          const HistoryPlace& names) {
  LegacyHistory legacy;
  const std::string state_path = (shown / names.supervisor_name).string();
  GL_TRY(auto state, read_regular_at(directory_fd, names.supervisor_name, kMaxSupervisorStateBytes,
                                     state_path));
  if (state) {
    auto parsed = parse_supervisor_state(state->content);
    if (!parsed) return failf("'{}': {}", state_path, parsed.error().message);
    legacy.state = *parsed;
  }
  const std::string events_path = (shown / names.events_name).string();
  GL_TRY(auto events,
         read_regular_at(directory_fd, names.events_name, kMaxEventsBytes, events_path));
  if (events) {
    std::string_view text = events->content;
    for (size_t number = 1; !text.empty(); ++number) {
      const size_t end = std::min(text.find('\n'), text.size());
      const auto line = text.substr(0, end);
      text.remove_prefix(std::min(text.size(), end + 1));
      if (line.empty()) continue;
      auto event = parse_event(line);
      if (!event) return failf("'{}' line {}: {}", events_path, number, event.error().message);
      legacy.events.push_back(std::move(*event));
    }
  }
  return legacy;
}

Result<UniqueFd> open_child_directory(int parent_fd, const std::string& name,
                                      const std::filesystem::path& shown) {
  UniqueFd fd(::openat(parent_fd, name.c_str(),
                       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return failf("Failed to open '{}': {}", shown.string(), errno_text(errno));
  return fd;
}

}  // namespace

Result<std::optional<std::string>> migrate_legacy_state(const std::filesystem::path& state_root,
                                                        std::string_view profile) {
  const HistoryPlace names = history_place(profile);
  const std::string name(profile);
  const std::string engine_name = state_paths::engine_home(profile).filename().string();
  const std::string staging = "." + name + ".migrating";
  const auto old_path = state_root / name;
  GL_TRY(auto root, open_root_owned_directory(state_root));

  struct stat info {};
  if (::fstatat(root.get(), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT)
      return failf("Failed to stat '{}': {}", old_path.string(), errno_text(errno));
    // An interrupted migration left everything in the staging directory: finish it.
    if (::fstatat(root.get(), staging.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISDIR(info.st_mode) && info.st_uid == 0) {
      if (::renameat(root.get(), staging.c_str(), root.get(), name.c_str()) != 0)
        return failf("Failed to rename '{}': {}", (state_root / staging).string(),
                     errno_text(errno));
      return std::optional<std::string>{
          fmt::format("finished an interrupted migration of '{}'", old_path.string())};
    }
    return std::optional<std::string>{};
  }
  if (S_ISLNK(info.st_mode))
    return failf("Refusing to use '{}': it is a symbolic link", old_path.string());
  if (!S_ISDIR(info.st_mode))
    return failf("Refusing to use '{}': it is not a directory", old_path.string());
  if (info.st_uid == 0) return std::optional<std::string>{};  // root's already

  GL_TRY(auto old_directory, open_child_directory(root.get(), name, old_path));
  auto legacy = read_legacy_history(old_directory.get(), old_path, names);
  if (!legacy)
    return failf(
        "Refusing to migrate '{}' (owned by uid {}) to root-owned history: {}. Move that file "
        "away to start a fresh history, then run `gpulaunch up` again",
        old_path.string(), info.st_uid, legacy.error().message);

  // Root's new directory, filled, then the old one moved into it as the engine's home, then the
  // whole renamed into place: each step is one rename, and an interruption is finished above.
  if (::mkdirat(root.get(), staging.c_str(), 0755) != 0 && errno != EEXIST)
    return failf("Failed to create '{}': {}", (state_root / staging).string(), errno_text(errno));
  GL_TRY(auto staged, open_root_owned_directory(state_root / staging));
  if (::fchmod(staged.get(), 0755) != 0)
    return failf("Failed to set the mode of '{}': {}", (state_root / staging).string(),
                 errno_text(errno));
  const auto new_shown = [&](const std::string& file) { return (old_path / file).string(); };
  if (legacy->state)
    GL_TRY_VOID(write_atomically_at(staged.get(), names.supervisor_name,
                                    supervisor_state_to_json(*legacy->state), kHistoryFileMode,
                                    new_shown(names.supervisor_name)));
  if (!legacy->events.empty())
    GL_TRY_VOID(write_atomically_at(staged.get(), names.events_name, events_text(legacy->events),
                                    kHistoryFileMode, new_shown(names.events_name)));
  if (::renameat(root.get(), name.c_str(), staged.get(), engine_name.c_str()) != 0)
    return failf("Failed to move '{}' to '{}': {}", old_path.string(),
                 (old_path / engine_name).string(), errno_text(errno));
  if (::renameat(root.get(), staging.c_str(), root.get(), name.c_str()) != 0)
    return failf("Failed to rename '{}' to '{}': {}", (state_root / staging).string(),
                 old_path.string(), errno_text(errno));
  // The engine's copies are history no one reads any more.
  ::unlinkat(old_directory.get(), names.supervisor_name.c_str(), 0);
  ::unlinkat(old_directory.get(), names.events_name.c_str(), 0);
  return std::optional<std::string>{fmt::format(
      "migrated '{}' (owned by uid {}): it is now the engine's home '{}'; its history ({} "
      "event(s)) is root's",
      old_path.string(), info.st_uid, (old_path / engine_name).string(), legacy->events.size())};
}

Result<std::optional<std::string>> migrate_legacy_state(std::string_view profile) {
  return migrate_legacy_state(state_paths::profile_directory(profile).parent_path(), profile);
}

}  // namespace gl
