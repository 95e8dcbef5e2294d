// SPDX-License-Identifier: Apache-2.0
#pragma once
// `gpulaunch run --foreground`: the whole supervision in one process, with no systemd. Each turn
// is what a unit's restart cycle does, through the same layers: supervise/start_gate decides
// whether and how the engine starts (budget, backoff, GPU memory, step-down), run/bridge runs it
// (readiness, liveness, drain), supervise/record_exit classifies and records its stop from the
// lines `run` captured (no journal) into a history the user owns, and the loop starts the next
// turn where a unit's Restart= would. A multi-node group restarts together: a rank whose engine
// failed records the stop in the group's history and ends, and the scheduler ends the others
// (srun --kill-on-bad-exit); the next step's start gate reads the same history on every rank.
// The side effects come in through ForegroundIo; tests/unit/run/foreground_test runs the loop on
// a fake.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "log/logger.hpp"
#include "profile/profile.hpp"
#include "supervise/history.hpp"
#include "supervise/policy.hpp"
#include "supervise/quarantine.hpp"
#include "supervise/record_exit.hpp"
#include "supervise/start_gate.hpp"
#include "util/timekeeper.hpp"

namespace gl {

// One engine from its start to its end, as `run` saw it.
struct EngineRun {
  int status = 0;                  // run's verdict status (supervise/exit_status)
  std::vector<std::string> lines;  // the engine's last lines and run's own, oldest first
  InvocationTimes times;           // started; READY=1 (0: never); stopped serving
  int64_t ended_usec = 0;          // the engine's end
  // `run`'s cgroup's oom_kill counter after the end (a single node's only: the group's ranks
  // share one history and each has its own counter); nullopt: unread.
  std::optional<long long> cgroup_oom_kills;
};

class ForegroundIo {
 public:
  virtual ~ForegroundIo() = default;
  // supervise/start_gate's decision for the next start, its waits cut short by a stop request.
  virtual StartGate gate(const History& history) = 0;
  // The engine under run/bridge, until it ended.
  virtual EngineRun run_engine(const StartGate& gate) = 0;
  // SIGTERM or SIGINT reached `run` (the scheduler's stop, Ctrl-C).
  virtual bool stop_requested() = 0;
  // Holds the history against the other ranks that share it while one stop is recorded.
  virtual std::shared_ptr<void> hold_history() = 0;
  virtual Timekeeper& clock() = 0;
  virtual StopActions& actions() = 0;
  // After each stop was recorded (the metrics file follows the history).
  virtual void recorded(const History& history, const StopDecision& decision) = 0;
  virtual void say(logging::Level level, const std::string& line) = 0;
};

struct ForegroundSettings {
  std::string profile;
  RestartSettings restart;
  EngineKind kind = EngineKind::command;
  size_t ranks = 1;    // nodes in the group
  long long rank = 0;  // this node's
  // The caches a crash through one may move aside (caches/quarantine's movable_caches).
  std::vector<CachePlace> caches;
};

// Why the loop ended; cli/exit_status maps each to the exit status a scheduler keys on.
enum class ForegroundEnd {
  stopped,          // drained on request, or the engine exited 0 and the policy restarts no more
  stays_down,       // a stop a requeue would repeat (a stay-down class, restart.policy = no)
  config_error,     // the engine refused its configuration: never requeue
  retry_elsewhere,  // the budget is spent, a rank of the group died, or the GPUs are held:
                    // a requeue or a fresh step may serve
};

std::string_view foreground_end_name(ForegroundEnd end);

// What a stop of class `stop` ends in, for a group of `ranks`; nullopt: restart in this process
// (the next start's gate then decides: the backoff, the budget, the step-down).
std::optional<ForegroundEnd> end_after_stop(ExitClass stop, const RestartSettings& restart,
                                            size_t ranks);
// What a start the gate refused (its supervise/exit_status code) ends in.
ForegroundEnd end_after_refused_start(int gate_status);

// The report record_exit classifies without systemd: the verdict status as systemd would hand
// it to ExecStopPost= (`run` exited with it), the captured lines, `run`'s own times.
StopInput foreground_stop_input(const EngineRun& run, const ForegroundSettings& settings);

// Runs starts until one ends the loop.
ForegroundEnd run_foreground(const ForegroundSettings& settings, const History& history,
                             ForegroundIo& io);

}  // namespace gl
