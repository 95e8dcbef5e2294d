// SPDX-License-Identifier: Apache-2.0
#include "supervise/record_stop.hpp"

#include "supervise/exit_status.hpp"

#include <chrono>

#include <fmt/core.h>

#include "supervise/stall_report.hpp"
#include "supervise/step_down.hpp"
#include "util/duration.hpp"

namespace gl {
namespace {

bool saw_run_verdict(const std::vector<std::string>& lines) {
  for (auto line = lines.rbegin(); line != lines.rend(); ++line)
    if (parse_run_verdict(*line)) return true;
  return false;
}

// The cursor of the last stall line: `run` prints it just before the SIGABRT that makes every
// engine process dump its Python threads, so the dump starts there.
std::string stall_line_cursor(const std::vector<JournalEntry>& entries) {
  for (auto entry = entries.rbegin(); entry != entries.rend(); ++entry)
    if (parse_stall_line(entry->message)) return entry->cursor;
  return {};
}

}  // namespace

std::string thread_dump_command(std::string_view unit, std::string_view cursor) {
  // Cursors are sd-journal's "s=...;i=...;b=..." (hex digits, '=' and ';'): single quotes keep
  // the shell from splitting them. --cursor= (journalctl(1), systemd 193 on) starts at the stall
  // line itself, the dump below it.
  return fmt::format("journalctl -u {} --cursor='{}'", unit, cursor);
}

std::string describe_stall(const StallReport& stall) {
  std::string seen = stall.signal == StallSignal::generate ? "generation probe unanswered"
                                                           : "token counter stopped";
  if (stall.in_flight) seen += fmt::format(", {} request(s) in flight", *stall.in_flight);
  if (stall.tokens) seen += fmt::format(", generation token counter at {}", *stall.tokens);
  return fmt::format("no forward progress for {} ({})", format_duration(stall.still_for), seen);
}

Classification classify_invocation(StopReport& report, std::string_view invocation_id,
                                   Journal* journal, Timekeeper& clock) {
  Classification result = classify_stop(report);
  for (int attempt = 0; attempt < 6 && journal && !invocation_id.empty(); ++attempt) {
    if (attempt > 0) clock.sleep(std::chrono::milliseconds(200));
    report.lines.clear();
    report.kernel_lines.clear();
    uint64_t since = 0;
    std::vector<JournalEntry> entries;
    if (auto lines = journal->invocation(invocation_id)) {
      entries = std::move(*lines);
      for (const auto& entry : entries) report.lines.push_back(entry.message);
      if (!entries.empty()) since = entries.front().realtime_usec;
    }
    if (since == 0) since = static_cast<uint64_t>(clock.now_usec() - 3600LL * 1'000'000);
    if (auto kernel = journal->kernel_since(since, kKernelOomKillMarker))
      for (const auto& entry : *kernel) report.kernel_lines.push_back(entry.message);
    result = classify_stop(report);
    if (result.stall) {
      result.journal_cursor = stall_line_cursor(entries);
      break;
    }
    // A stall's line may still be on its way, like an OOM message; the verdict follows it.
    if (result.value == ExitClass::stalled && saw_run_verdict(report.lines)) break;
    if (result.value != ExitClass::crash && result.value != ExitClass::stalled) break;
    // `run`'s own verdict is its last line, after all engine output: once it is in, only an OOM
    // kill's kernel line can still be late, and only a SIGKILL can be one.
    if (saw_run_verdict(report.lines) && !report.exit_status.ends_with("KILL") &&
        report.exit_status != "137")
      break;
  }
  return result;
}

StoppingInvocation stopping_invocation(SystemdManager* manager, const std::string& unit) {
  StoppingInvocation stopping;
  if (!manager) return stopping;
  auto status = manager->status(unit);
  if (!status) return stopping;
  stopping.times.main_start_usec = static_cast<int64_t>(status->main_start_usec);
  stopping.times.active_enter_usec = static_cast<int64_t>(status->active_enter_usec);
  stopping.times.active_exit_usec = static_cast<int64_t>(status->active_exit_usec);
  stopping.main_exit_usec = static_cast<int64_t>(status->main_exit_usec);
  return stopping;
}

int64_t StoppingInvocation::ended_at(int64_t now_usec) const {
  // Only an exit of this invocation's `run` (after its start) that is not in the future.
  if (main_exit_usec <= 0 || main_exit_usec < times.main_start_usec || main_exit_usec > now_usec)
    return now_usec;
  return main_exit_usec;
}

StopDecision decide_stop(SupervisorState state, StopInput input, SystemdManager* manager,
                         Journal* journal, Timekeeper& clock) {
  StopDecision decision;
  StopReport& report = input.report;
  if (input.cgroup_oom_kills) {
    const long long kills = *input.cgroup_oom_kills;
    // A counter below the recorded one is a new cgroup (a reboot): every kill in it is new.
    const long long before = kills >= state.cgroup_oom_kills ? state.cgroup_oom_kills : 0;
    if (kills > before)
      report.cgroup_oom_kill =
          fmt::format("memory cgroup oom_kill counter {} -> {}", before, kills);
    state.cgroup_oom_kills = kills;
  }
  decision.stop = classify_invocation(report, input.invocation_id, journal, clock);
  const int64_t now = clock.now_usec();
  // Serving for restart.stable_after forgives what came before, whatever ended it (a failure,
  // `gpulaunch down`): root decides it here, from systemd's own timestamps.
  const StoppingInvocation stopping =
      input.invocation ? *input.invocation : stopping_invocation(manager, report.unit);
  const Seconds served = served_for(stopping.times, state, now);
  if (auto stable = stable_service(state, served, input.restart, now)) {
    state = stable->state;
    decision.stable_action = stable->event.action;
    decision.events.push_back(std::move(stable->event));
  }
  decision.uncounted = state;
  if (decision.stop.value == ExitClass::crash && !input.events_unreadable)
    decision.quarantine = decide_quarantine(report.lines, input.caches,
                                            input.previous_stop ? &*input.previous_stop : nullptr);
  // The next start's delay counts from the engine's end, not from this decision: the journal
  // reads above, the history writes after, systemd's RestartSec= and the next start's own set-up
  // all spend part of it (supervise/start_gate), instead of coming on top of it. Whether it
  // served past restart.probation decides whether the stop counts toward the budget.
  auto outcome = after_stop(state, decision.stop, input.restart, stopping.ended_at(now),
                            max_gpu_level(input.kind), max_host_level(input.kind),
                            served_since_ready(stopping.times, now));
  decision.keeps_dying = outcome.keeps_dying;
  decision.state = outcome.state;
  ++decision.state.stops_by_class[decision.stop.value];  // every stop counts, never forgiven
  decision.events.push_back(SupervisorEvent{now, std::string(exit_class_name(decision.stop.value)),
                                            decision.stop.evidence, outcome.action,
                                            outcome.state.gpu_level, outcome.state.host_level,
                                            decision.stop.journal_cursor});
  if (input.events_unreadable)
    decision.events.back().action +=
        fmt::format("; counted, no cache moved aside: the event history could not be read ({})",
                    *input.events_unreadable);
  return decision;
}

void apply_quarantine(StopDecision& decision, std::string_view moved_to,
                      const RestartSettings& restart) {
  if (!decision.quarantine) return;
  decision.state = decision.uncounted;
  decision.keeps_dying = false;
  const SupervisorEvent& stop = decision.events.back();
  // Earlier failures of other causes still count: their backoff stays.
  const Seconds delay = backoff_delay(decision.state.consecutive_failures, restart);
  const std::string next =
      restart.policy == "no"
          ? "stay down: restart.policy = no"
          : fmt::format(
                "restart {}, not counted toward the crash-loop budget (the next stop counts)",
                delay.count() == 0 ? "at once" : "after " + format_duration(delay));
  decision.events.back() = quarantine_event(*decision.quarantine, moved_to, next, stop.time_usec,
                                            decision.state.gpu_level, decision.state.host_level);
}

void note_quarantine_failed(StopDecision& decision, std::string_view why) {
  if (!decision.quarantine) return;
  decision.events.back().action +=
      fmt::format("; cache '{}' not moved aside: {}", decision.quarantine->cache.name, why);
  decision.quarantine.reset();
}

void StopRecord::save(const SupervisorState& state) {
  if (auto saved = history_.save(state); !saved) failures_.push_back(saved.error().message);
}

std::vector<std::string> StopRecord::finish(const std::vector<SupervisorEvent>& events) {
  std::vector<std::string> lines;
  for (const auto& each : events) {
    auto appended = history_.append(each);
    if (!appended)
      failures_.push_back(appended.error().message);
    else if (!appended->empty())
      lines.push_back(*appended);
  }
  if (!failures_.empty()) {
    lines.insert(lines.end(), failures_.begin(), failures_.end());
    if (auto marked = history_.mark_unrecorded(failures_.front()); !marked)
      lines.push_back(marked.error().message);
  } else if (auto cleared = history_.clear_unrecorded(); !cleared) {
    lines.push_back(cleared.error().message);
  }
  return lines;
}

}  // namespace gl
