#pragma once
// What happened to a profile's engine, kept in its state directory: events.jsonl (one event per
// line, appended, for `gpulaunch events`) and supervisor.json (the few numbers the next start
// decides from), replaced atomically.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "util/state_paths.hpp"

namespace gl {

struct SupervisorEvent {
  int64_t time_usec = 0;  // realtime
  std::string kind;       // an exit class name, or stable, operator-reset, step-down, residue
  std::string evidence;   // the line that decided it
  std::string action;     // what gpulaunch does about it
  int gpu_level = 0;      // step-down levels after the event
  int host_level = 0;
};

struct SupervisorState {
  long long consecutive_failures = 0;
  int gpu_level = 0;   // CUDA OOM steps taken on the memory knobs
  int host_level = 0;  // steps taken on concurrency: host OOMs, CUDA OOMs naming requests
  int64_t last_failure_usec = 0;
  int64_t last_stable_usec = 0;
  std::string last_class;
  long long cgroup_oom_kills = 0;  // the v1 memory.oom_control counter at the last stop
};

// The profile's state directory (launch_plan's state_directory): where the history lives.
inline std::filesystem::path profile_state_directory(const std::string& profile) {
  return state_paths::profile_directory(profile);
}

std::string event_to_json(const SupervisorEvent& event);

class History {
 public:
  explicit History(std::filesystem::path directory) : directory_(std::move(directory)) {}

  Result<SupervisorState> state() const;  // defaults when nothing was recorded yet
  Result<void> save(const SupervisorState& state) const;
  Result<void> append(const SupervisorEvent& event) const;
  // The last `count` events, oldest first; lines that do not parse are skipped.
  Result<std::vector<SupervisorEvent>> events(size_t count) const;
  const std::filesystem::path& directory() const { return directory_; }

 private:
  std::filesystem::path directory_;
};

}  // namespace gl
