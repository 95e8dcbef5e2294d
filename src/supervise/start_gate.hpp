// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `run` decides before it starts the engine: stay down while the crash-loop budget is spent
// (or a stop went unrecorded), back off after failures, wait, bounded, for other processes to
// release the GPUs' memory, and step the memory and concurrency knobs down after OOMs. The side
// effects come in as interfaces (notifier, clock, the GPUs' compute processes); the lines for the
// journal go to `say`, which cli/ prints.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "facts/gpu_probe.hpp"
#include "profile/profile.hpp"
#include "supervise/history.hpp"
#include "systemd/notify.hpp"
#include "util/error.hpp"
#include "util/timekeeper.hpp"

namespace gl {

// How long a start waits for other processes to release the GPUs' memory: leftover workers of
// an earlier engine (or anyone else) holding it would make the start run out of memory.
inline constexpr std::chrono::seconds kResidueWait{60};

struct GpuHolders {
  // Compute processes on the unit's GPUs; an error when NVML cannot say (nothing to wait for).
  std::function<Result<std::vector<GpuProcessUse>>()> list;
  std::function<std::string(unsigned pid)> name_of;  // for the log; "?" when unknown
  unsigned own_pid = 0;                              // `run` itself: never residue
  // The unit's GPUs and the model's split over them, asked only for a step-down: the engine's
  // defaults on them are the step-down's baseline. Unset: unknown GPUs.
  std::function<GpuContext()> describe;
};

struct StartGateIo {
  Notifier& notifier;
  Timekeeper& clock;
  GpuHolders gpus;
  std::function<void(const std::string&)> say;  // one line for the journal
  // A line that reports an event of a kind catalog/journal_messages lists (kBackOffMessage,
  // kStepDownMessage, kCrashLoopStopMessage); `say` takes it where this is unset.
  std::function<void(std::string_view kind, const std::string&)> event{};
};

struct StartGateInput {
  std::string profile;
  RestartSettings restart;
  EngineKind kind = EngineKind::command;
  long long ready_timeout_s = 1200;  // run's --ready-timeout: the start job's timeout is extended
  std::vector<std::string> argv;     // the engine's command line
  // The release the argv was built for (`run`'s --engine-version); nullopt: unknown.
  std::optional<std::string> engine_version = std::nullopt;
  // What the crash-loop stop says to do once the cause is fixed; empty: `gpulaunch restart NAME`
  // (a unit's). `run --foreground` names its own history.
  std::string try_again = {};
};

struct StartGate {
  std::optional<int> exit_code;   // set: the engine must not start; `run` exits with it
  std::vector<std::string> argv;  // the engine's command line, stepped down where it must be
  Seconds stable_after{0};
  // What `run` says once the engine served stable_after; empty when there is nothing to forgive.
  std::string stable_message;
};

// `history` is read only (`run` is the service user); a history it cannot trust decides
// conservatively (policy's decide_start_without_history).
StartGate gate_start(const StartGateInput& input, const History& history, StartGateIo& io);

}  // namespace gl
