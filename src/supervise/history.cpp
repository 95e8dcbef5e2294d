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
#include "util/safe_file.hpp"
#include "util/state_paths.hpp"
#include "util/try.hpp"

namespace gl {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxStateBytes = 64 * 1024;
constexpr size_t kMaxEventsBytes = 16 * 1024 * 1024;
// events.jsonl is renamed to events.jsonl.1 (replacing the older one) once it reaches this, well
// below the read bound: the history keeps a bounded tail and every read of it succeeds.
constexpr off_t kRotateEventsBytes = 4 * 1024 * 1024;
constexpr std::string_view kRotatedSuffix = ".1";
constexpr size_t kMaxMarkerBytes = 4096;
constexpr size_t kMaxTextBytes = 64 * 1024;  // one string field
constexpr int kMaxLevel = 1000;
constexpr mode_t kFileMode = 0644;
// supervisor.json's per-class stop counters: this prefix and the class's name.
constexpr std::string_view kStopsFieldPrefix = "stops_";

std::string stops_field(ExitClass value) {
  return std::string(kStopsFieldPrefix) + std::string(exit_class_name(value));
}

// History files are flat objects: anything nested deeper is not ours, and is refused before a
// parser sees it (whatever wrote it).
bool nested_deeper_than(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > limit) return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

Result<Json> parse_object(std::string_view text) {
  if (nested_deeper_than(text, 1)) return failf("nested deeper than a flat object");
  Json json = Json::parse(text, nullptr, false);
  if (json.is_discarded()) return failf("not JSON");
  if (!json.is_object()) return failf("not a JSON object");
  return json;
}

// Each field of its type and range when present; absent means the default.
Result<void> take_integer(const Json& json, const char* key, long long min, long long max,
                          auto& out) {
  auto it = json.find(key);
  if (it == json.end()) return {};
  long long value = 0;
  bool integer = true;
  if (it->is_number_unsigned()) {
    const auto wide = it->get<unsigned long long>();
    integer = wide <= static_cast<unsigned long long>(LLONG_MAX);
    value = static_cast<long long>(wide);
  } else if (it->is_number_integer()) {
    value = it->get<long long>();
  } else {
    integer = false;
  }
  if (!integer || value < min || value > max)
    return failf("'{}' is not an integer from {} to {}", key, min, max);
  out = static_cast<std::remove_reference_t<decltype(out)>>(value);
  return {};
}

Result<void> take_string(const Json& json, const char* key, std::string& out) {
  auto it = json.find(key);
  if (it == json.end()) return {};
  if (!it->is_string()) return failf("'{}' is not a string", key);
  if (it->get_ref<const std::string&>().size() > kMaxTextBytes)
    return failf("'{}' is longer than {} bytes", key, kMaxTextBytes);
  out = it->get<std::string>();
  return {};
}

// The flat fields a start's timeline is kept in: a prefix ("last_start_" in supervisor.json,
// none in a `started` event) and these names.
constexpr std::string_view kProcessStartField = "process_start_usec";
constexpr std::string_view kReadyField = "ready_usec";
constexpr std::string_view kPhasesField = "phases";
constexpr std::string_view kLastStartPrefix = "last_start_";
constexpr size_t kMaxSpansText = kMaxStartSpans * 48;

std::optional<int64_t> parse_usec(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() || value < 0)
    return std::nullopt;
  return value;
}

void put_timeline(Json& json, std::string_view prefix, const StartTimeline& timeline) {
  json[fmt::format("{}{}", prefix, kProcessStartField)] = timeline.process_start_usec;
  json[fmt::format("{}{}", prefix, kReadyField)] = timeline.ready_usec;
  json[fmt::format("{}{}", prefix, kPhasesField)] = start_spans_text(timeline);
}

// All three fields or none (nullopt); anything else is refused, naming the field.
Result<std::optional<StartTimeline>> take_timeline(const Json& json, std::string_view prefix) {
  const std::string process_key = fmt::format("{}{}", prefix, kProcessStartField);
  const std::string ready_key = fmt::format("{}{}", prefix, kReadyField);
  const std::string phases_key = fmt::format("{}{}", prefix, kPhasesField);
  const int present = static_cast<int>(json.contains(process_key)) +
                      static_cast<int>(json.contains(ready_key)) +
                      static_cast<int>(json.contains(phases_key));
  if (present == 0) return std::optional<StartTimeline>{};
  if (present != 3)
    return failf("'{}', '{}' and '{}' go together", process_key, ready_key, phases_key);
  int64_t process = 0, ready = 0;
  std::string spans;
  for (auto taken : {take_integer(json, process_key.c_str(), 0, LLONG_MAX, process),
                     take_integer(json, ready_key.c_str(), 0, LLONG_MAX, ready),
                     take_string(json, phases_key.c_str(), spans)})
    GL_TRY_VOID(taken);
  auto timeline = parse_start_timeline(process, ready, spans);
  if (!timeline) return failf("'{}': {}", phases_key, timeline.error().message);
  return std::optional<StartTimeline>{*timeline};
}

std::string errno_text(int error) {
  return std::strerror(error);
}

Result<void> default_replace(int directory_fd, std::string_view name, std::string_view content,
                             mode_t mode, const std::string& shown) {
  return write_atomically_at(directory_fd, name, content, mode, shown);
}

Result<void> default_append(int directory_fd, std::string_view name, std::string_view content,
                            mode_t mode, const std::string& shown) {
  return append_at(directory_fd, name, content, mode, shown);
}

std::string join_lines(const std::vector<SupervisorEvent>& events) {
  std::string text;
  for (const auto& event : events) text += event_to_json(event) + "\n";
  return text;
}

}  // namespace

std::string start_spans_text(const StartTimeline& timeline) {
  std::string text;
  for (const auto& span : timeline.phases) {
    if (!text.empty()) text += ' ';
    text += fmt::format("{}:{}-{}", start_phase_name(span.phase), span.begin_usec, span.end_usec);
  }
  return text;
}

Result<StartTimeline> parse_start_timeline(int64_t process_start_usec, int64_t ready_usec,
                                           std::string_view spans) {
  if (spans.size() > kMaxSpansText) return failf("longer than {} bytes", kMaxSpansText);
  if (process_start_usec <= 0) return failf("no process start time");
  if (ready_usec != 0 && ready_usec < process_start_usec)
    return failf("ready before the process started");
  StartTimeline timeline{process_start_usec, ready_usec, {}};
  int64_t previous = process_start_usec;
  while (!spans.empty()) {
    const size_t space = std::min(spans.find(' '), spans.size());
    const std::string_view token = spans.substr(0, space);
    spans.remove_prefix(std::min(spans.size(), space + 1));
    const size_t colon = token.find(':');
    const size_t dash = token.find('-', colon == std::string_view::npos ? 0 : colon);
    if (colon == std::string_view::npos || dash == std::string_view::npos)
      return failf("'{}' is not PHASE:BEGIN-END", token);
    auto phase = start_phase_from_name(token.substr(0, colon));
    auto begin = parse_usec(token.substr(colon + 1, dash - colon - 1));
    auto end = parse_usec(token.substr(dash + 1));
    if (!phase) return failf("'{}' names no start phase", token);
    if (!begin || !end) return failf("'{}' is not PHASE:BEGIN-END", token);
    if (*begin < previous || (*end != 0 && *end < *begin) ||
        (ready_usec != 0 && std::max(*begin, *end) > ready_usec))
      return failf("'{}' is out of order", token);
    if (timeline.phases.size() == kMaxStartSpans)
      return failf("more than {} phases", kMaxStartSpans);
    timeline.phases.push_back({*phase, *begin, *end});
    previous = std::max(*begin, *end);
  }
  return timeline;
}

std::string event_to_json(const SupervisorEvent& event) {
  Json json{{"time_usec", event.time_usec}, {"kind", event.kind},
            {"evidence", event.evidence},   {"action", event.action},
            {"gpu_level", event.gpu_level}, {"host_level", event.host_level}};
  // Only a stall has one; older readers skip the field.
  if (!event.journal_cursor.empty()) json["journal_cursor"] = event.journal_cursor;
  if (event.start) put_timeline(json, "", *event.start);
  return json.dump();
}

std::string supervisor_state_to_json(const SupervisorState& state) {
  Json json{{"consecutive_failures", state.consecutive_failures},
            {"gpu_level", state.gpu_level},
            {"host_level", state.host_level},
            {"last_failure_usec", state.last_failure_usec},
            {"last_stable_usec", state.last_stable_usec},
            {"last_class", state.last_class},
            {"cgroup_oom_kills", state.cgroup_oom_kills}};
  for (const auto& [value, count] : state.stops_by_class)
    if (count > 0) json[stops_field(value)] = count;
  if (state.last_start) put_timeline(json, kLastStartPrefix, *state.last_start);
  return json.dump(2) + "\n";
}

Result<SupervisorState> parse_supervisor_state(std::string_view text) {
  GL_TRY(auto json, parse_object(text));
  SupervisorState state;
  for (auto taken :
       {take_integer(json, "consecutive_failures", 0, LLONG_MAX, state.consecutive_failures),
        take_integer(json, "gpu_level", 0, kMaxLevel, state.gpu_level),
        take_integer(json, "host_level", 0, kMaxLevel, state.host_level),
        take_integer(json, "last_failure_usec", 0, LLONG_MAX, state.last_failure_usec),
        take_integer(json, "last_stable_usec", 0, LLONG_MAX, state.last_stable_usec),
        take_string(json, "last_class", state.last_class),
        take_integer(json, "cgroup_oom_kills", 0, LLONG_MAX, state.cgroup_oom_kills)})
    GL_TRY_VOID(taken);
  for (ExitClass value : all_exit_classes()) {
    long long count = 0;
    const std::string field = stops_field(value);
    GL_TRY_VOID(take_integer(json, field.c_str(), 0, LLONG_MAX, count));
    if (count > 0) state.stops_by_class[value] = count;
  }
  // A field with the prefix that names no class is not ours: refused, like a bad value.
  for (const auto& [key, value] : json.items())
    if (key.starts_with(kStopsFieldPrefix) &&
        !parse_exit_class(std::string_view(key).substr(kStopsFieldPrefix.size())))
      return failf("'{}' names no stop class", key);
  GL_TRY(auto last_start, take_timeline(json, kLastStartPrefix));
  state.last_start = last_start;
  return state;
}

Result<SupervisorEvent> parse_event(std::string_view line) {
  GL_TRY(auto json, parse_object(line));
  if (!json.contains("time_usec") || !json.contains("kind"))
    return failf("an event needs 'time_usec' and 'kind'");
  SupervisorEvent event;
  for (auto taken :
       {take_integer(json, "time_usec", 0, LLONG_MAX, event.time_usec),
        take_string(json, "kind", event.kind), take_string(json, "evidence", event.evidence),
        take_string(json, "action", event.action),
        take_integer(json, "gpu_level", 0, kMaxLevel, event.gpu_level),
        take_integer(json, "host_level", 0, kMaxLevel, event.host_level),
        take_string(json, "journal_cursor", event.journal_cursor)})
    GL_TRY_VOID(taken);
  GL_TRY(auto start, take_timeline(json, ""));
  event.start = start;
  return event;
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
  GL_TRY(auto read, read_regular_nofollow(path, kMaxStateBytes));
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
  GL_TRY_VOID(write_atomically_at(directory_fd, rotated, tail, kFileMode,
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
  auto directory = open_root_owned_directory(place_.directory);
  if (!directory) {
    current.problem = directory.error().message;
    return current;
  }
  const auto path = place_.directory / place_.supervisor_name;
  auto read =
      read_regular_at(directory->get(), place_.supervisor_name, kMaxStateBytes, path.string());
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
  GL_TRY_VOID(open_root_owned_directory(place_.directory));
  return {};
}

Result<void> History::save(const SupervisorState& state) const {
  GL_TRY(auto directory, open_root_owned_directory(place_.directory));
  return writer_.replace(directory.get(), place_.supervisor_name, supervisor_state_to_json(state),
                         kFileMode, (place_.directory / place_.supervisor_name).string());
}

Result<std::string> History::append(const SupervisorEvent& event) const {
  GL_TRY(auto directory, open_root_owned_directory(place_.directory));
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
  GL_TRY_VOID(writer_.append(directory.get(), place_.events_name, line, kFileMode, shown));
  return note;
}

Result<void> History::mark_unrecorded(std::string_view why) const {
  GL_TRY(auto directory, open_root_owned_directory(place_.runtime_directory));
  std::string line(why.substr(0, kMaxMarkerBytes - 1));
  std::erase(line, '\n');
  return write_atomically_at(directory.get(), place_.marker_name, line + "\n", kFileMode,
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

namespace {

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
  GL_TRY(auto state,
         read_regular_at(directory_fd, names.supervisor_name, kMaxStateBytes, state_path));
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
                                    supervisor_state_to_json(*legacy->state), kFileMode,
                                    new_shown(names.supervisor_name)));
  if (!legacy->events.empty())
    GL_TRY_VOID(write_atomically_at(staged.get(), names.events_name, join_lines(legacy->events),
                                    kFileMode, new_shown(names.events_name)));
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
