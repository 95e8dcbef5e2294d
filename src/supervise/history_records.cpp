// SPDX-License-Identifier: Apache-2.0
#include "supervise/history_records.hpp"

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

constexpr size_t kMaxTextBytes = 64 * 1024;  // one string field
constexpr int kMaxLevel = 1000;
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
            {"failures_at_last_serve", state.failures_at_last_serve},
            {"deaths_after_serving", state.deaths_after_serving},
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
        take_integer(json, "failures_at_last_serve", 0, LLONG_MAX, state.failures_at_last_serve),
        take_integer(json, "deaths_after_serving", 0, LLONG_MAX, state.deaths_after_serving),
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

}  // namespace gl
