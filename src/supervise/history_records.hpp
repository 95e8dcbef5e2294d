// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the history holds, one event per line of events.jsonl and the state in supervisor.json,
// and their JSON: written flat, read back strictly (every field of its type and range, nothing
// nested), whoever wrote the file.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "supervise/exit_class.hpp"
#include "supervise/start_timeline.hpp"
#include "util/error.hpp"

namespace gl {

struct SupervisorEvent {
  int64_t time_usec = 0;  // realtime
  std::string kind;       // an exit class name, or stable, operator-reset, step-down, residue
  std::string evidence;   // the line that decided it
  std::string action;     // what gpulaunch does about it
  int gpu_level = 0;      // step-down levels after the event
  int host_level = 0;
  // A stall: the journal cursor of `run`'s stall line (the evidence), where the thread dump
  // starts; empty otherwise ({}: the events written before it need not name it).
  std::string journal_cursor{};
  // A `started` event (kStartedEventKind): the start's phases; nullopt for every other kind.
  std::optional<StartTimeline> start{};
};

struct SupervisorState {
  // Failures in a row since the engine last served restart.stable_after (or an operator's
  // reset): every crash-class stop, whether it served or not; the backoff grows with it.
  long long consecutive_failures = 0;
  // consecutive_failures when a start last served past restart.probation: the failures after
  // it are the starts in a row that failed to serve, which restart.budget counts (policy's
  // failed_starts). 0 in a history written before it: every failure counts, as it did then.
  long long failures_at_last_serve = 0;
  // Deaths after serving past restart.probation since the engine last served stable_after: a
  // service that keeps dying, restarted anyway (the gpulaunch_deaths_after_serving gauge).
  long long deaths_after_serving = 0;
  int gpu_level = 0;   // CUDA OOM steps taken on the memory knobs
  int host_level = 0;  // steps taken on concurrency: host OOMs, CUDA OOMs naming requests
  int64_t last_failure_usec = 0;
  int64_t last_stable_usec = 0;
  std::string last_class;
  long long cgroup_oom_kills = 0;  // the v1 memory.oom_control counter at the last stop
  // Every stop record-exit classified, by class, since the history began: never reset (the
  // metrics' counter, which must survive restarts and reboots). Kept flat, one field per class
  // that has stops: "stops_cuda-oom": 2.
  std::map<ExitClass, long long> stops_by_class{};
  // The phases of the last start that became ready (written by the start's record, read by
  // `status` and the metrics); nullopt before the first.
  std::optional<StartTimeline> last_start{};
};

// A start's timeline in the flat history files: its process and ready times as integers, its
// spans as one string, "weights:1764600000000000-1764600100000000 health:...-..." (at most
// kMaxStartSpans, in order, within the start; an open span ends at 0).
std::string start_spans_text(const StartTimeline& timeline);
Result<StartTimeline> parse_start_timeline(int64_t process_start_usec, int64_t ready_usec,
                                           std::string_view spans);

std::string event_to_json(const SupervisorEvent& event);
std::string supervisor_state_to_json(const SupervisorState& state);
// Strict: a JSON object (nested at most a level), each known field of its type and range; the
// error names the field ("'consecutive_failures' is not a non-negative integer").
Result<SupervisorState> parse_supervisor_state(std::string_view text);
Result<SupervisorEvent> parse_event(std::string_view line);

}  // namespace gl
