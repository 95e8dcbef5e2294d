// SPDX-License-Identifier: Apache-2.0
#include "supervise/history.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "supervise/start_phases.hpp"
#include "util/errno_text.hpp"
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

using Json = nlohmann::json;

// events.jsonl is renamed to events.jsonl.1 (replacing the older one) once it reaches this, well
// below the read bound: the history keeps a bounded tail and every read of it succeeds.
constexpr off_t kRotateEventsBytes = 4 * 1024 * 1024;
constexpr std::string_view kRotatedSuffix = ".1";
constexpr size_t kMaxMarkerBytes = 4096;

Result<void> default_replace(int directory_fd, std::string_view name, std::string_view content,
                             mode_t mode, const std::string& shown) {
  return write_atomically_at(directory_fd, name, content, mode, shown);
}

Result<void> default_append(int directory_fd, std::string_view name, std::string_view content,
                            mode_t mode, const std::string& shown) {
  return append_at(directory_fd, name, content, mode, shown);
}

// The history's directories as their owner keeps them (HistoryPlace::owner).
Result<UniqueFd> open_own_directory(const HistoryPlace& place,
                                    const std::filesystem::path& directory) {
  if (place.owner == 0) return open_root_owned_directory(directory);
  return open_user_owned_directory(directory, place.owner);
}

}  // namespace

std::string events_text(const std::vector<SupervisorEvent>& events) {
  std::string text;
  for (const auto& event : events) text += event_to_json(event) + "\n";
  return text;
}

HistoryPlace history_place(std::string_view profile) {
  return {state_paths::profile_directory(profile), state_paths::runtime_directory(profile),
          state_paths::events_file(profile).filename().string(),
          state_paths::supervisor_file(profile).filename().string(),
          state_paths::unrecorded_marker(profile).filename().string()};
}

History::History(HistoryPlace place, HistoryWriter writer)
    : place_(std::move(place)), writer_(std::move(writer)) {
  if (!writer_.replace) writer_.replace = default_replace;
  if (!writer_.append) writer_.append = default_append;
}

Result<SupervisorState> History::state() const {
  const auto path = place_.directory / place_.supervisor_name;
  GL_TRY(auto read, read_regular_nofollow(path, kMaxSupervisorStateBytes));
  if (!read) return SupervisorState{};
  auto state = parse_supervisor_state(read->content);
  if (!state) return failf("Failed to read '{}': {}", path.string(), state.error().message);
  return state;
}

namespace {

// events.jsonl's last kRotateEventsBytes, whole lines, become events.jsonl.1 (written
// atomically, replacing the one before), then events.jsonl is removed for the append to start
// afresh. A tail, not a rename: a file that grew past the read bound before rotation existed
// becomes readable again too.
Result<void> rotate_events(int directory_fd, const std::string& name, const std::string& shown) {
  const int fd =
      ::openat(directory_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return failf("Failed to open '{}' to rotate it: {}", shown, errno_text(errno));
  struct stat info {};
  std::string tail;
  off_t from = 0;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    from = std::max<off_t>(0, info.st_size - kRotateEventsBytes);
    tail.resize(static_cast<size_t>(info.st_size - from));
    size_t got = 0;
    while (got < tail.size()) {
      const ssize_t n =
          ::pread(fd, tail.data() + got, tail.size() - got, from + static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    tail.resize(got);
  }
  ::close(fd);
  if (from > 0) tail.erase(0, std::min(tail.size(), tail.find('\n') + 1));  // a partial line
  const std::string rotated = name + std::string(kRotatedSuffix);
  GL_TRY_VOID(write_atomically_at(directory_fd, rotated, tail, kHistoryFileMode,
                                  shown + std::string(kRotatedSuffix)));
  if (::unlinkat(directory_fd, name.c_str(), 0) != 0)
    return failf("Failed to rotate '{}': {}", shown, errno_text(errno));
  return {};
}

Result<std::vector<SupervisorEvent>> read_events(const std::filesystem::path& path) {
  GL_TRY(const auto read, read_regular_nofollow(path, kMaxEventsBytes));
  std::vector<SupervisorEvent> events;
  if (!read) return events;
  std::string_view text = read->content;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    if (auto event = parse_event(text.substr(0, end))) events.push_back(std::move(*event));
    text.remove_prefix(std::min(text.size(), end + 1));
  }
  return events;
}

}  // namespace

Result<std::vector<SupervisorEvent>> History::events(size_t count) const {
  GL_TRY(std::vector<SupervisorEvent> events, read_events(place_.directory / place_.events_name));
  if (events.size() < count) {  // the rest from the rotated file, older
    GL_TRY(const std::vector<SupervisorEvent> older,
           read_events(place_.directory / (place_.events_name + std::string(kRotatedSuffix))));
    events.insert(events.begin(), older.begin(), older.end());
  }
  if (events.size() > count) events.erase(events.begin(), events.end() - static_cast<long>(count));
  return events;
}

Result<std::optional<std::string>> History::unrecorded() const {
  GL_TRY(auto read,
         read_regular_nofollow(place_.runtime_directory / place_.marker_name, kMaxMarkerBytes));
  if (!read) return std::optional<std::string>{};
  std::string why = read->content;
  while (!why.empty() && why.back() == '\n') why.pop_back();
  return std::optional<std::string>{why.empty() ? std::string("unknown reason") : why};
}

History::Current History::state_to_update() const {
  Current current;
  auto directory = open_own_directory(place_, place_.directory);
  if (!directory) {
    current.problem = directory.error().message;
    return current;
  }
  const auto path = place_.directory / place_.supervisor_name;
  auto read = read_regular_at(directory->get(), place_.supervisor_name, kMaxSupervisorStateBytes,
                              path.string());
  if (!read) {
    current.problem = read.error().message + "; replacing it with a fresh history";
    return current;
  }
  if (!*read) return current;
  auto state = parse_supervisor_state((*read)->content);
  if (!state) {
    current.problem = fmt::format("Failed to read '{}': {}; replacing it with a fresh history",
                                  path.string(), state.error().message);
    return current;
  }
  current.state = *state;
  return current;
}

Result<void> History::create() const {
  GL_TRY_VOID(open_own_directory(place_, place_.directory));
  return {};
}

Result<void> History::save(const SupervisorState& state) const {
  GL_TRY(auto directory, open_own_directory(place_, place_.directory));
  return writer_.replace(directory.get(), place_.supervisor_name, supervisor_state_to_json(state),
                         kHistoryFileMode, (place_.directory / place_.supervisor_name).string());
}

Result<std::string> History::append(const SupervisorEvent& event) const {
  GL_TRY(auto directory, open_own_directory(place_, place_.directory));
  const std::string shown = (place_.directory / place_.events_name).string();
  const std::string line = event_to_json(event) + "\n";
  struct stat info {};
  std::string note;
  if (::fstatat(directory.get(), place_.events_name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
      (!S_ISREG(info.st_mode) || info.st_nlink > 1)) {
    // Never written through: what is there is taken away (a directory is left, and refused).
    if (S_ISDIR(info.st_mode)) return failf("Refusing to append to '{}': it is a directory", shown);
    if (::unlinkat(directory.get(), place_.events_name.c_str(), 0) != 0)
      return failf("Failed to remove '{}': {}", shown, errno_text(errno));
    note = fmt::format("'{}' was not a regular file of its own ({}); replaced it with a new one",
                       shown, S_ISREG(info.st_mode) ? "hard-linked" : "a link or special file");
  } else if (S_ISREG(info.st_mode) && info.st_size >= kRotateEventsBytes) {
    GL_TRY_VOID(rotate_events(directory.get(), place_.events_name, shown));
  }
  GL_TRY_VOID(writer_.append(directory.get(), place_.events_name, line, kHistoryFileMode, shown));
  return note;
}

Result<void> History::mark_unrecorded(std::string_view why) const {
  GL_TRY(auto directory, open_own_directory(place_, place_.runtime_directory));
  std::string line(why.substr(0, kMaxMarkerBytes - 1));
  std::erase(line, '\n');
  return write_atomically_at(directory.get(), place_.marker_name, line + "\n", kHistoryFileMode,
                             (place_.runtime_directory / place_.marker_name).string());
}

Result<void> History::clear_unrecorded() const {
  auto directory = open_directory_nofollow(place_.runtime_directory);
  if (!directory) return {};  // no runtime directory: no marker
  if (::unlinkat(directory->get(), place_.marker_name.c_str(), 0) != 0 && errno != ENOENT)
    return failf("Failed to remove '{}': {}",
                 (place_.runtime_directory / place_.marker_name).string(), errno_text(errno));
  return {};
}

}  // namespace gl
