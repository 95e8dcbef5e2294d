// SPDX-License-Identifier: Apache-2.0
#include "supervise/record_start.hpp"

#include <chrono>

#include "supervise/start_phases.hpp"

namespace gl {
namespace {

constexpr int kReads = 10;
constexpr std::chrono::milliseconds kReadPause{200};

}  // namespace

StartTimeline read_start_timeline(std::string_view invocation_id, Journal* journal,
                                  Timekeeper& clock) {
  StartTimeline timeline;
  if (!journal || invocation_id.empty()) return timeline;
  for (int attempt = 0; attempt < kReads; ++attempt) {
    if (attempt > 0) clock.sleep(kReadPause);
    auto entries = journal->invocation(invocation_id);
    if (!entries) continue;
    std::vector<TimedLine> lines;
    lines.reserve(entries->size());
    for (const auto& entry : *entries)
      lines.push_back({static_cast<int64_t>(entry.realtime_usec), entry.message});
    timeline = timeline_from_lines(lines);
    if (timeline.ready_usec != 0) break;
  }
  return timeline;
}

std::optional<StartRecord> decide_start(SupervisorState state, const StartTimeline& timeline,
                                        int64_t now_usec) {
  if (timeline.process_start_usec == 0) return std::nullopt;
  StartRecord decision;
  state.last_start = timeline;
  decision.state = std::move(state);
  decision.event.time_usec = timeline.ready_usec != 0 ? timeline.ready_usec : now_usec;
  decision.event.kind = std::string(kStartedEventKind);
  decision.event.evidence = describe_start(timeline);
  decision.event.action = timeline.ready_usec != 0
                              ? "recorded the start's phases"
                              : "recorded the start's phases; its ready line was not in the "
                                "journal yet";
  decision.event.gpu_level = decision.state.gpu_level;
  decision.event.host_level = decision.state.host_level;
  decision.event.start = timeline;
  return decision;
}

}  // namespace gl
