// SPDX-License-Identifier: Apache-2.0
#pragma once
// `up`'s rollback, as `podman auto-update` does it: when a changed unit does not become ready,
// the previous unit file and profile snapshot go back, the manager reloads, the failed version's
// stops stop counting (its crash-loop budget starts afresh, a rolled-back event says why), and
// the previous version runs again if it ran before. The manager, clock and history come in;
// cli/ prints.

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "supervise/history.hpp"
#include "systemd/manager.hpp"
#include "util/error.hpp"
#include "util/timekeeper.hpp"

namespace gl {

// What a changed `up` replaced.
struct PreviousUnit {
  std::string unit_text;      // the unit file as it was
  std::string snapshot_text;  // the profile snapshot `run` read ("" when there was none)
  bool was_running = false;
  std::string failure;  // why the changed unit did not become ready, for the event
};

struct RollbackPlaces {
  std::string unit;  // gpulaunch-NAME.service
  std::filesystem::path unit_file;
  std::filesystem::path snapshot;
};

struct Rollback {
  bool restarted = false;  // the previous unit runs again; false: left stopped, as it was
  std::chrono::milliseconds ready_after{0};
  // History writes that failed: the rollback itself went on.
  std::vector<std::string> warnings;
};

// An error names the step that failed ("the previous unit did not become ready either: ...").
Result<Rollback> roll_back(SystemdManager& manager, Timekeeper& clock, const History& history,
                           const RollbackPlaces& places, const PreviousUnit& previous,
                           std::chrono::seconds limit);

}  // namespace gl
