// SPDX-License-Identifier: Apache-2.0
#include "supervise/quarantine.hpp"

#include <filesystem>

#include <fmt/core.h>

#include "catalog/journal_messages.hpp"
#include "supervise/start_timeline.hpp"

namespace gl {
namespace {

constexpr std::string_view kFramePrefix = "File \"";
constexpr std::string_view kLineInfix = "\", line ";
constexpr std::string_view kFunctionInfix = ", in ";

bool is_inside(const std::string& path, const std::string& directory) {
  return path.size() > directory.size() && path.starts_with(directory) &&
         path[directory.size()] == '/';
}

std::string normal(std::string_view path) {
  std::string text = std::filesystem::path(path).lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

}  // namespace

std::optional<TracebackFrame> parse_traceback_frame(std::string_view line) {
  const size_t start = line.find(kFramePrefix);
  if (start == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(start + kFramePrefix.size());
  // The path may itself hold `", line ` only in a name nobody makes; the last one is CPython's.
  const size_t line_at = rest.rfind(kLineInfix);
  if (line_at == std::string_view::npos || line_at == 0) return std::nullopt;
  TracebackFrame frame;
  frame.path = std::string(rest.substr(0, line_at));
  std::string_view after = rest.substr(line_at + kLineInfix.size());
  size_t digits = 0;
  while (digits < after.size() && digits < 9 && after[digits] >= '0' && after[digits] <= '9')
    frame.line = frame.line * 10 + (after[digits++] - '0');
  if (digits == 0 || !after.substr(digits).starts_with(kFunctionInfix)) return std::nullopt;
  frame.function = std::string(after.substr(digits + kFunctionInfix.size()));
  while (!frame.function.empty() && (frame.function.back() == '\r' || frame.function.back() == ' '))
    frame.function.pop_back();
  if (frame.function.empty() || frame.path.front() != '/') return std::nullopt;
  frame.text = fmt::format("File \"{}\", line {}, in {}", frame.path, frame.line, frame.function);
  return frame;
}

std::optional<QuarantineCandidate> decide_quarantine(const std::vector<std::string>& lines,
                                                     const std::vector<CachePlace>& places,
                                                     const SupervisorEvent* previous) {
  std::optional<QuarantineCandidate> found;
  for (const auto& line : lines) {
    auto frame = parse_traceback_frame(line);
    if (!frame) continue;
    const std::string path = normal(frame->path);
    const CachePlace* deepest = nullptr;
    for (const auto& place : places)
      if (is_inside(path, normal(place.directory)) &&
          (!deepest || place.directory.size() > deepest->directory.size()))
        deepest = &place;
    // Frames are printed outermost first: the last one inside a cache is nearest the error.
    if (deepest) found = QuarantineCandidate{*deepest, std::move(*frame)};
  }
  // Right after a quarantine the stop counts, whichever cache it names: the same one was rebuilt
  // and crashed again, and an engine (untrusted) naming each cache in turn must not stay outside
  // the crash-loop budget. A second poisoned cache is moved at the stop after.
  if (previous && previous->kind == kCacheQuarantinedEventKind) return std::nullopt;
  return found;
}

const SupervisorEvent* previous_stop_event(const std::vector<SupervisorEvent>& events) {
  for (auto event = events.rbegin(); event != events.rend(); ++event)
    if (event->kind != kStableMessage && event->kind != kStartedEventKind) return &*event;
  return nullptr;
}

SupervisorEvent quarantine_event(const QuarantineCandidate& candidate, std::string_view to,
                                 std::string_view restart_action, int64_t time_usec, int gpu_level,
                                 int host_level) {
  SupervisorEvent event;
  event.time_usec = time_usec;
  event.kind = std::string(kCacheQuarantinedEventKind);
  event.evidence = fmt::format("traceback runs through cache '{}': {}", candidate.cache.name,
                               candidate.frame.text);
  event.action = fmt::format("moved {} to {} (kept for inspection); {}", candidate.cache.directory,
                             to, restart_action);
  event.gpu_level = gpu_level;
  event.host_level = host_level;
  return event;
}

}  // namespace gl
