// SPDX-License-Identifier: Apache-2.0
#include "supervise/start_phases.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "supervise/exit_status.hpp"

namespace gl {
namespace {

constexpr std::string_view kStartPhase = "start phase ";
constexpr std::string_view kBegins = " begins";
constexpr std::string_view kEnds = " ends";
constexpr std::string_view kReady = " ends: ready";

// "4m12s", "1h02m", "22s": short enough for a line that lists every phase.
std::string compact(Seconds value) {
  const long long s = std::max<long long>(0, value.count());
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace

std::string phase_line(const PhaseMark& mark) {
  const std::string_view edge = mark.kind == PhaseMark::Kind::begins ? kBegins
                                : mark.kind == PhaseMark::Kind::ends ? kEnds
                                                                     : kReady;
  return fmt::format("{}{}{}{}", kRunLinePrefix, kStartPhase, start_phase_name(mark.phase), edge);
}

std::optional<PhaseMark> parse_phase_line(std::string_view line) {
  if (!line.starts_with(kRunLinePrefix)) return std::nullopt;
  line.remove_prefix(kRunLinePrefix.size());
  if (!line.starts_with(kStartPhase)) return std::nullopt;
  line.remove_prefix(kStartPhase.size());
  PhaseMark mark;
  std::string_view edge;
  for (auto [kind, text] :
       {std::pair{PhaseMark::Kind::ready, kReady}, std::pair{PhaseMark::Kind::begins, kBegins},
        std::pair{PhaseMark::Kind::ends, kEnds}})
    if (line.ends_with(text)) {
      mark.kind = kind;
      edge = text;
      break;
    }
  if (edge.empty()) return std::nullopt;
  auto phase = start_phase_from_name(line.substr(0, line.size() - edge.size()));
  if (!phase) return std::nullopt;
  mark.phase = *phase;
  return mark;
}

StartTimeline timeline_from_lines(const std::vector<TimedLine>& lines) {
  StartTimeline timeline;
  auto close_open = [&](int64_t at) {
    if (!timeline.phases.empty() && timeline.phases.back().end_usec == 0)
      timeline.phases.back().end_usec = std::max(at, timeline.phases.back().begin_usec);
  };
  for (const TimedLine& line : lines) {
    auto mark = parse_phase_line(line.text);
    if (!mark) continue;
    const int64_t at = line.realtime_usec;
    if (mark->kind == PhaseMark::Kind::begins && mark->phase == Phase::process) {
      timeline = StartTimeline{};  // a new start: the last one is what counts
      timeline.process_start_usec = at;
    }
    if (timeline.process_start_usec == 0 || timeline.ready_usec != 0) continue;
    switch (mark->kind) {
      case PhaseMark::Kind::begins:
        if (!timeline.phases.empty() && timeline.phases.back().end_usec == 0 &&
            timeline.phases.back().phase == mark->phase)
          break;  // already in it
        close_open(at);
        if (timeline.phases.size() < kMaxStartSpans)
          timeline.phases.push_back({mark->phase, at, 0});
        break;
      case PhaseMark::Kind::ends:
        if (!timeline.phases.empty() && timeline.phases.back().phase == mark->phase) close_open(at);
        break;
      case PhaseMark::Kind::ready:
        close_open(at);
        timeline.ready_usec = at;
        break;
    }
  }
  return timeline;
}

Seconds span_duration(const StartPhaseSpan& span, int64_t ready_usec) {
  const int64_t end = span.end_usec != 0 ? span.end_usec : ready_usec;
  if (end <= span.begin_usec) return Seconds{0};
  return Seconds{(end - span.begin_usec + 500'000) / 1'000'000};
}

std::string describe_start(const StartTimeline& timeline) {
  std::vector<std::pair<Phase, Seconds>> totals;
  for (const auto& span : timeline.phases) {
    auto it = std::find_if(totals.begin(), totals.end(),
                           [&](const auto& total) { return total.first == span.phase; });
    if (it == totals.end()) it = totals.insert(totals.end(), {span.phase, Seconds{0}});
    it->second += span_duration(span, timeline.ready_usec);
  }
  std::string parts;
  for (const auto& [phase, took] : totals) {
    if (phase == Phase::process && took < Seconds{1}) continue;
    if (!parts.empty()) parts += ", ";
    parts += fmt::format("{} {}", start_phase_name(phase), compact(took));
  }
  const std::string head =
      timeline.ready_usec > timeline.process_start_usec
          ? "ready in " +
                compact(Seconds{(timeline.ready_usec - timeline.process_start_usec + 500'000) /
                                1'000'000})
          : std::string("not ready");
  return parts.empty() ? head : head + ": " + parts;
}

}  // namespace gl
